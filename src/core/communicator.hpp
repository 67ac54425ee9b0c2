#pragma once
// Internal, host-only: a set of GPU ranks driven by one process, and the
// collective the multi-GPU algorithms need (an all-to-all of variable-size
// buckets). Two ways to move the buckets: CUDA peer copies (any ranks, several
// ranks may share a device) and NCCL's grouped send / receive (one rank per
// device; NCCL is loaded at run time, so a build without it still runs every
// other path). DESIGN.md, "Several GPUs".
#include <joinery/common.hpp>
#include <joinery/memory.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace joinery::detail {

/// Whether NCCL could be loaded (libnccl.so.2 on the library path); the reason
/// when not.
bool nccl_available(std::string* why = nullptr);

class communicator {
 public:
  /// Ranks on `devices` (one rank each, in order; a device may repeat). `method` automatic:
  /// peer copies. Throws logic_error for an unknown device, for GPUs without peer access to
  /// each other, or for NCCL asked with a repeated device or unavailable.
  communicator(std::vector<int> devices, exchange_method method);
  ~communicator();
  communicator(communicator const&) = delete;
  communicator& operator=(communicator const&) = delete;

  [[nodiscard]] int size() const noexcept { return static_cast<int>(devices_.size()); }
  [[nodiscard]] int device_of(int rank) const {
    return devices_.at(static_cast<std::size_t>(rank));
  }
  /// The rank's own stream (created on its device).
  [[nodiscard]] stream_ref stream_of(int rank) const;

  /// Runs fn(rank) for every rank at once, one host thread each with the rank's
  /// device current; rethrows the first exception once all have finished.
  void for_each_rank(std::function<void(int rank)> const& fn) const;

  /// One all-to-all of variable-size buckets: rank s's `send[s]` holds its buckets for ranks
  /// 0..n-1 back to back, bucket d of `bytes[s][d]` bytes; rank d receives them into `recv[d]`
  /// in the order of the sending rank. Buffers are device memory of the ranks' GPUs.
  struct buckets {
    std::vector<void const*> send;
    std::vector<void*> recv;
    std::vector<std::vector<std::size_t>> bytes;
  };
  /// Runs every all-to-all of `rounds` (issued together: one NCCL group, or every peer copy
  /// queued before the first wait); returns once every bucket has arrived.
  void all_to_all(std::vector<buckets> const& rounds) const;

 private:
  struct nccl_state;
  std::vector<int> devices_;
  exchange_method method_ = exchange_method::peer_copy;
  std::vector<void*> streams_;  // cudaStream_t, one per rank
  std::unique_ptr<nccl_state> nccl_;
};

}  // namespace joinery::detail
