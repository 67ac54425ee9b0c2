#pragma once
// Internal: host <-> device copies at link speed. Pinned memory crosses the link as it is;
// pageable memory is staged through a small set of pinned buffers, each chunk copied by
// several host threads while the previous chunk is on the link (DESIGN.md, "Data in host
// memory"). copy_bytes() routes every large host <-> device copy here.
#include <joinery/memory.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace joinery::detail {

/// Tuning of the staged copies.
struct transfer_policy {
  /// Bytes per staged chunk and the number of pinned buffers in flight: a chunk is copied by the
  /// host into one buffer while earlier ones are on the link.
  std::size_t chunk_bytes = std::size_t{8} << 20;
  int buffers = 4;
  /// Smaller pageable copies go straight through cudaMemcpy (staging would cost more than it
  /// saves).
  std::size_t min_staged_bytes = std::size_t{4} << 20;
  /// Host copies below this many bytes run on one thread.
  std::size_t min_parallel_bytes = std::size_t{1} << 20;
};

/// One piece of a batched host -> device copy.
struct copy_segment {
  void* dst = nullptr;        // device
  void const* src = nullptr;  // host
  std::size_t bytes = 0;
};

/// Copies every segment from host memory of `src_space` to the device through one staging
/// pipeline (pageable memory: no drain between segments), ordered on `stream`; returns once all
/// have landed.
void upload_segments(std::vector<copy_segment> const& segments, memory_space src_space,
                     stream_ref stream);

/// memcpy split over the host's threads (OpenMP) when `bytes` is large enough.
void parallel_memcpy(void* dst, void const* src, std::size_t bytes);

/// Sets `bytes` bytes of device memory at `dst` to `value`, ordered on `stream`; returns once
/// done.
void fill_device_bytes(void* dst, std::uint8_t value, std::size_t bytes, stream_ref stream);
/// Copies `rows` blocks of `width` bytes, row i from src + i * src_pitch to dst + i * dst_pitch,
/// both sides in memory of `space` (host: a parallel loop; device: one 2-D copy on `stream`);
/// returns once done. Splits and joins the halves of wide values without a kernel.
void copy_strided(void* dst, std::size_t dst_pitch, void const* src, std::size_t src_pitch,
                  std::size_t width, std::size_t rows, memory_space space, stream_ref stream);
/// Copies between host (pageable or pinned) and device memory, ordered on `stream`; returns once
/// the copy has completed. Exactly one side must be device memory.
void host_device_copy(void* dst, memory_space dst_space, void const* src, memory_space src_space,
                      std::size_t bytes, stream_ref stream);

}  // namespace joinery::detail
