// Columns of the logical types (date32, bool8, decimal64, decimal128) resident in device
// memory: their halves are split and joined on the device, results stay there with their types.
// The GPU backend against the CPU backend on the same values in host memory (the conformance
// suite checks the CPU backend against brute-force references).
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

namespace joinery::test {
namespace {

#if defined(JOINERY_HAS_CUDA)

/// A host column of `t` from random 64-bit values (sign-extended into a decimal128), about one
/// row in `null_every` NULL (0: none).
column random_logical(std::mt19937_64& rng, type_id t, size_type n, std::int64_t lo,
                      std::int64_t hi, int null_every, decimal_format decimal = {}) {
  std::uniform_int_distribution<std::int64_t> dist(lo, hi);
  column c(t, n);
  auto const width = static_cast<size_type>(size_of(t));
  for (size_type i = 0; i < n; ++i) {
    __int128 v = dist(rng);
    if (t == type_id::decimal128) { v *= static_cast<__int128>(1) << 40; }
    std::memcpy(static_cast<char*>(c.data()) + i * width, &v, static_cast<std::size_t>(width));
  }
  if (null_every > 0) {
    auto* mask = c.make_nullable();
    size_type nulls = 0;
    for (size_type i = 0; i < n; ++i) {
      if (rng() % static_cast<unsigned>(null_every) == 0) {
        mask[i >> 3] = static_cast<std::uint8_t>(mask[i >> 3] & ~(1U << (i & 7)));
        ++nulls;
      }
    }
    c.set_null_count(nulls);
  }
  c.set_type(t, decimal);
  return c;
}

table on_device(table const& t) {
  std::vector<column> cols;
  for (auto const& c : t.view()) { cols.push_back(column::copy_of(c, device_resource())); }
  return table(std::move(cols));
}

/// The rows of a table (any memory space) as sorted byte strings, NULLs as a marker.
std::vector<std::string> sorted_rows(table const& t) {
  std::vector<column> host;
  for (auto const& c : t.view()) { host.push_back(column::copy_of(c)); }
  std::vector<std::string> rows(static_cast<std::size_t>(t.num_rows()));
  for (auto const& c : host) {
    auto const v = c.view();
    auto const w = size_of(v.type());
    for (size_type i = 0; i < v.size(); ++i) {
      auto& r = rows[static_cast<std::size_t>(i)];
      r += v.is_valid(i) ? std::string(static_cast<char const*>(v.data()) + i * static_cast<size_type>(w), w)
                         : std::string("<null>");
      r += '|';
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

void expect_same_types(table const& got, table const& want) {
  ASSERT_EQ(got.num_columns(), want.num_columns());
  for (size_type i = 0; i < got.num_columns(); ++i) {
    EXPECT_EQ(got.column(i).type(), want.column(i).type()) << "column " << i;
    EXPECT_EQ(got.column(i).decimal(), want.column(i).decimal()) << "column " << i;
  }
}

TEST(GpuLogicalTypes, DeviceResidentJoinMatchesTheCpuBackend) {
  if (device_count() == 0) { GTEST_SKIP() << "no GPU present"; }
  std::mt19937_64 rng(3);
  size_type const nb = 50000, np = 80000;
  std::vector<column> b, p;
  b.push_back(random_logical(rng, type_id::date32, nb, 18000, 18000 + 40000, 0));
  b.push_back(random_logical(rng, type_id::decimal128, nb, -1000000, 1000000, 9, {38, 4}));
  b.push_back(random_logical(rng, type_id::decimal64, nb, -1000000, 1000000, 0, {12, 2}));
  p.push_back(random_logical(rng, type_id::date32, np, 18000, 18000 + 60000, 0));
  p.push_back(random_logical(rng, type_id::bool8, np, 0, 1, 11));
  table const build(std::move(b)), probe(std::move(p));
  auto const dbuild = on_device(build), dprobe = on_device(probe);
  for (auto kind : {join_kind::inner, join_kind::full_outer}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    join_options o;
    o.kind = kind;
    o.output = output_form::table;
    o.build_payloads = {1, 2};
    o.probe_payloads = {1};
    o.backend = backend::cpu;
    auto const want = join(build.view(), 0, probe.view(), 0, o);
    ASSERT_GT(want.num_rows(), 1000);
    o.backend = backend::gpu;
    auto const got = join(dbuild.view(), 0, dprobe.view(), 0, o);
    ASSERT_EQ(got.columns.column(0).space(), memory_space::device);
    expect_same_types(got.columns, want.columns);
    EXPECT_EQ(sorted_rows(got.columns), sorted_rows(want.columns));
    EXPECT_EQ(got.aggregate.checksum, want.aggregate.checksum);
  }
}

TEST(GpuLogicalTypes, DeviceResidentGroupbyMatchesTheCpuBackend) {
  if (device_count() == 0) { GTEST_SKIP() << "no GPU present"; }
  std::mt19937_64 rng(4);
  size_type const n = 200000;
  std::vector<column> cols;
  cols.push_back(random_logical(rng, type_id::date32, n, 0, 3000, 50));
  cols.push_back(random_logical(rng, type_id::decimal64, n, INT64_MIN / 4, INT64_MAX / 4, 7,
                                {18, 3}));
  cols.push_back(random_logical(rng, type_id::decimal128, n, -5, 5, 5, {38, 0}));
  cols.push_back(random_logical(rng, type_id::bool8, n, 0, 1, 0));
  table const input(std::move(cols));
  auto const dinput = on_device(input);
  std::vector<aggregation> const aggs{
    {aggregation_kind::sum, 1}, {aggregation_kind::avg, 1}, {aggregation_kind::min, 1},
    {aggregation_kind::max, 0}, {aggregation_kind::count_valid, 2}, {aggregation_kind::sum, 3},
    {aggregation_kind::max, 3}};
  groupby_options o;
  o.sort_by_key = true;
  o.backend = backend::cpu;
  auto const want = groupby(input.view(), 0, aggs, o);
  o.backend = backend::gpu;
  auto const got = groupby(dinput.view(), 0, aggs, o);
  ASSERT_EQ(got.num_groups(), want.num_groups());
  expect_same_types(got.columns, want.columns);
  // AVG in float64 from the same exact sums: the same bits.
  EXPECT_EQ(sorted_rows(got.columns), sorted_rows(want.columns));
}

#endif

}  // namespace
}  // namespace joinery::test
