// groupby() over a rank_group (distributed.hpp): each rank checks its part, the
// ranks agree that all may go on, then each runs its part of the multi-GPU
// group-by (groupby/multi_gpu).
#include "core/communicator.hpp"
#include "core/rank_agreement.hpp"

#include <joinery/distributed.hpp>
#include <joinery/error.hpp>

#if defined(JOINERY_HAS_CUDA)
#include "groupby/multi_gpu/multi_gpu_groupby.hpp"
#endif

#include <algorithm>
#include <chrono>
#include <string>

namespace joinery {

namespace {

/// Why this rank cannot run the group-by ("" when it can).
std::string refusal(table_view const& input, size_type key_column,
                    std::vector<aggregation> const& aggregations, groupby_options const& options) {
  try {
    JOINERY_EXPECTS(options.devices.empty(),
                    "a distributed group-by runs on its rank_group's GPUs; leave "
                    "groupby_options::devices empty");
    JOINERY_EXPECTS(options.backend != backend::cpu,
                    "distributed group-bys run on the GPU backend");
    JOINERY_EXPECTS(options.algorithm == groupby_algorithm::automatic ||
                      options.algorithm == groupby_algorithm::multi_gpu,
                    "distributed group-bys run multi_gpu, not " +
                      std::string(to_string(options.algorithm)));
    auto const cols = input.num_columns();
    JOINERY_EXPECTS(key_column >= 0 && key_column < cols,
                    "group-by key column " + std::to_string(key_column) +
                      " does not exist (the part has " + std::to_string(cols) + " columns)");
    auto const& key = input.column(key_column);
    JOINERY_EXPECTS(is_key_type(key.type()) && key.null_count() == 0,
                    "distributed group-bys take int32, int64, uint32 or uint64 keys without "
                    "NULLs, not " + std::string(to_string(key.type())) +
                      (key.null_count() > 0 ? " with NULLs" : ""));
    for (auto const& a : aggregations) {
      JOINERY_EXPECTS(a.kind != aggregation_kind::count_valid &&
                        a.kind != aggregation_kind::count_distinct,
                      "distributed group-bys take count, sum, min, max and avg (no NULLs: "
                      "count_valid is count; count_distinct is not supported there)");
      if (a.kind == aggregation_kind::count) { continue; }
      JOINERY_EXPECTS(a.column >= 0 && a.column < cols,
                      std::string(to_string(a.kind)) + " over column " + std::to_string(a.column) +
                        ", which does not exist (the part has " + std::to_string(cols) +
                        " columns)");
      auto const& c = input.column(a.column);
      JOINERY_EXPECTS((is_key_type(c.type()) || is_floating(c.type())) && c.null_count() == 0,
                      std::string(to_string(a.kind)) + " over a " +
                        std::string(to_string(c.type())) +
                        (c.null_count() > 0 ? " column with NULLs" : " column") +
                        "; distributed group-bys aggregate 4- and 8-byte integers and floats "
                        "without NULLs");
      JOINERY_EXPECTS(options.sum_overflow == overflow_policy::wrap ||
                        a.kind != aggregation_kind::sum ||
                        (c.type() != type_id::int64 && c.type() != type_id::uint64),
                      "distributed group-bys wrap their sums of 64-bit integers (sum_overflow "
                      "error is not supported there)");
    }
  } catch (std::exception const& e) { return e.what(); }
  return "";
}

}  // namespace

distributed_groupby_result groupby(rank_group const& group, distributed_table_view const& input,
                                   size_type key_column,
                                   std::vector<aggregation> const& aggregations,
                                   groupby_options const& options, memory_resource_ref mr) {
  auto const t0 = std::chrono::steady_clock::now();
  auto const& comm = *group.communicator();
  auto const& local = comm.local_ranks();
  std::string const count_refusal =
    input.parts.size() == local.size()
      ? ""
      : "a distributed table holds one part for each rank this process drives (" +
          std::to_string(local.size()) + "), not " + std::to_string(input.parts.size());
  if (!comm.spans_processes()) {  // every part is here: refuse before any rank starts
    JOINERY_EXPECTS(count_refusal.empty(), count_refusal);
    for (auto const& part : input.parts) {
      auto const why = refusal(part, key_column, aggregations, options);
      JOINERY_EXPECTS(why.empty(), why);
      JOINERY_EXPECTS(detail::schema_of(part) == detail::schema_of(input.parts[0]),
                      "the parts of a distributed table must have the same column types");
    }
  }
  distributed_groupby_result result;
  result.group = group.communicator();
  result.parts.resize(local.size());
#if defined(JOINERY_HAS_CUDA)
  comm.for_each_rank([&](int rank) {
    auto const i = static_cast<std::size_t>(
      std::find(local.begin(), local.end(), rank) - local.begin());
    table_view part;
    auto why = count_refusal;
    if (why.empty()) {
      part = input.parts[i];
      why = refusal(part, key_column, aggregations, options);
    }
    auto h = detail::fingerprint(0, static_cast<std::uint64_t>(key_column));
    h = detail::fingerprint(h, options.sort_by_key ? 1U : 0U);
    for (auto const& a : aggregations) {
      h = detail::fingerprint(detail::fingerprint(h, static_cast<std::uint64_t>(a.kind)),
                              static_cast<std::uint64_t>(a.column));
    }
    (void)detail::agree_on_parts(comm, rank, why, {part}, h, "distributed group-by");
    auto piece = detail::multi_gpu::groupby_on_rank(comm, rank, part, {0, part.num_rows()},
                                                    key_column, aggregations, options);
    auto const groups =
      comm.all_gather(rank, {static_cast<std::uint64_t>(piece.num_groups())});
    if (i == 0) {
      for (auto g : groups) { result.num_groups += static_cast<size_type>(g); }
      result.stats = piece.stats;
    }
    if (mr != nullptr && mr->space() != memory_space::device) {
      // Copied by the rank itself (its GPU is current there), after the last collective: a
      // failure here leaves no other rank waiting.
      auto const s = comm.stream_of(rank);
      std::vector<column> cols;
      for (auto const& c : piece.columns.view()) { cols.push_back(column::copy_of(c, mr, s)); }
      piece.columns = table(std::move(cols));
      s.synchronize();
    }
    result.parts[i] = std::move(piece);
  });
  result.stats.seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
#else
  (void)key_column;
  (void)aggregations;
  (void)options;
  (void)mr;
  (void)t0;
  JOINERY_FAIL("distributed group-bys need the GPU backend, but joinery was built without CUDA");
#endif
  return result;
}

}  // namespace joinery
