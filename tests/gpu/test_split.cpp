// He et al.'s split primitive against a CPU stable split: random ids at sizes around the
// block-scatter tiles, fanouts that are and are not powers of two, one hot group, empty input,
// columns of every width; and the refusals (ids out of range found on the device, arguments).
#include "core/hash.hpp"
#include "primitives/detail/partition_policy.hpp"
#include "support/refusal.hpp"

#include <joinery/memory.hpp>
#include <joinery/primitives/partition.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

using detail::fmix64;

/// Ids in [0, fanout): uniform, or `hot` of them (a fraction) on group fanout / 2.
std::vector<std::int32_t> make_ids(size_type n, int fanout, double hot, std::uint64_t seed) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
  for (size_type i = 0; i < n; ++i) {
    auto const r = fmix64(seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(i) + 1);
    bool const is_hot = static_cast<double>(r >> 11) * 0x1.0p-53 < hot;
    ids[i] = is_hot ? fanout / 2 : static_cast<std::int32_t>((r >> 7) % static_cast<std::uint64_t>(fanout));
  }
  return ids;
}

template <class T>
std::vector<T> make_values(size_type n, std::uint64_t seed) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (size_type i = 0; i < n; ++i) {
    auto const r = fmix64(seed ^ (static_cast<std::uint64_t>(i) * 0xd6e8feb86659fd93ULL)) | 1U;
    std::memcpy(&v[i], &r, sizeof(T));  // never all zero bits
  }
  return v;
}

/// The stable split on the host: indices of rows grouped by id, and the group offsets.
void cpu_split(std::vector<std::int32_t> const& ids, int fanout, std::vector<size_type>& order,
               std::vector<std::int64_t>& offsets) {
  offsets.assign(static_cast<std::size_t>(fanout) + 1, 0);
  for (auto id : ids) { ++offsets[id + 1]; }
  for (int p = 0; p < fanout; ++p) { offsets[p + 1] += offsets[p]; }
  std::vector<std::int64_t> at(offsets.begin(), offsets.end() - 1);
  order.assign(ids.size(), 0);
  for (std::size_t i = 0; i < ids.size(); ++i) { order[at[ids[i]]++] = static_cast<size_type>(i); }
}

class Split : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
  cuda_stream stream_;
};

/// Splits device copies of `ids` and four columns (1, 2, 4, 8 bytes; with `wide_only` the 1- and
/// 2-byte ones are left out, which takes the other path) and compares every output row and
/// offset with the CPU split; returns "" or the first difference.
std::string split_and_check(std::vector<std::int32_t> const& ids, int fanout, std::uint64_t seed,
                            stream_ref s, bool wide_only = false) {
  auto const n = static_cast<size_type>(ids.size());
  auto const c1 = make_values<std::uint8_t>(n, seed + 1);
  auto const c2 = make_values<std::int16_t>(n, seed + 2);
  auto const c4 = make_values<float>(n, seed + 3);
  auto const c8 = make_values<std::int64_t>(n, seed + 4);
  auto dev = [&](column_view v) { return column::copy_of(v, device_resource(), s); };
  auto const d_ids = dev(column_view::of(ids));
  auto const d1 = dev(column_view::of(c1));
  auto const d2 = dev(column_view::of(c2));
  auto const d4 = dev(column_view::of(c4));
  auto const d8 = dev(column_view::of(c8));
  auto const r = wide_only ? split(d_ids.view(), fanout, {d4.view(), d8.view()}, s)
                           : split(d_ids.view(), fanout, {d1.view(), d2.view(), d4.view(), d8.view()}, s);
  std::vector<size_type> order;
  std::vector<std::int64_t> offsets;
  cpu_split(ids, fanout, order, offsets);
  auto host = [&](column const& c) { return column::copy_of(c.view(), host_resource(), s); };
  std::size_t const want = wide_only ? 2 : 4;
  if (r.columns.size() != want) {
    return "expected " + std::to_string(want) + " columns, got " + std::to_string(r.columns.size());
  }
  auto const got_offsets = host(r.offsets).to_vector<std::int64_t>();
  if (got_offsets != offsets) { return "offsets differ"; }
  std::size_t const at4 = wide_only ? 0 : 2;
  auto const g1 = wide_only ? c1 : host(r.columns[0]).to_vector<std::uint8_t>();
  auto const g2 = wide_only ? c2 : host(r.columns[1]).to_vector<std::int16_t>();
  auto const g4 = host(r.columns[at4]).to_vector<float>();
  auto const g8 = host(r.columns[at4 + 1]).to_vector<std::int64_t>();
  if (g1.size() != ids.size() || g2.size() != ids.size() || g4.size() != ids.size() ||
      g8.size() != ids.size()) {
    return "output columns have the wrong length";
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto const src = static_cast<std::size_t>(order[i]);
    bool const narrow_ok = wide_only || (g1[i] == c1[src] && g2[i] == c2[src]);
    if (!narrow_ok || std::memcmp(&g4[i], &c4[src], 4) != 0 || g8[i] != c8[src]) {
      return "row " + std::to_string(i) + " is not input row " + std::to_string(src);
    }
  }
  return "";
}

TEST_F(Split, MatchesTheCpuSplitAroundTilesAndFanouts) {
  constexpr size_type t = detail::gpu::block_scatter_partition_policy::tile_items;
  std::uint64_t seed = 10;
  for (int fanout : {1, 2, 3, 100, 256, 257, 4095, 4096}) {
    for (size_type n : {size_type{0}, size_type{1}, size_type{33}, t - 1, t, t + 1, 7 * t + 5,
                        size_type{300'001}}) {
      auto const ids = make_ids(n, fanout, 0.0, ++seed);
      EXPECT_EQ(split_and_check(ids, fanout, seed, stream_), "") << "fanout " << fanout << ", n " << n;
      EXPECT_EQ(split_and_check(ids, fanout, seed, stream_, true), "")
        << "4- and 8-byte columns only, fanout " << fanout << ", n " << n;
    }
  }
}

TEST_F(Split, OneHotGroupAndOneGroupOnly) {
  size_type const n = (size_type{1} << 20) + 17;
  for (int fanout : {5, 1024}) {
    EXPECT_EQ(split_and_check(make_ids(n, fanout, 0.5, 77), fanout, 77, stream_), "")
      << "half the rows in one group, fanout " << fanout;
    EXPECT_EQ(split_and_check(make_ids(n, fanout, 1.0, 78), fanout, 78, stream_), "")
      << "every row in one group, fanout " << fanout;
    EXPECT_EQ(split_and_check(make_ids(n, fanout, 0.5, 79), fanout, 79, stream_, true), "")
      << "half the rows in one group, 4- and 8-byte columns only, fanout " << fanout;
  }
}

TEST_F(Split, NoColumnsGivesOffsetsOnly) {
  auto const ids = make_ids(10'000, 7, 0.0, 5);
  auto const d_ids = column::copy_of(column_view::of(ids), device_resource(), stream_);
  auto const r = split(d_ids.view(), 7, {}, stream_);
  EXPECT_TRUE(r.columns.empty());
  std::vector<size_type> order;
  std::vector<std::int64_t> offsets;
  cpu_split(ids, 7, order, offsets);
  EXPECT_EQ(column::copy_of(r.offsets.view(), host_resource(), stream_).to_vector<std::int64_t>(),
            offsets);
}


TEST_F(Split, BeyondTwoToThe31Rows) {
  // 2^31 + 2^16 + 3 rows into 256 groups, one uint64 column holding the row index: 64-bit row
  // ids, offsets and gathers. Every output row is an input row, in its group, once, and rows of
  // a group keep their input order.
  size_type const n = (size_type{1} << 31) + (size_type{1} << 16) + 3;
  int const fanout = 256;
  std::size_t const device_need = 40 * static_cast<std::size_t>(n) + (std::size_t{4} << 30);
  std::size_t const host_need = 24 * static_cast<std::size_t>(n);
  auto const host_bytes = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                          static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  if (get_device_info(0).free_memory < device_need || host_bytes < host_need) {
    GTEST_SKIP() << "needs " << (device_need >> 30) << " GiB free device memory and "
                 << (host_need >> 30) << " GiB host memory";
  }
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
  std::vector<std::uint64_t> rows(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < n; ++i) {
    ids[i] = static_cast<std::int32_t>(fmix64(static_cast<std::uint64_t>(i) + 12345) % fanout);
    rows[i] = static_cast<std::uint64_t>(i);
  }
  std::vector<size_type> count(fanout, 0);
  for (auto id : ids) { ++count[id]; }
  std::vector<std::int64_t> offsets;
  std::vector<std::uint64_t> out;
  {
    auto const d_ids = column::copy_of(column_view::of(ids), device_resource(), stream_);
    auto const d_rows = column::copy_of(column_view::of(rows), device_resource(), stream_);
    auto const r = split(d_ids.view(), fanout, {d_rows.view()}, stream_);
    offsets = column::copy_of(r.offsets.view(), host_resource(), stream_).to_vector<std::int64_t>();
    out = column::copy_of(r.columns[0].view(), host_resource(), stream_).to_vector<std::uint64_t>();
  }
  ASSERT_EQ(offsets.size(), static_cast<std::size_t>(fanout + 1));
  ASSERT_EQ(offsets[0], 0);
  for (int p = 0; p < fanout; ++p) {
    ASSERT_EQ(offsets[p + 1] - offsets[p], count[p]) << "group " << p;
  }
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(n), 0);
  size_type errors = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : errors)
  for (int p = 0; p < fanout; ++p) {
    for (auto i = offsets[p]; i < offsets[p + 1]; ++i) {
      auto const r = out[i];
      bool const ok = r < static_cast<std::uint64_t>(n) && ids[r] == p &&
                      std::atomic_ref<std::uint8_t>(seen[r]).fetch_add(1) == 0 &&
                      (i == offsets[p] || out[i - 1] < r);
      errors += ok ? 0 : 1;
    }
  }
  EXPECT_EQ(errors, 0) << "output rows out of place, repeated or out of order";
}

TEST(SplitRefusals, ClearMessages) {
  std::vector<std::int32_t> ids{0, 3, 1, 2};
  std::vector<std::int64_t> col{1, 2, 3, 4};
  std::vector<std::int64_t> short_col{1, 2, 3};
  std::vector<std::int64_t> wide_ids{0, 1, 2, 3};
  auto const v_ids = column_view::of(ids);
  auto const v_col = column_view::of(col);
  if (!built_with_cuda()) {
    expect_refusal([&] { (void)split(v_ids, 4, {v_col}); }, "built without CUDA");
    return;
  }
  expect_refusal([&] { (void)split(column_view::of(wide_ids), 4, {v_col}); },
                 "partition ids must be int32 or uint32, got int64");
  for (int fanout : {0, -3, 4097}) {
    expect_refusal([&] { (void)split(v_ids, fanout, {v_col}); }, "fanout must lie in [1, 4096]");
  }
  expect_refusal([&] { (void)split(v_ids, 4, {column_view::of(short_col)}); },
                 "the column 0 has 3 rows but the partition ids have 4");
  std::uint8_t mask = 0x0f;
  column_view const nullable(type_id::int32, ids.data(), 4, memory_space::host, &mask, 0);
  expect_refusal([&] { (void)split(nullable, 4, {v_col}); }, "nullable");
  expect_refusal([&] { (void)split(v_ids, 4, {v_col}); },
                 "the partition id column is in host memory but must be in device memory");
  if (device_count() == 0) { return; }
  cuda_stream s;
  auto const d_col = column::copy_of(v_col, device_resource(), s);
  // Ids out of range, found on the device: above the fanout, and negative int32.
  auto const d_ids = column::copy_of(v_ids, device_resource(), s);
  expect_refusal([&] { (void)split(d_ids.view(), 3, {d_col.view()}, s); },
                 "1 of 4 partition ids lie outside [0, 3)");
  std::vector<std::int32_t> negative{0, -1, 1, -7};
  auto const d_neg = column::copy_of(column_view::of(negative), device_resource(), s);
  expect_refusal([&] { (void)split(d_neg.view(), 4, {d_col.view()}, s); },
                 "2 of 4 partition ids lie outside [0, 4)");
  std::vector<std::int16_t> narrow{1, 2, 3, 4};  // the other path (gathers) checks the same way
  auto const d_narrow = column::copy_of(column_view::of(narrow), device_resource(), s);
  expect_refusal([&] { (void)split(d_neg.view(), 4, {d_narrow.view()}, s); },
                 "2 of 4 partition ids lie outside [0, 4)");
}

}  // namespace
}  // namespace joinery::test
