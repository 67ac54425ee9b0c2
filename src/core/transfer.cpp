// Staged host <-> device copies: pageable memory through pinned buffers, host copies and DMA
// overlapped chunk by chunk.
#include "core/transfer.hpp"

#include <joinery/error.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <vector>

#include <omp.h>

#if defined(JOINERY_HAS_CUDA)
#include "core/cuda_try.hpp"

#include <cuda_runtime_api.h>
#endif

namespace joinery::detail {

namespace {
/// Parallel copies running now: concurrent ones (a streamed join's upload thread and its result
/// download) share the host's threads instead of oversubscribing them.
std::atomic<int> active_copies{0};
}  // namespace

void parallel_memcpy(void* dst, void const* src, std::size_t bytes) {
  transfer_policy const policy;
  struct active {
    int others = active_copies.fetch_add(1);
    ~active() { active_copies.fetch_sub(1); }
  } const me;
  int const threads = std::max(1, omp_get_max_threads() / (me.others + 1));
  if (bytes < policy.min_parallel_bytes || threads <= 1 || omp_in_parallel()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  // Pieces of whole cache lines, at least 256 KiB each.
  std::size_t const piece =
    std::max<std::size_t>(std::size_t{256} << 10, (bytes / static_cast<std::size_t>(threads) + 63) / 64 * 64);
  auto const pieces = static_cast<std::int64_t>((bytes + piece - 1) / piece);
  auto* d = static_cast<unsigned char*>(dst);
  auto const* s = static_cast<unsigned char const*>(src);
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(std::min<std::int64_t>(threads, pieces)))
  for (std::int64_t i = 0; i < pieces; ++i) {
    auto const off = static_cast<std::size_t>(i) * piece;
    std::memcpy(d + off, s + off, std::min(piece, bytes - off));
  }
}

#if defined(JOINERY_HAS_CUDA)
namespace {

/// A set of pinned staging buffers with one event each (the buffer is free again once its
/// event completes).
struct staging_set {
  std::vector<void*> buffers;
  std::vector<cudaEvent_t> events;
  std::size_t chunk_bytes = 0;
  int device = 0;  // events belong to one device: a set serves copies on that device's streams

  explicit staging_set(transfer_policy const& policy) : chunk_bytes(policy.chunk_bytes) {
    JOINERY_CUDA_TRY(cudaGetDevice(&device));
    try {
      for (int i = 0; i < policy.buffers; ++i) {
        void* p = nullptr;
        auto const err = cudaHostAlloc(&p, chunk_bytes, cudaHostAllocPortable);
        if (err != cudaSuccess) {
          (void)cudaGetLastError();
          throw out_of_memory("cannot allocate " + std::to_string(chunk_bytes) +
                              " bytes of pinned staging memory: " + cudaGetErrorString(err));
        }
        buffers.push_back(p);
        cudaEvent_t e{};
        JOINERY_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        events.push_back(e);
      }
    } catch (...) {
      release();
      throw;
    }
  }
  staging_set(staging_set const&) = delete;
  staging_set& operator=(staging_set const&) = delete;
  ~staging_set() { release(); }

  void release() noexcept {
    for (auto* p : buffers) { (void)cudaFreeHost(p); }
    for (auto e : events) { (void)cudaEventDestroy(e); }
    buffers.clear();
    events.clear();
  }
};

/// Process-wide cache of staging sets: concurrent copies (e.g. a streamed join's upload thread
/// and its result download) each take their own set.
class staging_pool {
 public:
  std::unique_ptr<staging_set> acquire(transfer_policy const& policy) {
    int device = 0;
    JOINERY_CUDA_TRY(cudaGetDevice(&device));
    {
      std::lock_guard lock(mutex_);
      for (auto it = free_.rbegin(); it != free_.rend(); ++it) {
        if ((*it)->device == device) {
          auto s = std::move(*it);
          free_.erase(std::next(it).base());
          return s;
        }
      }
    }
    return std::make_unique<staging_set>(policy);
  }
  void give_back(std::unique_ptr<staging_set> s) {
    std::lock_guard lock(mutex_);
    if (free_.size() < kept_sets) { free_.push_back(std::move(s)); }
  }

 private:
  static constexpr std::size_t kept_sets = 8;
  std::mutex mutex_;
  std::vector<std::unique_ptr<staging_set>> free_;
};

staging_pool& pool() {
  static auto* p = new staging_pool;  // never destroyed: pinned frees after CUDA teardown fail
  return *p;
}

/// Returns the set to the pool once every copy through it has completed.
class staging_lease {
 public:
  explicit staging_lease(transfer_policy const& policy) : set_(pool().acquire(policy)) {}
  staging_lease(staging_lease const&) = delete;
  staging_lease& operator=(staging_lease const&) = delete;
  ~staging_lease() {
    bool idle = true;
    for (auto e : set_->events) { idle = idle && cudaEventSynchronize(e) == cudaSuccess; }
    if (idle) {
      pool().give_back(std::move(set_));
    } else {
      (void)cudaGetLastError();  // a failed copy: drop the set rather than reuse it
    }
  }
  staging_set& operator*() noexcept { return *set_; }
  staging_set* operator->() noexcept { return set_.get(); }

 private:
  std::unique_ptr<staging_set> set_;
};

void staged_upload(std::vector<copy_segment> const& segments, cudaStream_t s,
                   transfer_policy const& policy) {
  staging_lease set(policy);
  auto const slots = set->buffers.size();
  std::size_t k = 0;
  for (auto const& seg : segments) {
    auto* d = static_cast<unsigned char*>(seg.dst);
    auto const* h = static_cast<unsigned char const*>(seg.src);
    for (std::size_t off = 0; off < seg.bytes; off += set->chunk_bytes, ++k) {
      auto const len = std::min(set->chunk_bytes, seg.bytes - off);
      auto const slot = k % slots;
      // The buffer's previous piece must have left before it is overwritten.
      JOINERY_CUDA_TRY(cudaEventSynchronize(set->events[slot]));
      parallel_memcpy(set->buffers[slot], h + off, len);
      JOINERY_CUDA_TRY(
        cudaMemcpyAsync(d + off, set->buffers[slot], len, cudaMemcpyHostToDevice, s));
      JOINERY_CUDA_TRY(cudaEventRecord(set->events[slot], s));
    }
  }
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
}

void staged_download(void* dst, void const* src, std::size_t bytes, cudaStream_t s,
                     transfer_policy const& policy) {
  staging_lease set(policy);
  auto const slots = set->buffers.size();
  auto const chunk = set->chunk_bytes;
  auto* h = static_cast<unsigned char*>(dst);
  auto const* d = static_cast<unsigned char const*>(src);
  auto const chunks = (bytes + chunk - 1) / chunk;
  auto issue = [&](std::size_t k) {
    auto const off = k * chunk;
    auto const slot = k % slots;
    JOINERY_CUDA_TRY(cudaMemcpyAsync(set->buffers[slot], d + off, std::min(chunk, bytes - off),
                                     cudaMemcpyDeviceToHost, s));
    JOINERY_CUDA_TRY(cudaEventRecord(set->events[slot], s));
  };
  // Up to `slots` chunks on the link ahead of the host copy out.
  for (std::size_t k = 0; k < std::min(chunks, slots); ++k) { issue(k); }
  for (std::size_t k = 0; k < chunks; ++k) {
    auto const off = k * chunk;
    auto const slot = k % slots;
    JOINERY_CUDA_TRY(cudaEventSynchronize(set->events[slot]));
    parallel_memcpy(h + off, set->buffers[slot], std::min(chunk, bytes - off));
    if (k + slots < chunks) { issue(k + slots); }
  }
}

}  // namespace

void fill_device_bytes(void* dst, std::uint8_t value, std::size_t bytes, stream_ref stream) {
  if (bytes == 0) { return; }
  auto const s = static_cast<cudaStream_t>(stream.handle());
  JOINERY_CUDA_TRY(cudaMemsetAsync(dst, value, bytes, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
}

void host_device_copy(void* dst, memory_space dst_space, void const* src, memory_space src_space,
                      std::size_t bytes, stream_ref stream) {
  JOINERY_EXPECTS((dst_space == memory_space::device) != (src_space == memory_space::device),
                  "host_device_copy needs exactly one device side");
  if (bytes == 0) { return; }
  transfer_policy const policy;
  auto const s = static_cast<cudaStream_t>(stream.handle());
  bool const upload = dst_space == memory_space::device;
  auto const host_space = upload ? src_space : dst_space;
  if (host_space == memory_space::host && bytes >= policy.min_staged_bytes) {
    if (upload) {
      staged_upload({{dst, src, bytes}}, s, policy);
    } else {
      staged_download(dst, src, bytes, s, policy);
    }
    return;
  }
  JOINERY_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
}
void upload_segments(std::vector<copy_segment> const& segments, memory_space src_space,
                     stream_ref stream) {
  JOINERY_EXPECTS(host_accessible(src_space), "upload_segments copies from host memory");
  auto const s = static_cast<cudaStream_t>(stream.handle());
  std::size_t total = 0;
  for (auto const& seg : segments) { total += seg.bytes; }
  transfer_policy const policy;
  if (src_space == memory_space::host && total >= policy.min_staged_bytes) {
    staged_upload(segments, s, policy);
    return;
  }
  for (auto const& seg : segments) {
    if (seg.bytes > 0) {
      JOINERY_CUDA_TRY(cudaMemcpyAsync(seg.dst, seg.src, seg.bytes, cudaMemcpyHostToDevice, s));
    }
  }
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
}
#else
void upload_segments(std::vector<copy_segment> const&, memory_space, stream_ref) {
  JOINERY_FAIL("copying to device memory needs the GPU backend, but joinery was built without CUDA");
}
void host_device_copy(void*, memory_space, void const*, memory_space, std::size_t, stream_ref) {
  JOINERY_FAIL("copying device memory needs the GPU backend, but joinery was built without CUDA");
}

void fill_device_bytes(void*, std::uint8_t, std::size_t, stream_ref) {
  JOINERY_FAIL("filling device memory needs the GPU backend, but joinery was built without CUDA");
}
#endif

}  // namespace joinery::detail
