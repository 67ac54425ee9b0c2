#pragma once
// Internal, host-only: the phases every multi-GPU operation shares, rank by
// rank: a share of the input onto the rank's GPU, grouping it by destination
// rank, the exchange, and gathering the ranks' result pieces into one column
// (rank_exchange.cu).
#include "core/communicator.hpp"
#include "core/rank_plan.hpp"
#include "primitives/rank_kernels.hpp"

#include <joinery/column.hpp>
#include <joinery/common.hpp>
#include <joinery/table.hpp>

#include <chrono>
#include <vector>

namespace joinery::detail::multi_gpu {

/// Wall time of consecutive phases, appended to statistics as each ends.
class phase_timer {
 public:
  explicit phase_timer(std::vector<phase_time>& phases) : phases_(phases) {}
  void end(char const* name) {
    auto const now = std::chrono::steady_clock::now();
    phases_.push_back({name, std::chrono::duration<double>(now - last_).count()});
    last_ = now;
  }

 private:
  std::vector<phase_time>& phases_;
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
/// column of the input row ids after them.
void take_share(rank_side& rs, table_view const& t, std::vector<size_type> const& carried,
                row_range range, bool with_row_ids, int device, stream_ref stream);

/// The rule that sends each row to the rank owning its key's bin: bins over the
/// code range of every rank's key columns (keys[r]: rank r's, on its GPU), runs
/// of bins of about equal rows.
rank_rule rule_by_key_range(std::vector<std::vector<column_view>> const& keys,
                            communicator const& comm);

/// Groups the share by the rank of each row (the first carried column is the
/// key) into `sent` and `counts`; releases the share.
void split_by_rank(rank_side& rs, rank_rule const& rule, stream_ref stream);

/// The all-to-all of every carried column of every side (one round); fills `received` and
/// `rows` of each rank's side.
void exchange_sides(std::vector<std::vector<rank_side>*> const& sides, communicator const& comm);

/// A column of at.back() rows from `mr` holding each rank's piece at its row
/// offset at[r] (pieces on the ranks' GPUs; validity of nullable pieces
/// assembled on the host).
column gather_pieces(std::vector<column const*> const& pieces, std::vector<size_type> const& at,
                     communicator const& comm, stream_ref stream, memory_resource* mr);

}  // namespace joinery::detail::multi_gpu
