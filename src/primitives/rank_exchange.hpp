#pragma once
// Internal, host-only: the phases every multi-GPU operation shares, as one rank
// runs them (every rank of the group runs the same steps; the collectives go
// through the communicator): a share of the input onto the rank's GPU, grouping
// it by destination rank, the exchange; and, in one process, gathering the
// ranks' result pieces into one column (rank_exchange.cu).
#include "core/communicator.hpp"
#include "core/rank_plan.hpp"
#include "primitives/rank_kernels.hpp"

#include <joinery/column.hpp>
#include <joinery/common.hpp>
#include <joinery/table.hpp>

#include <chrono>
#include <vector>

namespace joinery::detail::multi_gpu {

/// Wall time of consecutive phases of one rank, appended to statistics as each
/// ends; a phase ends once every rank of the group has finished it.
class phase_timer {
 public:
  phase_timer(std::vector<phase_time>& phases, communicator const& comm, int rank)
      : phases_(phases), comm_(comm), rank_(rank) {}
  void end(char const* name) {
    (void)comm_.all_gather(rank_, {0});
    auto const now = std::chrono::steady_clock::now();
    phases_.push_back({name, std::chrono::duration<double>(now - last_).count()});
    last_ = now;
  }

 private:
  std::vector<phase_time>& phases_;
  communicator const& comm_;
  int rank_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

/// One side (a table) on one rank, from its share of the input to the rows it
/// received.
struct rank_side {
  std::vector<column> owned;       // share columns copied onto the rank's GPU
  std::vector<column_view> share;  // the carried columns of the share (row ids last, if asked)
  std::vector<column> sent;        // the share grouped by destination rank
  std::vector<size_type> counts;   // rows for each destination rank
  std::vector<column> received;    // what the exchange brought
  std::vector<column_view> rows;   // the rows this rank works on: received, or the share itself
};

/// Rows `range` of the columns `carried` of `t` onto `device` (the current
/// one): views where they already lie there, else copies (host data through the
/// staged copies, other GPUs' by peer copies); with `with_row_ids`, an int64
/// column of the rows' ids after them, first_id + 0, 1, ...
void take_share(rank_side& rs, table_view const& t, std::vector<size_type> const& carried,
                row_range range, bool with_row_ids, size_type first_id, int device,
                stream_ref stream);

/// The rule that sends each row to the rank owning its key's bin: bins over the
/// code range of every rank's key columns (`keys`: this rank's, on its GPU),
/// runs of bins of about equal rows. A collective.
rank_rule rule_by_key_range(int rank, std::vector<column_view> const& keys,
                            communicator const& comm);

/// Groups the share by the rank of each row (the first carried column is the
/// key) into `sent` and `counts`; releases the share.
void split_by_rank(rank_side& rs, rank_rule const& rule, stream_ref stream);

/// The all-to-all of every carried column of every side of this rank (one
/// round); fills each side's `received` and `rows`. A collective.
void exchange_sides(int rank, std::vector<rank_side*> const& sides, communicator const& comm);

/// Each rank's `value`, in rank order. A collective.
std::vector<std::uint64_t> gather_values(int rank, std::uint64_t value, communicator const& comm);

/// A column of at.back() rows from `mr` holding each rank's piece at its row
/// offset at[r] (pieces on the ranks' GPUs; validity of nullable pieces
/// assembled on the host).
column gather_pieces(std::vector<column const*> const& pieces, std::vector<size_type> const& at,
                     communicator const& comm, stream_ref stream, memory_resource* mr);

}  // namespace joinery::detail::multi_gpu
