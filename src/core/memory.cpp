// Memory resources, streams, copies, device facts and NVTX ranges.
#include <joinery/memory.hpp>

#include "core/transfer.hpp"

#include <cstdlib>
#include <sys/mman.h>
#include <cstring>
#include <new>
#include <string>

#if defined(JOINERY_HAS_CUDA)
#include "core/cuda_try.hpp"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#endif

namespace joinery {

std::string_view to_string(memory_space s) noexcept {
  switch (s) {
    case memory_space::host: return "host";
    case memory_space::pinned_host: return "pinned_host";
    case memory_space::device: return "device";
  }
  return "unknown";
}

bool built_with_cuda() noexcept {
#if defined(JOINERY_HAS_CUDA)
  return true;
#else
  return false;
#endif
}

namespace {

#if !defined(JOINERY_HAS_CUDA)
[[noreturn]] void no_cuda(char const* what) {
  JOINERY_FAIL(std::string(what) + " needs the GPU backend, but joinery was built without CUDA");
}
#endif

/// Aligned to 64 bytes (a cache line) so vectorised CPU code and file readers can rely on it.
class host_memory_resource final : public memory_resource {
 public:
  [[nodiscard]] memory_space space() const noexcept override { return memory_space::host; }

 private:
  void* do_allocate(std::size_t bytes, stream_ref) override {
    if (bytes == 0) { return nullptr; }
    // Large buffers in transparent huge pages where the kernel offers them: a result written
    // into fresh memory faults once per 2 MiB instead of once per 4 KiB.
    constexpr std::size_t huge = std::size_t{2} << 20;
    if (bytes >= 16 * huge) {
      void* p = std::aligned_alloc(huge, (bytes + huge - 1) / huge * huge);
      if (p == nullptr) {
        throw out_of_memory("cannot allocate " + std::to_string(bytes) + " bytes of host memory");
      }
#if defined(MADV_HUGEPAGE)
      (void)madvise(p, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);
#endif
      return p;
    }
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (p == nullptr) {
      throw out_of_memory("cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    }
    return p;
  }
  void do_deallocate(void* p, std::size_t, stream_ref) noexcept override { std::free(p); }
};

#if defined(JOINERY_HAS_CUDA)
class pinned_memory_resource final : public memory_resource {
 public:
  [[nodiscard]] memory_space space() const noexcept override { return memory_space::pinned_host; }

 private:
  void* do_allocate(std::size_t bytes, stream_ref) override {
    if (bytes == 0) { return nullptr; }
    void* p = nullptr;
    if (cudaMallocHost(&p, bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      throw out_of_memory("cannot allocate " + std::to_string(bytes) + " bytes of pinned memory");
    }
    return p;
  }
  void do_deallocate(void* p, std::size_t, stream_ref) noexcept override {
    if (p != nullptr) { (void)cudaFreeHost(p); }
  }
};

/// CUDA's stream-ordered allocator on the current device's default pool. The pool keeps freed
/// memory (release threshold = all) so repeated joins do not return to the driver.
class device_pool_resource final : public memory_resource {
 public:
  /// Allocations come from the pool of the stream's device, so every device's pool keeps its
  /// memory (the multi-GPU joins allocate on several).
  device_pool_resource() {
    int devices = 0;
    JOINERY_CUDA_TRY(cudaGetDeviceCount(&devices));
    for (int dev = 0; dev < devices; ++dev) {
      cudaMemPool_t pool{};
      JOINERY_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, dev));
      std::uint64_t threshold = UINT64_MAX;
      JOINERY_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    }
  }
  [[nodiscard]] memory_space space() const noexcept override { return memory_space::device; }

 private:
  void* do_allocate(std::size_t bytes, stream_ref stream) override {
    if (bytes == 0) { return nullptr; }
    void* p = nullptr;
    auto const err = cudaMallocAsync(&p, bytes, static_cast<cudaStream_t>(stream.handle()));
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      throw out_of_memory("cannot allocate " + std::to_string(bytes) +
                          " bytes of device memory: " + cudaGetErrorString(err));
    }
    return p;
  }
  void do_deallocate(void* p, std::size_t, stream_ref stream) noexcept override {
    if (p != nullptr) { (void)cudaFreeAsync(p, static_cast<cudaStream_t>(stream.handle())); }
  }
};
#endif

}  // namespace

memory_resource* host_resource() {
  static host_memory_resource r;
  return &r;
}

memory_resource* pinned_host_resource() {
#if defined(JOINERY_HAS_CUDA)
  static pinned_memory_resource r;
  return &r;
#else
  no_cuda("pinned host memory");
#endif
}

memory_resource* device_resource() {
#if defined(JOINERY_HAS_CUDA)
  JOINERY_EXPECTS(device_count() > 0, "device memory requested but no GPU is present");
  static device_pool_resource r;
  return &r;
#else
  no_cuda("device memory");
#endif
}

memory_resource* resource_for(memory_space s) {
  switch (s) {
    case memory_space::host: return host_resource();
    case memory_space::pinned_host: return pinned_host_resource();
    case memory_space::device: return device_resource();
  }
  JOINERY_FAIL("unknown memory space");
}

buffer::buffer(std::size_t bytes, memory_resource* mr, stream_ref stream)
    : bytes_(bytes), mr_(mr), stream_(stream) {
  JOINERY_EXPECTS(mr != nullptr, "buffer needs a memory resource");
  data_ = mr->allocate(bytes, stream);
}

buffer::~buffer() {
  if (mr_ != nullptr && data_ != nullptr) { mr_->deallocate(data_, bytes_, stream_); }
}

void copy_bytes(void* dst, memory_space dst_space, void const* src, memory_space src_space,
                std::size_t bytes, stream_ref stream) {
  if (bytes == 0) { return; }
  JOINERY_EXPECTS(dst != nullptr && src != nullptr, "copy_bytes needs non-null pointers");
  if (host_accessible(dst_space) && host_accessible(src_space)) {
    detail::parallel_memcpy(dst, src, bytes);
    return;
  }
  if (dst_space != src_space) {  // pageable sides are staged through pinned buffers
    detail::host_device_copy(dst, dst_space, src, src_space, bytes, stream);
    return;
  }
#if defined(JOINERY_HAS_CUDA)
  auto const s = static_cast<cudaStream_t>(stream.handle());
  JOINERY_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
  // A host side must not be read or freed before the copy lands.
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
#else
  (void)stream;
  no_cuda("copying device memory");
#endif
}

namespace detail {

void copy_strided(void* dst, std::size_t dst_pitch, void const* src, std::size_t src_pitch,
                  std::size_t width, std::size_t rows, memory_space space, stream_ref stream) {
  if (rows == 0) { return; }
  JOINERY_EXPECTS(dst != nullptr && src != nullptr, "copy_strided needs non-null pointers");
  if (host_accessible(space)) {
    auto* d = static_cast<char*>(dst);
    auto const* s = static_cast<char const*>(src);
    auto const n = static_cast<std::int64_t>(rows);
#pragma omp parallel for schedule(static) if (n > 65536)
    for (std::int64_t i = 0; i < n; ++i) {
      std::memcpy(d + static_cast<std::size_t>(i) * dst_pitch,
                  s + static_cast<std::size_t>(i) * src_pitch, width);
    }
    return;
  }
#if defined(JOINERY_HAS_CUDA)
  auto const s = static_cast<cudaStream_t>(stream.handle());
  JOINERY_CUDA_TRY(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows,
                                     cudaMemcpyDeviceToDevice, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
#else
  (void)stream;
  no_cuda("copying device memory");
#endif
}

}  // namespace detail

void stream_ref::synchronize() const {
#if defined(JOINERY_HAS_CUDA)
  JOINERY_CUDA_TRY(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_)));
#endif
}

stream_ref default_stream() noexcept {
#if defined(JOINERY_HAS_CUDA)
  return stream_ref{static_cast<void*>(cudaStreamPerThread)};
#else
  return stream_ref{};
#endif
}

cuda_stream::cuda_stream() {
#if defined(JOINERY_HAS_CUDA)
  if (device_count() > 0) {
    cudaStream_t s{};
    JOINERY_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    handle_ = s;
  }
#endif
}

cuda_stream::~cuda_stream() {
#if defined(JOINERY_HAS_CUDA)
  if (handle_ != nullptr) { (void)cudaStreamDestroy(static_cast<cudaStream_t>(handle_)); }
#endif
}

int device_count() noexcept {
#if defined(JOINERY_HAS_CUDA)
  static int const n = [] {
    int c = 0;
    if (cudaGetDeviceCount(&c) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return c;
  }();
  return n;
#else
  return 0;
#endif
}

device_info get_device_info(int id) {
  JOINERY_EXPECTS(id >= 0 && id < device_count(),
                  "no GPU with id " + std::to_string(id) + " (" + std::to_string(device_count()) +
                    " present)");
  device_info info;
#if defined(JOINERY_HAS_CUDA)
  cudaDeviceProp p{};
  JOINERY_CUDA_TRY(cudaGetDeviceProperties(&p, id));
  info.id = id;
  info.name = p.name;
  info.sm_count = p.multiProcessorCount;
  info.compute_capability_major = p.major;
  info.compute_capability_minor = p.minor;
  info.shared_memory_per_block = p.sharedMemPerBlock;
  info.shared_memory_per_block_optin = p.sharedMemPerBlockOptin;
  info.shared_memory_per_sm = p.sharedMemPerMultiprocessor;
  info.l2_cache_bytes = static_cast<std::size_t>(p.l2CacheSize);
  info.total_memory = p.totalGlobalMem;
  info.memory_bus_width_bits = p.memoryBusWidth;
  int current = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&current));
  JOINERY_CUDA_TRY(cudaSetDevice(id));
  std::size_t free_b = 0, total_b = 0;
  JOINERY_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  // Memory the pool keeps from earlier, freed allocations is free for joinery's next ones.
  cudaMemPool_t pool{};
  JOINERY_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, id));
  std::uint64_t reserved = 0, used = 0;
  JOINERY_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  JOINERY_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  JOINERY_CUDA_TRY(cudaSetDevice(current));
  info.free_memory = free_b + static_cast<std::size_t>(reserved > used ? reserved - used : 0);
#endif
  return info;
}

scoped_range::scoped_range(char const* name) noexcept {
#if defined(JOINERY_HAS_CUDA)
  nvtxRangePushA(name);
#else
  (void)name;
#endif
}

scoped_range::~scoped_range() {
#if defined(JOINERY_HAS_CUDA)
  nvtxRangePop();
#endif
}

}  // namespace joinery
