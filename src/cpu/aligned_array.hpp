#pragma once
// Internal: uninitialised arrays for the CPU algorithms' large scratch buffers.
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace joinery::detail::cpu {

/// Uninitialised, cache-line aligned array. Large ones are 2 MiB aligned and advised onto
/// transparent huge pages: first touch then faults once per 2 MiB instead of per 4 KiB, and
/// scatters into many partitions miss the TLB far less.
template <class T>
class aligned_array {
 public:
  static constexpr std::size_t line_bytes = 64;
  static constexpr std::size_t huge_bytes = std::size_t{2} << 20;

  aligned_array() = default;
  explicit aligned_array(std::size_t n) {
    if (n == 0) { return; }
    std::size_t const want = n * sizeof(T);
    std::size_t const align = want >= huge_bytes ? huge_bytes : line_bytes;
    std::size_t const bytes = (want + align - 1) / align * align;
    p_ = static_cast<T*>(std::aligned_alloc(align, bytes));
    if (p_ == nullptr) { throw std::bad_alloc(); }
#if defined(MADV_HUGEPAGE)
    if (align == huge_bytes) { ::madvise(p_, bytes, MADV_HUGEPAGE); }
#endif
  }
  aligned_array(aligned_array&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  aligned_array& operator=(aligned_array&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  aligned_array(aligned_array const&) = delete;
  aligned_array& operator=(aligned_array const&) = delete;
  ~aligned_array() { std::free(p_); }

  [[nodiscard]] T* get() const noexcept { return p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  void reset() noexcept {
    std::free(p_);
    p_ = nullptr;
  }
  friend void swap(aligned_array& x, aligned_array& y) noexcept { std::swap(x.p_, y.p_); }

 private:
  T* p_ = nullptr;
};

}  // namespace joinery::detail::cpu
