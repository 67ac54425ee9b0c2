#pragma once
// Internal, host-only: a group of GPU ranks and the collectives the multi-GPU
// algorithms need (an all-gather of small host values, an all-to-all of
// variable-size buckets). Every rank runs the same steps and calls the
// collectives in the same order (SPMD), so the same code serves a group whose
// ranks are threads of one process and a group of one process per GPU.
//
// In one process, ranks exchange by CUDA peer copies (any ranks; several may
// share a device) or NCCL's grouped send / receive (one rank per device). A
// group spread over processes exchanges by NCCL only; its ranks meet through a
// rendezvous file carrying NCCL's unique id. NCCL is loaded at run time, so a
// build or machine without it still runs every other path. DESIGN.md, "Several
// GPUs".
#include <joinery/common.hpp>
#include <joinery/memory.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace joinery::detail {

/// Whether NCCL could be loaded (libnccl.so.2 on the library path); the reason
/// when not.
bool nccl_available(std::string* why = nullptr);

/// This process's place in a group of one process per GPU.
struct process_rank {
  int rank = 0;
  int world = 1;
  int device = 0;
  /// A path every process can reach: rank 0 creates it (it must not exist)
  /// holding NCCL's unique id, the others wait for it; rank 0 removes it once
  /// every rank has joined.
  std::string rendezvous_file;
  double timeout_seconds = 120;
};

class communicator {
 public:
  /// Ranks 0..n-1 on `devices`, all driven by this process (one thread each while
  /// they run). `method` automatic: peer copies. Throws logic_error for an unknown
  /// device, for GPUs without peer access to each other, or for NCCL asked with a
  /// repeated device or unavailable.
  communicator(std::vector<int> devices, exchange_method method);
  /// This process as one rank of a group of processes, exchanging by NCCL. Returns
  /// once every rank has joined; throws on a timeout, an existing rendezvous
  /// file or NCCL missing.
  explicit communicator(process_rank const& me);
  ~communicator();
  communicator(communicator const&) = delete;
  communicator& operator=(communicator const&) = delete;

  /// Ranks in the group.
  [[nodiscard]] int size() const noexcept { return world_; }
  /// The ranks this process drives, ascending.
  [[nodiscard]] std::vector<int> const& local_ranks() const noexcept { return local_; }
  [[nodiscard]] bool spans_processes() const noexcept { return static_cast<int>(local_.size()) != world_; }
  /// A local rank's GPU and its own stream (created on that GPU).
  [[nodiscard]] int device_of(int rank) const;
  [[nodiscard]] stream_ref stream_of(int rank) const;

  /// Runs fn(rank) for every local rank at once, one host thread each with the
  /// rank's device current; rethrows the first exception once all have finished.
  /// A rank that throws releases the others from the collective they wait in
  /// (they throw too).
  void for_each_rank(std::function<void(int rank)> const& fn) const;

  // Collectives: called by every rank of the group, each from its own thread
  // (inside for_each_rank), in the same order.

  /// Every rank's `mine` (the same length on every rank), concatenated in rank order.
  [[nodiscard]] std::vector<std::uint64_t> all_gather(int rank,
                                                      std::vector<std::uint64_t> const& mine) const;

  /// One all-to-all of variable-size buckets as seen by one rank: `send` holds its
  /// buckets for ranks 0..n-1 back to back, `recv` receives every rank's bucket
  /// for it in rank order; bytes[s][d] is what rank s sends rank d (the same
  /// matrix on every rank). Device memory of the rank's GPU.
  struct round {
    void const* send = nullptr;
    void* recv = nullptr;
    std::vector<std::vector<std::size_t>> bytes;
  };
  /// Runs every round (issued together: one NCCL group, or every peer copy queued
  /// before the first wait); returns once every bucket for this rank has arrived
  /// and every bucket it sent has left.
  void all_to_all(int rank, std::vector<round> const& rounds) const;

 private:
  struct nccl_state;
  struct meeting;  // the barrier and slots of ranks in this process
  [[nodiscard]] std::size_t local_index(int rank) const;
  void wait_for_all(int rank) const;

  int world_ = 0;
  std::vector<int> local_;    // group ranks driven here
  std::vector<int> devices_;  // per local rank
  exchange_method method_ = exchange_method::peer_copy;
  std::vector<void*> streams_;  // cudaStream_t, per local rank
  std::unique_ptr<nccl_state> nccl_;
  std::unique_ptr<meeting> meeting_;
};

}  // namespace joinery::detail
