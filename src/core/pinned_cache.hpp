#pragma once
// Internal, host-only: a process-wide cache of pinned host buffers.
#include <joinery/memory.hpp>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace joinery::detail {

/// Pinned host buffers kept for the process once made: page-locking costs about 0.5 s per GiB
/// (measured on the H200 host), several times what the link moves in that time, so later joins
/// reuse the buffers of earlier ones. At most `max_idle` buffers wait; the smallest go first.
class pinned_cache {
 public:
  /// A buffer of at least `bytes` bytes, handed back to the cache when the lease ends.
  class lease {
   public:
    lease() = default;
    lease(lease&& o) noexcept : buffer_(std::move(o.buffer_)), cache_(o.cache_) { o.cache_ = nullptr; }
    lease& operator=(lease&& o) noexcept {
      release();
      buffer_ = std::move(o.buffer_);
      cache_ = o.cache_;
      o.cache_ = nullptr;
      return *this;
    }
    lease(lease const&) = delete;
    lease& operator=(lease const&) = delete;
    ~lease() { release(); }
    [[nodiscard]] void* data() noexcept { return buffer_.data(); }
    [[nodiscard]] void const* data() const noexcept { return buffer_.data(); }

   private:
    friend class pinned_cache;
    lease(buffer&& b, pinned_cache* c) : buffer_(std::move(b)), cache_(c) {}
    void release() noexcept {
      if (cache_ != nullptr && buffer_.size() > 0) { cache_->give_back(std::move(buffer_)); }
      cache_ = nullptr;
    }
    buffer buffer_;
    pinned_cache* cache_ = nullptr;
  };

  static pinned_cache& instance() {
    static pinned_cache cache;
    return cache;
  }

  lease take(std::size_t bytes, stream_ref stream) {
    if (bytes == 0) { return {}; }
    {
      std::lock_guard lock(mutex_);
      auto best = idle_.end();
      for (auto it = idle_.begin(); it != idle_.end(); ++it) {
        if (it->size() >= bytes && (best == idle_.end() || it->size() < best->size())) { best = it; }
      }
      if (best != idle_.end()) {
        buffer b = std::move(*best);
        idle_.erase(best);
        return {std::move(b), this};
      }
    }
    return {buffer(bytes, pinned_host_resource(), stream), this};
  }

 private:
  void give_back(buffer&& b) noexcept {
    try {
      std::lock_guard lock(mutex_);
      idle_.push_back(std::move(b));
      if (idle_.size() > max_idle) {
        auto smallest = std::min_element(idle_.begin(), idle_.end(), [](auto const& x, auto const& y) {
          return x.size() < y.size();
        });
        idle_.erase(smallest);
      }
    } catch (...) {  // nothing to do: the buffer frees itself
    }
  }
  static constexpr std::size_t max_idle = 4;
  std::mutex mutex_;
  std::vector<buffer> idle_;
};

}  // namespace joinery::detail
