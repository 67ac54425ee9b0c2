// join() over a rank_group (distributed.hpp): each rank checks its parts, the
// ranks agree that all may go on, then each runs its part of the multi-GPU join
// (join/multi_gpu) and the totals are summed over the group.
#include "core/communicator.hpp"
#include "core/rank_agreement.hpp"
#include "core/rank_plan.hpp"

#include <joinery/distributed.hpp>
#include <joinery/error.hpp>

#if defined(JOINERY_HAS_CUDA)
#include "join/multi_gpu/multi_gpu_join.hpp"
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

namespace joinery {

namespace {

bool is_integer(type_id t) {
  switch (t) {
    case type_id::int8: case type_id::int16: case type_id::int32: case type_id::int64:
    case type_id::uint8: case type_id::uint16: case type_id::uint32: case type_id::uint64:
      return true;
    default: return false;
  }
}

bool is_left_kind(join_kind k) {
  return k == join_kind::inner || k == join_kind::left_semi || k == join_kind::left_anti ||
         k == join_kind::left_outer;
}

void check_side(table_view const& t, char const* side, size_type key,
                std::vector<size_type> const& payloads, join_options const& options) {
  auto const cols = t.num_columns();
  JOINERY_EXPECTS(key >= 0 && key < cols, std::string("the ") + side + " key column " +
                                            std::to_string(key) + " does not exist (the part has " +
                                            std::to_string(cols) + " columns)");
  auto const& k = t.column(key);
  JOINERY_EXPECTS(is_key_type(k.type()), std::string("distributed joins take int32, int64, uint32 "
                                                     "or uint64 keys; the ") +
                                           side + " key is " + std::string(to_string(k.type())));
  JOINERY_EXPECTS(k.null_count() == 0, std::string("the ") + side +
                                         " key holds NULLs; distributed joins take keys without "
                                         "NULLs (join() on one process takes them)");
  if (options.output == output_form::index) { return; }
  for (auto p : payloads) {
    JOINERY_EXPECTS(p >= 0 && p < cols, std::string("the ") + side + " payload column " +
                                          std::to_string(p) + " does not exist (the part has " +
                                          std::to_string(cols) + " columns)");
    auto const& c = t.column(p);
    JOINERY_EXPECTS(is_integer(c.type()) && c.null_count() == 0,
                    std::string("distributed joins carry integer payloads without NULLs; the ") +
                      side + " payload column " + std::to_string(p) + " is " +
                      std::string(to_string(c.type())) + (c.null_count() > 0 ? " with NULLs" : ""));
  }
}

/// Why this rank cannot run the join ("" when it can).
std::string refusal(table_view const& build, size_type build_key, table_view const& probe,
                    size_type probe_key, join_options const& options) {
  try {
    JOINERY_EXPECTS(options.devices.empty(),
                    "a distributed join runs on its rank_group's GPUs; leave join_options::devices "
                    "empty");
    JOINERY_EXPECTS(options.backend != backend::cpu, "distributed joins run on the GPU backend");
    JOINERY_EXPECTS(options.algorithm == join_algorithm::automatic ||
                      options.algorithm == join_algorithm::multi_gpu_hash ||
                      options.algorithm == join_algorithm::multi_gpu_sort_merge,
                    "distributed joins run multi_gpu_hash or multi_gpu_sort_merge, not " +
                      std::string(to_string(options.algorithm)));
    JOINERY_EXPECTS(options.pred.kind == predicate::kind_type::equal,
                    "distributed joins take the equality predicate");
    JOINERY_EXPECTS(is_left_kind(options.kind),
                    "distributed joins take the kinds inner, left_semi, left_anti and left_outer, "
                    "not " + std::string(to_string(options.kind)) +
                      " (swap the sides for the right kinds)");
    JOINERY_EXPECTS(options.index_type == type_id::int64 || options.index_type == type_id::int32,
                    "join index_type must be int64 or int32, not " +
                      std::string(to_string(options.index_type)));
    check_side(build, "build", build_key, options.build_payloads, options);
    check_side(probe, "probe", probe_key, options.probe_payloads, options);
    auto const bt = build.column(build_key).type();
    auto const pt = probe.column(probe_key).type();
    JOINERY_EXPECTS(bt == pt, "mismatched key types: build key is " + std::string(to_string(bt)) +
                                ", probe key is " + std::string(to_string(pt)));
  } catch (std::exception const& e) { return e.what(); }
  return "";
}

/// What every rank must ask alike: the choices that decide the collectives and the result.
std::uint64_t request_of(size_type build_key, size_type probe_key, join_options const& o) {
  using detail::fingerprint;
  auto h = fingerprint(0, static_cast<std::uint64_t>(build_key));
  h = fingerprint(h, static_cast<std::uint64_t>(probe_key));
  for (auto v : {static_cast<unsigned>(o.algorithm), static_cast<unsigned>(o.kind),
                 static_cast<unsigned>(o.output), static_cast<unsigned>(o.index_type),
                 static_cast<unsigned>(o.strategy), static_cast<unsigned>(o.writer)}) {
    h = fingerprint(h, v);
  }
  for (auto const* list : {&o.build_payloads, &o.probe_payloads}) {
    h = fingerprint(h, list->size());
    for (auto c : *list) { h = fingerprint(h, static_cast<std::uint64_t>(c)); }
  }
  return h;
}

}  // namespace

distributed_join_result join(rank_group const& group, distributed_table_view const& build,
                             size_type build_key, distributed_table_view const& probe,
                             size_type probe_key, join_options const& options,
                             memory_resource_ref mr) {
  auto const t0 = std::chrono::steady_clock::now();
  auto const& comm = *group.communicator();
  auto const& local = comm.local_ranks();
  std::string const count_refusal =
    build.parts.size() == local.size() && probe.parts.size() == local.size()
      ? ""
      : "a distributed table holds one part for each rank this process drives (" +
          std::to_string(local.size()) + "), but the build side has " +
          std::to_string(build.parts.size()) + " and the probe side " +
          std::to_string(probe.parts.size());
  if (!comm.spans_processes()) {  // every part is here: refuse before any rank starts
    JOINERY_EXPECTS(count_refusal.empty(), count_refusal);
    for (std::size_t i = 0; i < local.size(); ++i) {
      auto const why =
        refusal(build.parts[i], build_key, probe.parts[i], probe_key, options);
      JOINERY_EXPECTS(why.empty(), why);
      JOINERY_EXPECTS(detail::schema_of(build.parts[i]) == detail::schema_of(build.parts[0]) &&
                        detail::schema_of(probe.parts[i]) == detail::schema_of(probe.parts[0]),
                      "the parts of a distributed table must have the same column types; part " +
                        std::to_string(i) + "'s differ from part 0's");
    }
  }
  distributed_join_result result;
  result.group = group.communicator();
  result.parts.resize(local.size());
#if defined(JOINERY_HAS_CUDA)
  auto const algo = options.algorithm == join_algorithm::multi_gpu_sort_merge
                      ? join_algorithm::multi_gpu_sort_merge
                      : join_algorithm::multi_gpu_hash;
  comm.for_each_rank([&](int rank) {
    auto const i = static_cast<std::size_t>(
      std::find(local.begin(), local.end(), rank) - local.begin());
    table_view b;
    table_view p;
    auto why = count_refusal;
    if (why.empty()) {
      b = build.parts[i];
      p = probe.parts[i];
      why = refusal(b, build_key, p, probe_key, options);
    }
    auto const at =
      detail::agree_on_parts(comm, rank, why, {b, p}, request_of(build_key, probe_key, options),
                             "distributed join");
    if (options.output == output_form::index) {
      check_index_type(options.index_type, static_cast<size_type>(at.total[0]),
                       static_cast<size_type>(at.total[1]));
    }
    auto piece = detail::multi_gpu::join_on_rank(
      algo, comm, rank,
      {b, {0, b.num_rows()}, static_cast<size_type>(at.first[0])}, build_key,
      {p, {0, p.num_rows()}, static_cast<size_type>(at.first[1])}, probe_key, options);
    auto const totals = comm.all_gather(rank, {piece.aggregate.count, piece.aggregate.checksum});
    if (i == 0) {
      for (std::size_t r = 0; r < totals.size(); r += 2) {
        result.aggregate.count += totals[r];
        result.aggregate.checksum += totals[r + 1];
      }
      result.stats = piece.stats;
    }
    if (mr != nullptr && mr->space() != memory_space::device) {
      // Copied by the rank itself (its GPU is current there), after the last collective: a
      // failure here leaves no other rank waiting.
      auto const s = comm.stream_of(rank);
      if (options.output == output_form::index) {
        piece.build_rows = column::copy_of(piece.build_rows.view(), mr, s);
        piece.probe_rows = column::copy_of(piece.probe_rows.view(), mr, s);
      } else if (options.output == output_form::table) {
        std::vector<column> cols;
        for (auto const& c : piece.columns.view()) { cols.push_back(column::copy_of(c, mr, s)); }
        piece.columns = table(std::move(cols));
      }
      s.synchronize();
    }
    result.parts[i] = std::move(piece);
  });
  result.stats.seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
#else
  (void)build_key;
  (void)probe_key;
  (void)options;
  (void)mr;
  (void)t0;
  JOINERY_FAIL("distributed joins need the GPU backend, but joinery was built without CUDA");
#endif
  return result;
}

}  // namespace joinery
