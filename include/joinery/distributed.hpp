#pragma once
// Joins and group-bys over data already split over GPUs, with results left
// where they are made: the ranks of a group each hold a part of every input and
// get a part of the result. A group is either several GPUs driven by this
// process or one process per GPU (the same code spans the GPUs of one host and,
// through NCCL, processes anywhere NCCL reaches). DESIGN.md, "Several GPUs".
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <memory>
#include <string>
#include <vector>

namespace joinery {

namespace detail {
class communicator;
}

/// The GPU ranks a distributed operation runs on. Cheap to copy (copies share
/// the group); NCCL's communicators are made once, when the group is.
class rank_group {
 public:
  /// Ranks 0..n-1 driven by this process, one per listed GPU (a GPU may repeat:
  /// several ranks on one GPU exchange by peer copies, as the tests do on one GPU).
  /// `exchange`: peer copies (automatic) or NCCL (one rank per GPU).
  static rank_group in_process(std::vector<int> const& devices,
                               exchange_method exchange = exchange_method::automatic);
  /// This process as rank `rank` of `world` processes, on GPU `device`, exchanging
  /// by NCCL. The ranks meet through `rendezvous_file`, a path all of them reach:
  /// rank 0 creates it (it must not exist) holding NCCL's unique id, the others
  /// wait up to `timeout_seconds` for it, and rank 0 removes it once every rank has
  /// joined. Returns once the whole group has joined.
  static rank_group joined(int rank, int world, int device, std::string const& rendezvous_file,
                           double timeout_seconds = 120);

  /// Ranks in the group.
  [[nodiscard]] int size() const;
  /// The ranks this process drives, ascending: every rank of an in-process group,
  /// this process's one rank of a joined group.
  [[nodiscard]] std::vector<int> const& local_ranks() const;
  /// A local rank's GPU.
  [[nodiscard]] int device_of(int rank) const;
  /// A collective for checks a caller makes on each process: throws logic_error on every
  /// process once any gives a non-empty `refusal` (that process with its own message), so that
  /// no process goes on to wait for one that stopped.
  void agree(std::string const& refusal) const;
  /// joinery's own use: the ranks' communicator.
  [[nodiscard]] std::shared_ptr<detail::communicator const> const& communicator() const {
    return comm_;
  }

 private:
  explicit rank_group(std::shared_ptr<detail::communicator const> comm) : comm_(std::move(comm)) {}
  std::shared_ptr<detail::communicator const> comm_;
};

/// A table split by rows over a group's ranks, as this process holds it:
/// parts[i] belongs to rank group.local_ranks()[i]. Every part has the same
/// columns; a part in its rank's GPU memory is read in place, one elsewhere
/// (host memory, another GPU) is copied there first. Rows are numbered over the
/// group in rank order: rank 0's part first.
struct distributed_table_view {
  std::vector<table_view> parts;
};

struct distributed_join_result {
  /// Keeps what the pieces are freed on (the ranks' streams) alive as long as they are.
  std::shared_ptr<void const> group;
  /// The piece each local rank made (parts[i]: rank local_ranks()[i]), in its
  /// GPU's memory (or the memory asked for). Index form: row ids numbered over
  /// the group. Table form: the columns join() gives. Each piece's aggregate
  /// counts its own rows.
  std::vector<join_result> parts;
  /// Over the whole group.
  join_aggregate aggregate;
  /// The first local rank's phases (each ends when every rank has ended it).
  join_stats stats;
};

/// Joins two distributed tables with multi_gpu_hash (options.algorithm automatic)
/// or multi_gpu_sort_merge (the pieces then follow one another in key order, rank
/// by rank): one integer key column without NULLs a side (int32, int64, uint32 or
/// uint64), kinds inner, left_semi, left_anti and left_outer, integer payloads
/// (any width) without NULLs. Every rank of the group must call it with the same options.
/// options.devices must be empty (the group names the GPUs). Throws logic_error
/// for anything else, on every rank (a rank's refusal reaches the others).
/// `mr`: where the pieces go (nullptr or a device resource: each rank's GPU
/// memory; a host resource: host memory, copied by each rank).
distributed_join_result join(rank_group const& group, distributed_table_view const& build,
                             size_type build_key, distributed_table_view const& probe,
                             size_type probe_key, join_options const& options = {},
                             memory_resource_ref mr = nullptr);

struct distributed_groupby_result {
  /// Keeps what the pieces are freed on (the ranks' streams) alive as long as they are.
  std::shared_ptr<void const> group;
  /// Each local rank's groups (parts[i]: rank local_ranks()[i]), in its GPU's
  /// memory (or the memory asked for); a key's group is in one rank's piece only. With sort_by_key the
  /// pieces are ordered and follow one another in key order, rank by rank.
  std::vector<groupby_result> parts;
  /// Groups over the whole group.
  size_type num_groups = 0;
  groupby_stats stats;
};

/// Groups a distributed table by one integer key column without NULLs (int32,
/// int64, uint32 or uint64) with groupby_algorithm::multi_gpu (or automatic);
/// aggregates over 4- or 8-byte integer or floating-point columns without NULLs.
/// Every rank of the group must call it with the same arguments; options.devices
/// must be empty. `mr` as for the distributed join.
distributed_groupby_result groupby(rank_group const& group, distributed_table_view const& input,
                                   size_type key_column,
                                   std::vector<aggregation> const& aggregations,
                                   groupby_options const& options = {},
                                   memory_resource_ref mr = nullptr);

}  // namespace joinery
