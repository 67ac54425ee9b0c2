// The multi-GPU joins and group-by on every workload with several ranks: three
// ranks on one GPU (the exchange and its boundaries without a second GPU), and,
// where present, every GPU with each exchange method and two ranks per GPU.
// Every kind and output form against the oracle; inputs in device memory and in
// pageable host memory; and the same over distributed tables (distributed.hpp).
#include "core/communicator.hpp"
#include "support/oracle.hpp"
#include "support/workloads.hpp"

#include <joinery/distributed.hpp>
#include <joinery/error.hpp>
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>

namespace joinery::test {
namespace {

/// Which ranks a case runs on.
enum class layout : std::uint8_t {
  three_on_one,       ///< devices {0, 0, 0}, peer copies, inputs in device memory
  three_on_one_host,  ///< the same with inputs in host memory
  every_gpu_nccl,     ///< one rank per GPU, NCCL (needs two GPUs)
  two_per_gpu,        ///< {0, 1, ..., 0, 1, ...}, peer copies (needs two GPUs)
};

std::string layout_name(layout l) {
  switch (l) {
    case layout::three_on_one:
      return "three_ranks_on_gpu0";
    case layout::three_on_one_host:
      return "three_ranks_on_gpu0_host_inputs";
    case layout::every_gpu_nccl:
      return "every_gpu_nccl";
    case layout::two_per_gpu:
      return "two_ranks_per_gpu";
  }
  return "unknown";
}

std::vector<int> devices_of(layout l) {
  std::vector<int> v;
  switch (l) {
    case layout::three_on_one:
    case layout::three_on_one_host:
      return {0, 0, 0};
    case layout::every_gpu_nccl:
      for (int d = 0; d < device_count(); ++d) { v.push_back(d); }
      return v;
    case layout::two_per_gpu:
      for (int d = 0; d < 2 * device_count(); ++d) { v.push_back(d % device_count()); }
      return v;
  }
  return v;
}

/// A test name from its parts: anything but letters and digits becomes '_'.
std::string test_name(std::string name) {
  for (auto& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) { ch = '_'; }
  }
  return name;
}

/// The parameters the suites below share.
auto every_layout() {
  return ::testing::Values(layout::three_on_one, layout::three_on_one_host, layout::every_gpu_nccl,
                           layout::two_per_gpu);
}
auto multi_gpu_joins() {
  return ::testing::Values(join_algorithm::multi_gpu_hash, join_algorithm::multi_gpu_sort_merge);
}
/// "prefix<algorithm>_<layout>_<workload>" of a join case.
template <class Info>
std::string join_case_name(std::string const& prefix, Info const& info) {
  return test_name(prefix + std::string(to_string(std::get<0>(info.param))) + "_" +
                   layout_name(std::get<1>(info.param)) + "_" + std::get<2>(info.param));
}

exchange_method exchange_of(layout l) {
  return l == layout::every_gpu_nccl ? exchange_method::nccl : exchange_method::peer_copy;
}

/// Why this machine cannot run a layout, or "" when it can.
std::string skip_reason(layout where) {
  if (device_count() == 0) {
    return "no GPU present: GPU conformance runs on a lent GPU "
           "(scripts/device-check.sh)";
  }
  bool const several = where == layout::every_gpu_nccl || where == layout::two_per_gpu;
  if (several && device_count() < 2) {
    return "needs two GPUs (runs on a lent nvidia-h200-x2 or larger)";
  }
  return "";
}

class MultiGpuJoinConformance
    : public ::testing::TestWithParam<std::tuple<join_algorithm, layout, std::string>> {};

TEST_P(MultiGpuJoinConformance, AllKindsAndFormsMatchOracle) {
  auto const& [algo, where, workload] = GetParam();
  if (auto const why = skip_reason(where); !why.empty()) { GTEST_SKIP() << why; }
  join_options o;
  o.algorithm = algo;
  o.backend = backend::gpu;
  o.devices = devices_of(where);
  o.tuning.exchange = exchange_of(where);
  auto const& w = join_workload_named(workload);
  auto const space = where == layout::three_on_one_host ? memory_space::host : memory_space::device;
  auto const build = place(w.build.view(), space);
  auto const probe = place(w.probe.view(), space);
  for (auto kind :
       {join_kind::inner, join_kind::left_semi, join_kind::left_anti, join_kind::left_outer}) {
    SCOPED_TRACE(std::string("kind ") + std::string(to_string(kind)));
    o.kind = kind;
    o.build_payloads = payloads_of(w.build);
    o.probe_payloads = payloads_of(w.probe);
    expect_every_form_matches_oracle(build.view(), probe.view(), w.build.view(), w.probe.view(), o,
                                     space);
  }
}

INSTANTIATE_TEST_SUITE_P(
  Families, MultiGpuJoinConformance,
  ::testing::Combine(multi_gpu_joins(), every_layout(), ::testing::ValuesIn(join_workload_names())),
  [](auto const& info) { return join_case_name("gpu_", info); });

// The multi-GPU group-by: every aggregate over every value column,
// hash-partitioned and (sorted by key) range-partitioned, against the oracle.
class MultiGpuGroupbyConformance
    : public ::testing::TestWithParam<std::tuple<layout, std::string>> {};

TEST_P(MultiGpuGroupbyConformance, AllAggregatesMatchOracle) {
  auto const& [where, workload] = GetParam();
  if (auto const why = skip_reason(where); !why.empty()) { GTEST_SKIP() << why; }
  auto const& w = groupby_workload_named(workload);
  auto const space = where == layout::three_on_one_host ? memory_space::host : memory_space::device;
  auto const input = place(w.input.view(), space);
  std::vector<aggregation> aggs{{aggregation_kind::count, -1}};
  for (size_type col = 1; col < w.input.num_columns(); ++col) {
    for (auto k : {aggregation_kind::sum, aggregation_kind::min, aggregation_kind::max,
                   aggregation_kind::avg}) {
      aggs.push_back({k, col});
    }
  }
  aggs.push_back({aggregation_kind::count, -1});  // twice: shares one partial count
  for (bool sorted : {false, true}) {
    SCOPED_TRACE(sorted ? "sort_by_key" : "unsorted");
    groupby_options o;
    o.algorithm = groupby_algorithm::multi_gpu;
    o.backend = backend::gpu;
    o.sort_by_key = sorted;
    o.devices = devices_of(where);
    o.exchange = exchange_of(where);
    auto const r = groupby(input.view(), 0, aggs, o);
    EXPECT_EQ(r.stats.algorithm, groupby_algorithm::multi_gpu);
    EXPECT_EQ(r.columns.column(0).space(), space);
    expect_groups_match_oracle(r, w.input.view(), aggs, sorted);
  }
}

INSTANTIATE_TEST_SUITE_P(
  Families, MultiGpuGroupbyConformance,
  ::testing::Combine(every_layout(), ::testing::ValuesIn(groupby_workload_names())),
  [](auto const& info) {
    return test_name("gpu_groupby_multi_gpu_" + layout_name(std::get<0>(info.param)) + "_" +
                     std::get<1>(info.param));
  });

// Distributed tables (distributed.hpp): every workload split unevenly over the
// ranks (an empty part among them), parts in their ranks' GPU memory or in host
// memory; the pieces of each result together against the oracle, the
// group-wide totals, the row ids numbered over the group, and the key order
// across ranks of the range-partitioned algorithms. Plus the refusals.

rank_group group_of(layout l) { return rank_group::in_process(devices_of(l), exchange_of(l)); }

/// Rows of `t` split over `ranks` parts by weight (rank r's weight: weight(r));
/// part r copied into its rank's GPU memory (or host memory).
struct split_table {
  std::vector<table> owned;
  distributed_table_view view;
};
template <class Weight>
split_table split_over(rank_group const& g, table_view const& t, Weight weight, bool host) {
  auto const n = static_cast<std::size_t>(g.size());
  std::vector<size_type> cut(n + 1, 0);
  size_type total_weight = 0;
  for (std::size_t r = 0; r < n; ++r) { total_weight += weight(r); }
  for (std::size_t r = 0; r < n; ++r) {
    cut[r + 1] = cut[r] + t.num_rows() * weight(r) / std::max<size_type>(total_weight, 1);
  }
  cut[n] = t.num_rows();
  split_table s;
  s.owned.resize(n);
  auto const place_part = [&](int r) {
    auto const i = static_cast<std::size_t>(r);
    std::vector<column> cols;
    for (auto const& c : t) {
      auto const w = static_cast<size_type>(size_of(c.type()));
      column_view const v(c.type(), static_cast<unsigned char const*>(c.data()) + cut[i] * w,
                          cut[i + 1] - cut[i], c.space());
      cols.push_back(column::copy_of(v, host ? host_resource() : device_resource()));
    }
    s.owned[i] = table(std::move(cols));
  };
  g.communicator()->for_each_rank(place_part);  // each on its rank's GPU
  for (auto const& p : s.owned) { s.view.parts.push_back(p.view()); }
  return s;
}

/// The weights: build parts 1, 0, 3, 1, 0, 3, ...; probe parts n, n - 1, ..., 1.
size_type build_weight(std::size_t r) { return r % 3 == 1 ? 0 : static_cast<size_type>(r % 3 + 1); }

rows concat_rows(std::vector<rows> const& pieces) {
  rows all;
  for (auto const& p : pieces) { all.insert(all.end(), p.begin(), p.end()); }
  std::sort(all.begin(), all.end());
  return all;
}

/// The keys of an integer key column as they lie, on the host.
std::vector<__int128> keys_in_order(column_view const& c) {
  auto const host = column::copy_of(c, host_resource());
  std::vector<__int128> out;
  auto const add = [&](auto const& v) { out.assign(v.begin(), v.end()); };
  switch (c.type()) {
    case type_id::int32: add(host.to_vector<std::int32_t>()); break;
    case type_id::int64: add(host.to_vector<std::int64_t>()); break;
    case type_id::uint32: add(host.to_vector<std::uint32_t>()); break;
    case type_id::uint64: add(host.to_vector<std::uint64_t>()); break;
    default: ADD_FAILURE() << "unexpected key type " << to_string(c.type());
  }
  return out;
}

/// The join workloads that stress distribution: skew and hot keys, m:n, empty and
/// one-row sides, key types and their extremes, wide payloads. (The single-GPU
/// kernels' tile edges are the single-table suite's.)
std::vector<std::string> distribution_workloads() {
  std::vector<std::string> const chosen{
    "pk_fk_uniform",      "zipf_1.5",       "match_0.5",       "many_to_many",
    "many_to_many_8byte", "all_keys_equal", "hot_key_half_probe", "empty_build",
    "empty_probe",        "empty_both",     "one_row",         "tile_edge_33",
    "extremes_int32",     "extremes_int64", "extremes_uint32", "extremes_uint64",
    "negative_keys",      "payloads_8",     "wide_zipf_int64_2"};
  auto const all = join_workload_names();
  for (auto const& c : chosen) {  // a renamed workload must not drop out unseen
    if (std::find(all.begin(), all.end(), c) == all.end()) {
      throw std::logic_error("no join workload named " + c);
    }
  }
  return chosen;
}

class DistributedJoinConformance
    : public ::testing::TestWithParam<std::tuple<join_algorithm, layout, std::string>> {};

TEST_P(DistributedJoinConformance, PiecesTogetherMatchOracle) {
  auto const& [algo, where, workload] = GetParam();
  if (auto const why = skip_reason(where); !why.empty()) { GTEST_SKIP() << why; }
  auto const& w = join_workload_named(workload);
  auto const group = group_of(where);
  auto const n = static_cast<size_type>(group.size());
  bool const host = where == layout::three_on_one_host;
  auto const build = split_over(group, w.build.view(), build_weight, host);
  auto const probe = split_over(
    group, w.probe.view(), [n](std::size_t r) { return n - static_cast<size_type>(r); }, host);
  // Host parts ask for host results (each rank copies its piece).
  auto* const mr = host ? host_resource() : nullptr;
  auto const space = host ? memory_space::host : memory_space::device;
  join_options o;
  o.algorithm = algo;
  o.build_payloads = payloads_of(w.build);
  o.probe_payloads = payloads_of(w.probe);
  for (auto kind :
       {join_kind::inner, join_kind::left_semi, join_kind::left_anti, join_kind::left_outer}) {
    SCOPED_TRACE(std::string("kind ") + std::string(to_string(kind)));
    o.kind = kind;
    auto const expected_table = oracle_join_table(w.build.view(), 0, w.probe.view(), 0, o);
    auto const expected_agg = aggregate_of(expected_table);

    o.output = output_form::index;
    for (auto ids : {type_id::int64, type_id::int32}) {
      if (ids == type_id::int32 && where != layout::three_on_one) { continue; }
      o.index_type = ids;
      auto const r = join(group, build.view, 0, probe.view, 0, o, mr);
      ASSERT_EQ(r.parts.size(), static_cast<std::size_t>(n));
      std::vector<rows> pieces;
      for (auto const& p : r.parts) {
        EXPECT_EQ(p.probe_rows.type(), ids);
        EXPECT_EQ(p.probe_rows.space(), space);
        EXPECT_EQ(p.build_rows.space(), space);
        pieces.push_back(index_rows(p, kind));
      }
      EXPECT_EQ(diff_rows(oracle_join_index(w.build.view(), 0, w.probe.view(), 0, kind,
                                            predicate::equal()),
                          concat_rows(pieces)),
                "");
      EXPECT_EQ(r.aggregate.count, expected_agg.count);
      EXPECT_EQ(r.stats.algorithm, algo);
    }

    o.output = output_form::table;
    auto const rt = join(group, build.view, 0, probe.view, 0, o, mr);
    std::vector<rows> pieces;
    for (auto const& p : rt.parts) {
      for (auto const& c : p.columns.view()) { EXPECT_EQ(c.space(), space); }
      pieces.push_back(table_rows(p.columns.view()));
    }
    EXPECT_EQ(diff_rows(expected_table, concat_rows(pieces)), "");
    EXPECT_EQ(rt.aggregate.count, expected_agg.count);
    EXPECT_EQ(rt.aggregate.checksum, expected_agg.checksum);
    if (algo == join_algorithm::multi_gpu_sort_merge) {
      // Range-partitioned: every key of rank r precedes every key of rank r + 1.
      std::optional<__int128> last_max;
      for (auto const& p : rt.parts) {
        auto const keys = keys_in_order(p.columns.column(0).view());
        if (keys.empty()) { continue; }
        auto const [lo, hi] = std::minmax_element(keys.begin(), keys.end());
        if (last_max) { EXPECT_LE(*last_max, *lo); }
        last_max = *hi;
      }
    }

    o.output = output_form::aggregate;
    auto const ra = join(group, build.view, 0, probe.view, 0, o);
    EXPECT_EQ(ra.aggregate.count, expected_agg.count);
    EXPECT_EQ(ra.aggregate.checksum, expected_agg.checksum);
  }
}

INSTANTIATE_TEST_SUITE_P(
  Families, DistributedJoinConformance,
  ::testing::Combine(multi_gpu_joins(), every_layout(), ::testing::ValuesIn(distribution_workloads())),
  [](auto const& info) { return join_case_name("gpu_distributed_", info); });

class DistributedGroupbyConformance
    : public ::testing::TestWithParam<std::tuple<layout, std::string>> {};

TEST_P(DistributedGroupbyConformance, PiecesTogetherMatchOracle) {
  auto const& [where, workload] = GetParam();
  if (auto const why = skip_reason(where); !why.empty()) { GTEST_SKIP() << why; }
  auto const& w = groupby_workload_named(workload);
  auto const group = group_of(where);
  auto const input =
    split_over(group, w.input.view(), build_weight, where == layout::three_on_one_host);
  std::vector<aggregation> aggs{{aggregation_kind::count, -1}};
  for (size_type col = 1; col < w.input.num_columns(); ++col) {
    for (auto k : {aggregation_kind::sum, aggregation_kind::min, aggregation_kind::max,
                   aggregation_kind::avg}) {
      aggs.push_back({k, col});
    }
  }
  auto const expected = oracle_groupby(w.input.view(), 0, aggs);
  for (bool sorted : {false, true}) {
    SCOPED_TRACE(sorted ? "sort_by_key" : "unsorted");
    groupby_options o;
    o.sort_by_key = sorted;
    bool const host = where == layout::three_on_one_host;  // host parts ask for host results
    auto const r = groupby(group, input.view, 0, aggs, o, host ? host_resource() : nullptr);
    ASSERT_EQ(r.parts.size(), static_cast<std::size_t>(group.size()));
    std::vector<group_row> all;
    std::vector<std::vector<group_row>> pieces;
    for (auto const& p : r.parts) {
      EXPECT_EQ(p.columns.column(0).space(), host ? memory_space::host : memory_space::device);
      pieces.push_back(groupby_rows(p.columns.view()));
      all.insert(all.end(), pieces.back().begin(), pieces.back().end());
    }
    std::sort(all.begin(), all.end(), [](auto const& a, auto const& b) { return a.key < b.key; });
    EXPECT_EQ(diff_groups(expected, all), "");  // a key in two pieces would show twice
    EXPECT_EQ(r.num_groups, static_cast<size_type>(expected.size()));
    if (sorted) {
      // Each piece ascends and the pieces follow one another.
      std::vector<__int128> keys;
      for (auto const& p : r.parts) {
        auto const piece = keys_in_order(p.columns.column(0).view());
        keys.insert(keys.end(), piece.begin(), piece.end());
      }
      EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
  Families, DistributedGroupbyConformance,
  ::testing::Combine(every_layout(), ::testing::ValuesIn(groupby_workload_names())),
  [](auto const& info) {
    return test_name("gpu_distributed_groupby_" + layout_name(std::get<0>(info.param)) + "_" +
                     std::get<1>(info.param));
  });

TEST(DistributedRefusals, BadRequestsAreRefusedBeforeAnyRankStarts) {
  if (device_count() == 0) { GTEST_SKIP() << "no GPU present: runs on a lent GPU"; }
  auto const group = rank_group::in_process({0, 0});
  auto const& w = join_workload_named(join_workload_names().front());
  auto const b = split_over(group, w.build.view(), [](std::size_t) { return 1; }, false);
  auto const p = split_over(group, w.probe.view(), [](std::size_t) { return 1; }, false);
  auto const refused = [&](join_options const& o, char const* words) {
    try {
      (void)join(group, b.view, 0, p.view, 0, o);
      ADD_FAILURE() << "not refused: " << words;
    } catch (logic_error const& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  join_options o;
  o.kind = join_kind::right_outer;
  refused(o, "left_outer");
  o = {};
  o.devices = {0};
  refused(o, "devices");
  o = {};
  o.algorithm = join_algorithm::radix_hash;
  refused(o, "multi_gpu_hash");
  o = {};
  distributed_table_view one{{b.view.parts.front()}};
  EXPECT_THROW((void)join(group, one, 0, p.view, 0, o), logic_error);
  // A NULL key in one part.
  auto nullable = column::copy_of(b.view.parts[1].column(0), device_resource());
  std::vector<std::uint8_t> mask(null_mask_bytes(nullable.size()), 0xff);
  if (nullable.size() > 0) {
    mask[0] = 0xfe;
    copy_bytes(nullable.make_nullable(), memory_space::device, mask.data(), memory_space::host,
               mask.size(), default_stream());
    default_stream().synchronize();
    nullable.set_null_count(1);
    std::vector<column_view> cols{nullable.view()};
    for (size_type c = 1; c < b.view.parts[1].num_columns(); ++c) {
      cols.push_back(b.view.parts[1].column(c));
    }
    distributed_table_view with_null{{b.view.parts[0], table_view(cols)}};
    try {
      (void)join(group, with_null, 0, p.view, 0, o);
      ADD_FAILURE() << "a NULL key was not refused";
    } catch (logic_error const& e) {
      EXPECT_NE(std::string(e.what()).find("NULL"), std::string::npos) << e.what();
    }
  }
  groupby_options g;
  g.algorithm = groupby_algorithm::hash;
  EXPECT_THROW((void)groupby(group, b.view, 0, {{aggregation_kind::count, -1}}, g), logic_error);
  EXPECT_THROW((void)groupby(group, b.view, 0, {{aggregation_kind::count_valid, 1}}), logic_error);
}

}  // namespace
}  // namespace joinery::test
