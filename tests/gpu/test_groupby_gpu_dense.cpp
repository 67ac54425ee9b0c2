// GPU group-by, HGB's dense tier (keys within one window of the sample): teams of blocks,
// 16-byte loads, one accumulator a pass, 32-bit partial sums (counted overflows, their own
// kernel) and the wrapped 32-bit sums, against the oracle (tests/support). GPU tests skip
// with a message when no GPU is present.
#include "gpu/groupby_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

#if defined(JOINERY_HAS_CUDA)

/// HGB with its phases: whether the dense tier produced the result.
bool dense_tier_ran(table_view const& device_input, std::vector<aggregation> const& aggs,
                    detail::gpu::groupby_tuning const& tuning, table& host_result,
                    int* team = nullptr, bool* narrow = nullptr, bool* lo32 = nullptr,
                    bool* counted = nullptr, bool* own_lo32 = nullptr, bool* wsum = nullptr) {
  // The wrapped sums (", wrapped 32-bit sums") take SUM of two int32 columns before the other
  // forms; the tests of those switch them off unless they ask whether they ran (`wsum`).
  auto tuned = tuning;
  if (wsum == nullptr) { tuned.hgb_dense_wsum = false; }
  std::vector<phase_time> phases;
  auto t = detail::gpu::run_groupby(groupby_algorithm::hash, device_input, 0, aggs, false,
                                    tuned, &phases, nullptr, default_stream(), device_resource());
  default_stream().synchronize();
  host_result = place(t.view(), memory_space::host);
  // "aggregate in shared memory, dense keys", with ", teams of N" when a team holds the window,
  // ", 32-bit sums" when int32 sums ran as 32-bit partials (", 32-bit sums counted in shared
  // memory" when their overflows counted there first), ", own 32-bit sum kernel" when a pass of
  // them ran hgb_dense_kernel's Lo32Only instantiation, and ", 16-byte loads" when every pass
  // ran the narrow kernel.
  std::string const name = "aggregate in shared memory, dense keys";
  std::string const teams = ", teams of ";
  std::string const wide = ", 16-byte loads";
  for (auto const& p : phases) {
    if (p.name.rfind(name, 0) != 0) { continue; }
    if (team != nullptr) {
      *team = p.name.compare(name.size(), teams.size(), teams) == 0
                ? std::stoi(p.name.substr(name.size() + teams.size()))
                : 1;
    }
    if (narrow != nullptr) {
      *narrow = p.name.size() >= wide.size() &&
                p.name.compare(p.name.size() - wide.size(), wide.size(), wide) == 0;
    }
    if (lo32 != nullptr) { *lo32 = p.name.find(", 32-bit sums") != std::string::npos; }
    if (counted != nullptr) { *counted = p.name.find(" counted in shared memory") != std::string::npos; }
    if (own_lo32 != nullptr) { *own_lo32 = p.name.find(", own 32-bit sum kernel") != std::string::npos; }
    if (wsum != nullptr) { *wsum = p.name.find(", wrapped 32-bit sums") != std::string::npos; }
    return true;
  }
  return false;
}
bool dense_tier_ran(table const& device_input, std::vector<aggregation> const& aggs,
                    detail::gpu::groupby_tuning const& tuning, table& host_result,
                    int* team = nullptr, bool* narrow = nullptr) {
  return dense_tier_ran(device_input.view(), aggs, tuning, host_result, team, narrow);
}

/// `keys` with two outliers (10^9 and -10^9) on rows the dense tier's evenly spaced sample skips,
/// one near the start and one near the end: a block meets them mid-run.
template <class K>
std::vector<K> with_unsampled_outliers(std::vector<K> keys) {
  auto const n = static_cast<size_type>(keys.size());
  size_type const samples = std::min<size_type>(n, size_type{1} << 14);
  std::vector<bool> sampled(keys.size(), false);
  for (size_type i = 0; i < samples; ++i) { sampled[static_cast<std::size_t>(i * n / samples)] = true; }
  std::size_t first = 1;
  while (sampled[first]) { ++first; }
  std::size_t last = keys.size() - 1;
  while (sampled[last]) { --last; }
  // 8-byte keys: beyond 32 bits as well, so that a 64-bit offset is needed to see them.
  K const far = sizeof(K) == 8 ? static_cast<K>(std::int64_t{1} << 40) : K{1000000000};
  keys[first] = far;
  keys[last] = static_cast<K>(-far);
  return keys;
}

/// Every aggregate of `keys` through HGB against the oracle; `dense` says whether the dense
/// tier must have produced it (else the hashed tiers did, after it declined or overflowed).
template <class K>
void check_dense_tier(std::vector<K> const& keys, bool dense, std::string const& what) {
  auto const input = make_input(keys, 31);
  auto const all = all_aggregations(input.view());
  auto const expected = oracle_groupby(input.view(), 0, all);
  auto const device = place(input.view(), memory_space::device);
  for (int one : {-1, 0, 1}) {
    detail::gpu::groupby_tuning t;
    t.hgb_one_group = one;
    table host;
    EXPECT_EQ(dense_tier_ran(device, all, t, host), dense) << what << ", one_group " << one;
    EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << what << ", one_group " << one;
  }
}

TEST(GpuHashGroupby, DenseTierTakesKeysWithinOneWindow) {
  JOINERY_SKIP_WITHOUT_GPU();
  size_type const n = 300000;
  // 1000 keys straddling zero.
  check_dense_tier(uniform_keys<std::int32_t>(n, 1000, 3), true, "int32 over [-500, 500)");
  // Windows that wrap: the centred window starts below the smallest key of the type (int32,
  // int64) or ends past the largest (uint32, uint64, whose all-ones key is the hashed table's
  // empty marker).
  std::vector<std::int32_t> low32(static_cast<std::size_t>(n));
  std::vector<std::uint32_t> high32(low32.size());
  std::vector<std::int64_t> low64(low32.size());
  std::vector<std::uint64_t> high64(low32.size());
  auto const u = uniform_keys<std::uint64_t>(n, 3000, 4);
  for (std::size_t i = 0; i < low32.size(); ++i) {
    low32[i] = std::numeric_limits<std::int32_t>::min() + static_cast<std::int32_t>(u[i]);
    high32[i] = std::numeric_limits<std::uint32_t>::max() - static_cast<std::uint32_t>(u[i]);
    low64[i] = std::numeric_limits<std::int64_t>::min() + static_cast<std::int64_t>(u[i]);
    high64[i] = std::numeric_limits<std::uint64_t>::max() - u[i];
  }
  low32[5] = std::numeric_limits<std::int32_t>::min();
  high32[5] = std::numeric_limits<std::uint32_t>::max();
  low64[5] = std::numeric_limits<std::int64_t>::min();
  high64[5] = std::numeric_limits<std::uint64_t>::max();
  check_dense_tier(low32, true, "int32 from the smallest key");
  check_dense_tier(high32, true, "uint32 to the largest key");
  check_dense_tier(low64, true, "int64 from the smallest key");
  check_dense_tier(high64, true, "uint64 to the largest key");
  // One group, and runs of equal keys (uniform warps, the carry).
  check_dense_tier(std::vector<std::int64_t>(static_cast<std::size_t>(n), -5), true, "one group");
  std::vector<std::uint32_t> runs(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < runs.size(); ++i) { runs[i] = static_cast<std::uint32_t>(i / 3000); }
  check_dense_tier(runs, true, "runs of 3000");
  // Fewer rows than one tile, and than the sample.
  check_dense_tier(uniform_keys<std::int32_t>(5000, 50, 5), true, "5000 rows");
  check_dense_tier(uniform_keys<std::int32_t>(7, 3, 5), true, "7 rows");
}

TEST(GpuHashGroupby, DenseTierDeclinesOrStartsOverBeyondItsWindow) {
  JOINERY_SKIP_WITHOUT_GPU();
  size_type const n = 300000;
  // Keys spread over 2^40 values: the sample spans too much; the hashed tiers run.
  check_dense_tier(uniform_keys<std::int64_t>(n, std::int64_t{1} << 40, 6), false, "2^40 domain");
  // 4-byte keys spread by a large odd factor: the sample spans too much.
  auto spread = uniform_keys<std::uint32_t>(n, 1000, 7);
  for (auto& k : spread) { k *= 2654435761U; }
  check_dense_tier(spread, false, "1000 keys spread over 2^32");
  // Dense keys with outliers on rows the sample skips (one in the first tile, one in the last):
  // a block overflows the window mid-run, after others may have merged their groups, and the
  // run starts over with the hashed tiers.
  check_dense_tier(with_unsampled_outliers(uniform_keys<std::int32_t>(n, 1000, 8)), false,
                   "outliers the sample misses");
  check_dense_tier(with_unsampled_outliers(uniform_keys<std::int64_t>(n, 1000, 10)), false,
                   "int64 outliers the sample misses");
  // Off: the hashed table even for dense keys.
  auto const input = make_input(uniform_keys<std::int32_t>(n, 1000, 9), 32);
  std::vector<aggregation> const aggs{{aggregation_kind::sum, 1}, {aggregation_kind::max, 3}};
  detail::gpu::groupby_tuning off;
  off.hgb_dense_keys = false;
  table host;
  EXPECT_FALSE(dense_tier_ran(place(input.view(), memory_space::device), aggs, off, host));
  EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, aggs), groupby_rows(host.view())), "");
}

TEST(GpuHashGroupby, DenseTierRunsOneAccumulatorAPassWhenPairsDoNotFit) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 2^14 dense keys: two 8-byte accumulators a pass (SUM of int32 and of int64) take 256 KB of
  // shared memory, more than a block has; one a pass takes 128 KB and fits.
  auto const input = make_input(uniform_keys<std::int32_t>(600000, 1 << 14, 21), 21);
  auto const device = place(input.view(), memory_space::device);
  std::vector<std::vector<aggregation>> const cases{
    {{aggregation_kind::sum, 1}, {aggregation_kind::sum, 3}},
    {{aggregation_kind::count, -1}, {aggregation_kind::avg, 1}, {aggregation_kind::max, 4},
     {aggregation_kind::sum, 6}, {aggregation_kind::min, 2}}};
  for (auto const& aggs : cases) {
    auto const expected = oracle_groupby(input.view(), 0, aggs);
    for (int one : {-1, 0}) {
      detail::gpu::groupby_tuning t;
      t.hgb_one_group = one;
      table host;
      EXPECT_TRUE(dense_tier_ran(device, aggs, t, host)) << aggs.size() << " aggregates";
      EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << aggs.size() << " aggregates";
    }
  }
  // 100 kB and one block a window: not even one accumulator a pass fits; the hashed tiers run.
  detail::gpu::groupby_tuning small;
  small.hgb_shared_bytes = 100000;
  small.hgb_dense_team = 1;
  table host;
  EXPECT_FALSE(dense_tier_ran(device, cases[0], small, host));
  EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, cases[0]), groupby_rows(host.view())), "");
}

TEST(GpuHashGroupby, DenseTierSplitsAWideWindowOverATeamOfBlocks) {
  JOINERY_SKIP_WITHOUT_GPU();
  // 2^16 dense keys straddling zero: wider than one block's shared memory even for one 4-byte
  // accumulator, so teams of blocks share the window, each member aggregating its slice.
  std::vector<std::int32_t> keys = uniform_keys<std::int32_t>(700000, 1 << 16, 23);
  for (auto& k : keys) { k -= 30000; }
  auto const input = make_input(keys, 23);
  auto const device = place(input.view(), memory_space::device);
  // MAX: one pass of 3 members (cost 3 x (16 + 8) = 72 against 80 for two passes of 2); SUM of
  // the int32 and the uint32 column in 8-byte sums: two passes of 3 (120, as much as one pass of
  // 5: the smaller team); with the int32 sum in 32-bit partials (4 + 8 bytes and a seen byte a
  // slot) one pass of 4 (96); five aggregates, the bound raised.
  struct team_case {
    std::vector<aggregation> aggs;
    int row_cost;
    int team;  ///< expected; 0: not checked
    int lo32 = -1;
  };
  std::vector<team_case> const cases{
    {{{aggregation_kind::max, 1}, {aggregation_kind::max, 2}}, 0, 3},
    {{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}}, 0, 3},
    {{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}}, 0, 4, 1},
    {{{aggregation_kind::count, -1}, {aggregation_kind::avg, 1}, {aggregation_kind::max, 4},
      {aggregation_kind::sum, 6}, {aggregation_kind::min, 2}}, 1000, 0}};
  for (auto const& c : cases) {
    auto const expected = oracle_groupby(input.view(), 0, c.aggs);
    for (int one : {-1, 0, 1}) {
      detail::gpu::groupby_tuning t;
      t.hgb_one_group = one;
      t.hgb_dense_row_cost = c.row_cost;
      t.hgb_dense_lo32 = c.lo32;
      table host;
      int team = 0;
      EXPECT_TRUE(dense_tier_ran(device, c.aggs, t, host, &team)) << c.aggs.size() << " aggregates";
      EXPECT_GT(team, 1) << c.aggs.size() << " aggregates";
      if (c.team > 0) { EXPECT_EQ(team, c.team) << c.aggs.size() << " aggregates"; }
      EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << c.aggs.size() << " aggregates";
    }
  }
  // 2^14 keys, one 8-byte sum: in 33 kB a block teams of 5, in 23 kB of 7 (the grid a whole
  // number of teams); 4-byte keys and 8-byte keys at the top of their range.
  std::vector<aggregation> const sum{{aggregation_kind::sum, 1}};
  auto top64 = uniform_keys<std::int64_t>(300000, 1 << 14, 25);
  // uniform_keys straddles zero: [-2^13, 2^13) -> [max - 2^14 + 1, max].
  for (auto& k : top64) { k = std::numeric_limits<std::int64_t>::max() - (k + (1 << 13)); }
  auto const narrow32 = make_input(uniform_keys<std::int32_t>(300000, 1 << 14, 24), 24);
  auto const narrow64 = make_input(top64, 25);
  for (auto const* narrow : {&narrow32, &narrow64}) {
    auto const narrow_device = place(narrow->view(), memory_space::device);
    auto const expected = oracle_groupby(narrow->view(), 0, sum);
    for (auto const [bytes, expected_team] : {std::pair{33000, 5}, std::pair{23000, 7}}) {
      for (int one : {-1, 1}) {
        detail::gpu::groupby_tuning t;
        t.hgb_shared_bytes = bytes;
        t.hgb_dense_row_cost = 1000;
        t.hgb_one_group = one;
        std::string const what = std::to_string(bytes) + " bytes, " +
                                 (narrow == &narrow32 ? "int32" : "int64") + " keys";
        table host;
        int team = 0;
        EXPECT_TRUE(dense_tier_ran(narrow_device, sum, t, host, &team)) << what;
        EXPECT_EQ(team, expected_team) << what;
        EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << what;
      }
    }
  }
  // Outliers on rows the sample skips (first and last tile): a member overflows mid-run and the
  // run starts over with the hashed tiers.
  for (auto const& input_out :
       {make_input(with_unsampled_outliers(uniform_keys<std::int32_t>(300000, 1 << 14, 26)), 26),
        make_input(with_unsampled_outliers(uniform_keys<std::int64_t>(300000, 1 << 14, 27)), 27)}) {
    detail::gpu::groupby_tuning t;
    t.hgb_shared_bytes = 33000;
    t.hgb_dense_row_cost = 1000;
    table host;
    EXPECT_FALSE(dense_tier_ran(place(input_out.view(), memory_space::device), sum, t, host));
    EXPECT_EQ(diff_groups(oracle_groupby(input_out.view(), 0, sum), groupby_rows(host.view())), "");
  }
  // The hashed tiers: a team of at most 1 (one block a window), a window wider than 8 blocks,
  // or a row cost above the bound (SUM: 120 against 40).
  struct refusal {
    int shared_bytes, team, row_cost;
  };
  for (auto const r : {refusal{-1, 1, 1000}, refusal{10000, 0, 1000}, refusal{-1, 0, 40}}) {
    detail::gpu::groupby_tuning t;
    t.hgb_shared_bytes = r.shared_bytes;
    t.hgb_dense_team = r.team;
    t.hgb_dense_row_cost = r.row_cost;
    std::string const what = std::to_string(r.shared_bytes) + " bytes, team " +
                             std::to_string(r.team) + ", row cost " + std::to_string(r.row_cost);
    table host;
    EXPECT_FALSE(dense_tier_ran(device, cases[1].aggs, t, host)) << what;
    EXPECT_EQ(diff_groups(oracle_groupby(input.view(), 0, cases[1].aggs), groupby_rows(host.view())),
              "")
        << what;
  }
}

TEST(GpuHashGroupby, DenseTierLoadsAlignedFourByteColumnsSixteenBytesAtATime) {
  JOINERY_SKIP_WITHOUT_GPU();
  // Rows not a multiple of a tile (the last tiles load row by row); one block a window (1000
  // keys) and teams (2^16 keys); 4- and 8-byte keys (runs of 2 rows a thread for 8-byte keys
  // without a team, else of 4).
  size_type const n = 700001;
  auto const small32 = make_input(uniform_keys<std::int32_t>(n, 1000, 41), 41);
  auto const wide32 = make_input(uniform_keys<std::int32_t>(n, 1 << 16, 42), 42);
  auto const wide64 = make_input(uniform_keys<std::int64_t>(n, 1 << 16, 43), 43);
  auto const small64 = make_input(uniform_keys<std::int64_t>(n, 1000, 44), 44);
  // Columns 1 and 2 are int32 and uint32; column 3 is int64.
  std::vector<aggregation> const max12{{aggregation_kind::max, 1}, {aggregation_kind::max, 2}};
  std::vector<aggregation> const sum12{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
  std::vector<aggregation> const with8{{aggregation_kind::min, 1}, {aggregation_kind::sum, 3}};
  struct load_case {
    table const* input;
    std::vector<aggregation> const* aggs;
    bool narrow;  ///< expected with the narrow form allowed
    char const* what;
  };
  for (auto const& c : {load_case{&small32, &max12, true, "1000 keys, MAX"},
                        load_case{&small32, &sum12, true, "1000 keys, SUM"},
                        load_case{&wide32, &max12, true, "2^16 int32 keys, MAX"},
                        load_case{&wide32, &sum12, true, "2^16 int32 keys, SUM"},
                        load_case{&wide64, &max12, true, "2^16 int64 keys, MAX"},
                        load_case{&small64, &sum12, true, "1000 int64 keys, SUM"},
                        load_case{&small32, &with8, false, "an 8-byte column"}}) {
    auto const device = place(c.input->view(), memory_space::device);
    auto const expected = oracle_groupby(c.input->view(), 0, *c.aggs);
    for (bool const allow : {true, false}) {
      detail::gpu::groupby_tuning t;
      t.hgb_dense_narrow = allow;
      t.hgb_dense_row_cost = 1000;
      table host;
      bool narrow = !(allow && c.narrow);
      EXPECT_TRUE(dense_tier_ran(device, *c.aggs, t, host, nullptr, &narrow)) << c.what;
      EXPECT_EQ(narrow, allow && c.narrow) << c.what << ", narrow allowed: " << allow;
      EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << c.what;
    }
  }
  // Columns that start 4 bytes past a 16-byte boundary (views one row into the device
  // columns): the general form, with the same result.
  auto const device = place(wide32.view(), memory_space::device);
  auto const device_view = device.view();
  auto const host_view = wide32.view();
  std::vector<column_view> shifted_device;
  std::vector<column_view> shifted_host;
  for (size_type i = 0; i < 3; ++i) {
    auto const& d = device_view.column(i);
    auto const& h = host_view.column(i);
    auto const bytes = static_cast<std::size_t>(size_of(d.type()));
    shifted_device.emplace_back(d.type(), static_cast<char const*>(d.data()) + bytes, n - 1,
                                memory_space::device);
    shifted_host.emplace_back(h.type(), static_cast<char const*>(h.data()) + bytes, n - 1,
                              memory_space::host);
  }
  table_view const shifted(shifted_device);
  for (auto const* aggs : {&max12, &sum12}) {
    detail::gpu::groupby_tuning t;
    t.hgb_dense_row_cost = 1000;
    table host;
    bool narrow = true;
    EXPECT_TRUE(dense_tier_ran(shifted, *aggs, t, host, nullptr, &narrow));
    EXPECT_FALSE(narrow);
    EXPECT_EQ(diff_groups(oracle_groupby(table_view(shifted_host), 0, *aggs),
                          groupby_rows(host.view())),
              "");
  }
}

TEST(GpuHashGroupby, DenseTierSumsInt32ValuesInThirtyTwoBitPartials) {
  JOINERY_SKIP_WITHOUT_GPU();
  size_type const n = 300001;
  // One block a window (1000 keys), teams (2^16 int32 and int64 keys), and a window whose first
  // tiles hold one key (the one-group blocks, whose warps add 32 rows' 64-bit sum at once).
  auto hot_first = uniform_keys<std::int32_t>(n, 1 << 16, 52);
  std::fill(hot_first.begin(), hot_first.begin() + n / 3, 5);
  std::vector<table> inputs;
  std::vector<std::string> names;
  // Values: full range (a quarter of the adds overflow), and the extremes, where every add after
  // a group's first overflows the partial.
  std::vector<std::pair<std::vector<std::int32_t>, std::string>> const values{
    {random_values<std::int32_t>(n, 53), "random values"},
    {std::vector<std::int32_t>(static_cast<std::size_t>(n), std::numeric_limits<std::int32_t>::max()),
     "INT32_MAX"},
    {std::vector<std::int32_t>(static_cast<std::size_t>(n), std::numeric_limits<std::int32_t>::min()),
     "INT32_MIN"}};
  for (auto const& [v, vname] : values) {
    inputs.push_back(lo32_input(uniform_keys<std::int32_t>(n, 1000, 50), v, 50));
    names.push_back("1000 int32 keys, " + vname);
    inputs.push_back(lo32_input(uniform_keys<std::int32_t>(n, 1 << 16, 51), v, 51));
    names.push_back("2^16 int32 keys, " + vname);
    inputs.push_back(lo32_input(uniform_keys<std::int64_t>(n, 1 << 16, 54), v, 54));
    names.push_back("2^16 int64 keys, " + vname);
    inputs.push_back(lo32_input(hot_first, v, 55));
    names.push_back("2^16 keys, the first third one key, " + vname);
  }
  // Two 32-bit sums (one update branch for both), and a mix of them with other accumulators.
  std::vector<aggregation> const sums{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
  std::vector<aggregation> const mixed{{aggregation_kind::avg, 2}, {aggregation_kind::max, 1},
                                       {aggregation_kind::sum, 1}, {aggregation_kind::sum, 3},
                                       {aggregation_kind::count, -1}};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto const device = place(inputs[i].view(), memory_space::device);
    for (auto const* aggs : {&sums, &mixed}) {
      auto const expected = oracle_groupby(inputs[i].view(), 0, *aggs);
      // 2: the overflows counted in shared memory first (6 bytes a group: the 2^16 windows
      // take teams of 4).
      for (int const lo32 : {2, 1, -1}) {
        // one_group 0: every block runs hgb_dense_kernel, whose warps on one key (the first
        // third) add their reduced rows at once.
        // own_kernel false: the two sums through the narrow kernel of every operation.
        for (int const one : {-1, 0, 1}) {
          for (bool const own_kernel : {true, false}) {
            if (!own_kernel && (aggs != &sums || lo32 < 0)) { continue; }
            detail::gpu::groupby_tuning t;
            t.hgb_dense_lo32 = lo32;
            t.hgb_one_group = one;
            t.hgb_dense_row_cost = 1000;
            t.hgb_dense_lo32_kernel = own_kernel;
            std::string const what = names[i] + ", " + std::to_string(aggs->size()) +
                                     " aggregates, lo32 " + std::to_string(lo32) + ", one_group " +
                                     std::to_string(one) + ", own kernel " +
                                     std::to_string(own_kernel);
            table host;
            bool ran = lo32 < 0;
            bool counted = lo32 != 2;
            int team = 0;
            bool narrow = false;
            bool own = !own_kernel;
            EXPECT_TRUE(
                dense_tier_ran(device, *aggs, t, host, &team, &narrow, &ran, &counted, &own))
                << what;
            EXPECT_EQ(ran, lo32 > 0) << what;
            EXPECT_EQ(counted, lo32 == 2) << what;
            // The own kernel takes a pass whose every accumulator (policy::fused_accs of them)
            // is a 32-bit partial, unless a team over 4-byte keys holds the window. The two sums
            // make such passes, except counted over 2^16 8-byte keys, whose cheapest layout
            // (dense_layout_for) takes one sum a pass. The mixed set's passes may pair two of
            // its sums, so only its off switch is checked.
            bool const int32_keys = inputs[i].view().column(0).type() == type_id::int32;
            bool const one_sum_a_pass = lo32 == 2 && !int32_keys && team > 1;
            if (aggs == &sums) {
              EXPECT_TRUE(narrow) << what;
              EXPECT_EQ(own, own_kernel && lo32 > 0 && !(int32_keys && team > 1) &&
                               !one_sum_a_pass)
                  << what;
            } else if (!own_kernel) {
              EXPECT_FALSE(own) << what;
            }
            EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << what;
          }
        }
      }
    }
  }
  // The derived choice: spilled from 3 * 2^14 sampled keys and without a hot key (the first
  // third of the rows on one key is one); counted where one block then holds what 8-byte sums
  // need two passes or a team of 2 for (2^14 keys), with or without a hot key.
  inputs.push_back(lo32_input(uniform_keys<std::int32_t>(n, 1 << 14, 58), values[0].first, 58));
  names.push_back("2^14 int32 keys, random values");
  auto hot_small = uniform_keys<std::int32_t>(n, 1 << 14, 59);
  std::fill(hot_small.begin(), hot_small.begin() + n / 3, 7);
  inputs.push_back(lo32_input(hot_small, values[0].first, 59));
  names.push_back("2^14 int32 keys, the first third one key, random values");
  struct choice {
    std::size_t index;
    bool lo32;
    bool counted;
  };
  for (auto const& c : {choice{0, false, false}, choice{1, true, false}, choice{2, true, false},
                        choice{3, false, false}, choice{inputs.size() - 2, true, true},
                        choice{inputs.size() - 1, true, true}}) {
    auto const device = place(inputs[c.index].view(), memory_space::device);
    table host;
    bool ran = !c.lo32;
    bool counted = !c.counted;
    EXPECT_TRUE(dense_tier_ran(device, sums, {}, host, nullptr, nullptr, &ran, &counted))
        << names[c.index];
    EXPECT_EQ(ran, c.lo32) << names[c.index];
    EXPECT_EQ(counted, c.counted) << names[c.index];
    EXPECT_EQ(diff_groups(oracle_groupby(inputs[c.index].view(), 0, sums), groupby_rows(host.view())),
              "")
        << names[c.index];
  }
  // A key outside the window on rows the sample skips: the dense tier stops, its spills with
  // it, and the hashed tiers give the result.
  auto const outliers = lo32_input(with_unsampled_outliers(uniform_keys<std::int32_t>(n, 1 << 16, 56)),
                                   random_values<std::int32_t>(n, 57), 56);
  for (int const lo32 : {1, 2}) {
    detail::gpu::groupby_tuning forced;
    forced.hgb_dense_lo32 = lo32;
    table host;
    EXPECT_FALSE(dense_tier_ran(place(outliers.view(), memory_space::device), sums, forced, host));
    EXPECT_EQ(diff_groups(oracle_groupby(outliers.view(), 0, sums), groupby_rows(host.view())), "")
        << lo32;
  }
}

/// Keys uniform over `domain` but for `hot`, which holds `count` rows from row `at` on (and no
/// others).
template <class K>
std::vector<K> keys_with_run(size_type n, size_type domain, std::uint64_t seed, K hot,
                             std::size_t at, std::size_t count) {
  auto keys = uniform_keys<K>(n, domain, seed);
  for (auto& k : keys) {
    if (k == hot) { k = static_cast<K>(hot + 1); }
  }
  std::fill(keys.begin() + static_cast<std::ptrdiff_t>(at),
            keys.begin() + static_cast<std::ptrdiff_t>(at + count), hot);
  return keys;
}

TEST(GpuHashGroupby, DenseTierWrappedSums) {
  JOINERY_SKIP_WITHOUT_GPU();
  size_type const n = 300001;  // a partial last tile
  std::vector<aggregation> const sums{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
  struct case_t {
    table input;
    std::string what;
    bool wsum;  ///< the wrapped sums give the result
    int team;   ///< then in teams of (0: not checked)
  };
  std::vector<case_t> cases;
  std::vector<std::pair<std::vector<std::int32_t>, std::string>> const values{
    {random_values<std::int32_t>(n, 61), "random values"},
    {std::vector<std::int32_t>(static_cast<std::size_t>(n), std::numeric_limits<std::int32_t>::max()),
     "INT32_MAX"},
    {std::vector<std::int32_t>(static_cast<std::size_t>(n), std::numeric_limits<std::int32_t>::min()),
     "INT32_MIN"}};
  for (auto const& [v, vname] : values) {
    // 2^16 keys straddling zero: 4 blocks of 17,800 slots each (H100 / H200: 227 KiB less the
    // static reserve), a window that wraps past the type's end for the unsigned keys.
    cases.push_back({lo32_input(uniform_keys<std::int32_t>(n, 1 << 16, 62), v, 62),
                     "2^16 int32 keys, " + vname, true, 4});
    cases.push_back({lo32_input(uniform_keys<std::int64_t>(n, 1 << 16, 63), v, 63),
                     "2^16 int64 keys, " + vname, true, 4});
    cases.push_back({lo32_input(uniform_keys<std::uint32_t>(n, 1 << 16, 64), v, 64),
                     "2^16 uint32 keys, " + vname, true, 4});
    cases.push_back({lo32_input(uniform_keys<std::uint64_t>(n, 3 << 13, 65), v, 65),
                     "3 * 2^13 uint64 keys, " + vname, true, 2});
    cases.push_back({lo32_input(uniform_keys<std::int32_t>(n, 1000, 66), v, 66),
                     "1000 int32 keys, " + vname, true, 1});
  }
  // One key's rows inside the second half of the first tile (rows 4096..8191 of 8192 a tile,
  // whose counts are never read back during the pass): 255 rows, the most a count holds, decode
  // exactly (with random values and with the extremes, where the top bytes' sum reaches
  // 255 * -128 and the low bytes' 255 * (2^24 - 1)); 256 wrap the count, the counts then fall
  // short of the rows and the run starts over without them. A run of 1000 from row 0: the early
  // stop (counts read back on rows 0, 4, 8, ...) or that check sends it the other way too.
  auto const big = random_values<std::int32_t>(n, 67);
  for (auto const& [v, vname] : values) {
    cases.push_back(
        {lo32_input(keys_with_run<std::int32_t>(n, 1 << 16, 68, 7, 4096, 255), v, 68),
         "255 rows of one key in one block, " + vname, true, 4});
  }
  cases.push_back({lo32_input(keys_with_run<std::int32_t>(n, 1 << 16, 69, 7, 4096, 256), big, 69),
                   "256 rows of one key in one block", false, 0});
  cases.push_back({lo32_input(keys_with_run<std::int32_t>(n, 1 << 16, 70, 7, 0, 1000), big, 70),
                   "1000 rows of one key in one block", false, 0});
  // A key outside the window on rows the sample skips: the wrapped sums stop, and the other
  // forms give the result.
  cases.push_back({lo32_input(with_unsampled_outliers(uniform_keys<std::int32_t>(n, 1 << 16, 71)),
                              big, 71),
                   "a key outside the window", false, 0});
  // The teams above assume a block's 227 KiB of shared memory (H100, H200); with less, wider
  // teams are declined, so only the results are checked there.
  bool const full_smem = get_device_info(0).shared_memory_per_block_optin >= 232448;
  for (auto const& c : cases) {
    auto const device = place(c.input.view(), memory_space::device);
    auto const expected = oracle_groupby(c.input.view(), 0, sums);
    for (bool const on : {true, false}) {
      detail::gpu::groupby_tuning t;
      t.hgb_dense_wsum = on;
      std::string const what = c.what + (on ? ", on" : ", off");
      table host;
      int team = 0;
      bool wsum = false;
      bool const dense = dense_tier_ran(device, sums, t, host, &team, nullptr, nullptr, nullptr,
                                        nullptr, &wsum);
      if (full_smem || !(on && c.wsum)) { EXPECT_EQ(dense && wsum, on && c.wsum) << what; }
      if (full_smem && on && c.wsum) {
        EXPECT_TRUE(dense) << what;
        EXPECT_EQ(team, c.team) << what;
      }
      EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << what;
    }
  }
  // Declined before any pass: a column off a 16-byte boundary, a third accumulator, a sum of uint32
  // values, and 64 keys over 2^21 rows (more than 128 rows a block's group on 132 SMs or fewer).
  auto const base = lo32_input(uniform_keys<std::int32_t>(n, 1 << 16, 72), big, 72);
  auto const base_device = place(base.view(), memory_space::device);
  auto const base_device_view = base_device.view();
  auto const base_view = base.view();
  std::vector<column_view> shifted;
  for (size_type i = 0; i < 3; ++i) {
    auto const& d = base_device_view.column(i);
    shifted.emplace_back(d.type(), static_cast<char const*>(d.data()) + size_of(d.type()), n - 1,
                         memory_space::device);
  }
  std::vector<column_view> shifted_host;
  for (size_type i = 0; i < 3; ++i) {
    auto const& h = base_view.column(i);
    shifted_host.emplace_back(h.type(), static_cast<char const*>(h.data()) + size_of(h.type()),
                              n - 1, memory_space::host);
  }
  auto const many = size_type{1} << 21;
  auto const dense_many = lo32_input(uniform_keys<std::int32_t>(many, 64, 73),
                                     random_values<std::int32_t>(many, 74), 73);
  // (SUM of one column twice is one accumulator: still two sums.)
  std::vector<aggregation> const three{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2},
                                       {aggregation_kind::count, -1}};
  std::vector<aggregation> const wide{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 3}};
  struct declined {
    table_view device;
    table_view host;
    std::vector<aggregation> const* aggs;
    std::string what;
  };
  auto const many_device = place(dense_many.view(), memory_space::device);
  for (auto const& d : {declined{table_view(shifted), table_view(shifted_host), &sums, "unaligned"},
                        declined{base_device.view(), base.view(), &three, "a count beside the sums"},
                        declined{base_device.view(), base.view(), &wide, "a uint32 column"},
                        declined{many_device.view(), dense_many.view(), &sums, "64 keys, 2^21 rows"}}) {
    table host;
    bool wsum = true;
    EXPECT_TRUE(dense_tier_ran(d.device, *d.aggs, {}, host, nullptr, nullptr, nullptr, nullptr,
                               nullptr, &wsum))
        << d.what;
    EXPECT_FALSE(wsum) << d.what;
    EXPECT_EQ(diff_groups(oracle_groupby(d.host, 0, *d.aggs), groupby_rows(host.view())), "")
        << d.what;
  }
}

// The wrapped sums' kernel reads the sample itself and declines a window wider than its teams
// hold (2^17 keys: 8 blocks of 17,800 slots) before any pass; the host then reads the sample the
// kernel copied for the other forms. Signed keys straddling zero and unsigned keys at the top
// of their range check the sample's order (its bits with the sign flipped).
TEST(GpuHashGroupby, DenseTierWrappedSumsDeclineFromTheDeviceSample) {
  JOINERY_SKIP_WITHOUT_GPU();
  size_type const n = 200003;
  std::vector<aggregation> const sums{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
  auto const wide = lo32_input(uniform_keys<std::int32_t>(n, 1 << 17, 81),
                               random_values<std::int32_t>(n, 82), 81);
  auto const device = place(wide.view(), memory_space::device);
  table host;
  bool wsum = true;
  dense_tier_ran(device, sums, {}, host, nullptr, nullptr, nullptr, nullptr, nullptr, &wsum);
  EXPECT_FALSE(wsum);
  EXPECT_EQ(diff_groups(oracle_groupby(wide.view(), 0, sums), groupby_rows(host.view())), "");
  // 1000 keys just below zero and just below the unsigned maximum: one block each.
  std::vector<std::int32_t> negative(static_cast<std::size_t>(n));
  std::vector<std::uint32_t> top(static_cast<std::size_t>(n));
  auto const u = uniform_keys<std::int32_t>(n, 1000, 83);
  for (std::size_t i = 0; i < negative.size(); ++i) {
    auto const k = u[i] % 1000;
    negative[i] = -1 - (k < 0 ? -k : k);
    top[i] = std::numeric_limits<std::uint32_t>::max() - static_cast<std::uint32_t>(k < 0 ? -k : k);
  }
  for (auto const& in : {lo32_input(negative, random_values<std::int32_t>(n, 84), 84),
                         lo32_input(top, random_values<std::int32_t>(n, 85), 85)}) {
    auto const d = place(in.view(), memory_space::device);
    int team = 0;
    bool ran = false;
    EXPECT_TRUE(dense_tier_ran(d, sums, {}, host, &team, nullptr, nullptr, nullptr, nullptr,
                               &ran));
    EXPECT_TRUE(ran);
    EXPECT_EQ(team, 1);
    EXPECT_EQ(diff_groups(oracle_groupby(in.view(), 0, sums), groupby_rows(host.view())), "");
  }
}

TEST(GpuHashGroupby, DenseTierCountedSumsMoveFullCountersToTheSpills) {
  JOINERY_SKIP_WITHOUT_GPU();
  // Two groups, every value INT32_MAX in one column and INT32_MIN in the other: every second
  // add overflows each partial, one way in the first sum and the other way in the second. With
  // 2^25 rows over at most 2 * 132 blocks (H100/H200) a block meets each group about 63,000
  // times, so each counter passes +-2^14 (policy lo32_count_flush) and moves it to the spills.
  // The first half holds the keys in runs of 2048 (warps on one key: the one-group blocks, or
  // with one_group 0 the dense kernel's reduced adds, many overflows at once), the second half
  // alternates them (one add a row).
  auto const n = std::size_t{1} << 25;
  std::vector<std::int32_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = static_cast<std::int32_t>(i < n / 2 ? (i / 2048) % 2 : i % 2);
  }
  std::vector<column> cols;
  cols.push_back(column::from_host(keys));
  cols.push_back(column::from_host(std::vector<std::int32_t>(n, std::numeric_limits<std::int32_t>::max())));
  cols.push_back(column::from_host(std::vector<std::int32_t>(n, std::numeric_limits<std::int32_t>::min())));
  table const input(std::move(cols));
  std::vector<aggregation> const sums{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
  auto const expected = oracle_groupby(input.view(), 0, sums);
  auto const device = place(input.view(), memory_space::device);
  for (int const one : {-1, 0}) {
    detail::gpu::groupby_tuning t;
    t.hgb_dense_lo32 = 2;
    t.hgb_one_group = one;
    table host;
    bool ran = false;
    bool counted = false;
    EXPECT_TRUE(dense_tier_ran(device, sums, t, host, nullptr, nullptr, &ran, &counted)) << one;
    EXPECT_TRUE(counted) << one;
    EXPECT_EQ(diff_groups(expected, groupby_rows(host.view())), "") << one;
  }
}

#endif

}  // namespace
}  // namespace joinery::test
