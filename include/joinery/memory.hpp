#pragma once
// Streams, memory spaces and memory resources. Host-only: no CUDA types leak out.
#include <joinery/types.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace joinery {

enum class memory_space : std::uint8_t { host, pinned_host, device };
std::string_view to_string(memory_space s) noexcept;
/// True when host code may dereference memory of this space.
constexpr bool host_accessible(memory_space s) noexcept { return s != memory_space::device; }

/// Non-owning handle of a CUDA stream (a cudaStream_t). The null handle is CUDA's default stream.
class stream_ref {
 public:
  constexpr stream_ref() noexcept = default;
  constexpr explicit stream_ref(void* handle) noexcept : handle_(handle) {}
  [[nodiscard]] constexpr void* handle() const noexcept { return handle_; }
  /// Waits for all work on the stream (a no-op without CUDA).
  void synchronize() const;

 private:
  void* handle_ = nullptr;
};

/// The stream used when the caller names none: CUDA's per-thread default stream.
stream_ref default_stream() noexcept;

/// Owning CUDA stream (non-blocking). Without CUDA it is a null handle.
class cuda_stream {
 public:
  cuda_stream();
  ~cuda_stream();
  cuda_stream(cuda_stream const&) = delete;
  cuda_stream& operator=(cuda_stream const&) = delete;
  [[nodiscard]] stream_ref ref() const noexcept { return stream_ref{handle_}; }
  operator stream_ref() const noexcept { return ref(); }  // NOLINT: implicit like rmm's cuda_stream

 private:
  void* handle_ = nullptr;
};

/// Polymorphic allocator of one memory space; stream-ordered where the space allows it.
class memory_resource {
 public:
  virtual ~memory_resource() = default;
  void* allocate(std::size_t bytes, stream_ref stream) { return do_allocate(bytes, stream); }
  void deallocate(void* p, std::size_t bytes, stream_ref stream) noexcept {
    do_deallocate(p, bytes, stream);
  }
  [[nodiscard]] virtual memory_space space() const noexcept = 0;

 private:
  virtual void* do_allocate(std::size_t bytes, stream_ref stream) = 0;
  virtual void do_deallocate(void* p, std::size_t bytes, stream_ref stream) noexcept = 0;
};

/// Non-owning reference to a resource; a null reference means "the default for the result space".
using memory_resource_ref = memory_resource*;

/// Process-wide resources. device_resource() throws when joinery was built without CUDA or no GPU
/// is present; it is CUDA's stream-ordered pool allocator (cudaMallocAsync on the device's pool).
memory_resource* host_resource();
memory_resource* pinned_host_resource();
memory_resource* device_resource();
memory_resource* resource_for(memory_space s);

/// Move-only owning byte buffer allocated from a resource, freed on the stream it was made on.
class buffer {
 public:
  buffer() noexcept = default;
  buffer(std::size_t bytes, memory_resource* mr, stream_ref stream);
  ~buffer();
  buffer(buffer&& other) noexcept { swap(other); }
  buffer& operator=(buffer&& other) noexcept {
    buffer tmp(std::move(other));
    swap(tmp);
    return *this;
  }
  buffer(buffer const&) = delete;
  buffer& operator=(buffer const&) = delete;

  [[nodiscard]] void* data() noexcept { return data_; }
  [[nodiscard]] void const* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }
  [[nodiscard]] memory_space space() const noexcept {
    return mr_ ? mr_->space() : memory_space::host;
  }
  [[nodiscard]] memory_resource* resource() const noexcept { return mr_; }
  [[nodiscard]] stream_ref stream() const noexcept { return stream_; }

 private:
  void swap(buffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    std::swap(mr_, o.mr_);
    std::swap(stream_, o.stream_);
  }
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  memory_resource* mr_ = nullptr;
  stream_ref stream_{};
};

/// Copies `bytes` between any two spaces (cudaMemcpyAsync when a side is on the device), ordered on
/// `stream`; returns after the copy completed when either side is host-accessible.
void copy_bytes(void* dst, memory_space dst_space, void const* src, memory_space src_space,
                std::size_t bytes, stream_ref stream);

/// Facts about a GPU, read once from the driver.
struct device_info {
  int id = 0;
  std::string name;
  int sm_count = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  std::size_t shared_memory_per_block = 0;        // default limit
  std::size_t shared_memory_per_block_optin = 0;  // opt-in limit
  std::size_t shared_memory_per_sm = 0;
  std::size_t l2_cache_bytes = 0;
  std::size_t total_memory = 0;
  std::size_t free_memory = 0;  // at the time of the query, plus what joinery's pool holds unused
  int memory_bus_width_bits = 0;
};

/// Number of usable GPUs (0 when built without CUDA or no driver/GPU is present).
int device_count() noexcept;
/// Whether this build contains the CUDA backend.
bool built_with_cuda() noexcept;
/// Queries device `id`; throws when there is no such device.
device_info get_device_info(int id = 0);

/// RAII NVTX range (a no-op without CUDA).
class scoped_range {
 public:
  explicit scoped_range(char const* name) noexcept;
  ~scoped_range();
  scoped_range(scoped_range const&) = delete;
  scoped_range& operator=(scoped_range const&) = delete;
};

}  // namespace joinery
