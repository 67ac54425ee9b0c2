// GPU merge path partitioning (device and host) and sorted search (lower_bound, upper_bound)
// against CPU references (std::merge, std::lower_bound / std::upper_bound) on random data for
// the four key types, > 2^31 rows where memory allows; and the refusals of the sort, merge
// path and search calls. GPU tests skip with a message when no GPU is present; the refusals
// and the host merge path run everywhere. The sorts: test_sort_merge_path.cpp.
#include "gpu/sort_merge_path_test_util.hpp"
#include "primitives/detail/sort_policy.hpp"

#include <joinery/primitives/merge_path.hpp>
#include <joinery/primitives/sort.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace joinery::test {
namespace {

using detail::gpu::sorted_search_policy;

void expect_refused(std::function<void()> const& f, std::string const& needle) {
  try {
    f();
    ADD_FAILURE() << "expected a refusal mentioning '" << needle << "'";
  } catch (logic_error const& e) {
    std::string const what = e.what();
    if (!built_with_cuda()) {
      EXPECT_NE(what.find("needs the GPU backend, built without CUDA"), std::string::npos) << what;
    } else {
      EXPECT_NE(what.find(needle), std::string::npos)
        << "message '" << what << "' does not mention '" << needle << "'";
    }
  }
}

// ---- merge path -----------------------------------------------------------------------------

struct tagged {
  std::uint64_t key_bits;
  int source;  // 0: A, 1: B
  std::size_t index;
  bool operator==(tagged const&) const = default;
};

/// The stable merge with ties from A first, every element tagged with its source and index.
template <class K>
std::vector<tagged> reference_merge(std::vector<K> const& a, std::size_t a0, std::size_t a1,
                                    std::vector<K> const& b, std::size_t b0, std::size_t b1) {
  std::vector<std::pair<K, tagged>> ta;
  std::vector<std::pair<K, tagged>> tb;
  for (auto i = a0; i < a1; ++i) { ta.push_back({a[i], {static_cast<std::uint64_t>(a[i]), 0, i}}); }
  for (auto i = b0; i < b1; ++i) { tb.push_back({b[i], {static_cast<std::uint64_t>(b[i]), 1, i}}); }
  std::vector<std::pair<K, tagged>> m;
  std::merge(ta.begin(), ta.end(), tb.begin(), tb.end(), std::back_inserter(m),
             [](auto const& x, auto const& y) { return x.first < y.first; });
  std::vector<tagged> out;
  for (auto const& e : m) { out.push_back(e.second); }
  return out;
}

/// Checks splits (a_i, b_i) of `parts` diagonals: diagonal sums, bounds, monotonicity, the
/// merge-path invariant, and that the per-diagonal merges concatenate to the whole merge.
template <class K>
void check_splits(std::vector<K> const& a, std::vector<K> const& b, size_type parts,
                  std::vector<std::int64_t> const& sa, std::vector<std::int64_t> const& sb) {
  auto const na = static_cast<size_type>(a.size());
  auto const nb = static_cast<size_type>(b.size());
  ASSERT_EQ(sa.size(), static_cast<std::size_t>(parts) + 1);
  ASSERT_EQ(sb.size(), static_cast<std::size_t>(parts) + 1);
  EXPECT_EQ(sa.front(), 0);
  EXPECT_EQ(sb.front(), 0);
  EXPECT_EQ(sa.back(), na);
  EXPECT_EQ(sb.back(), nb);
  std::vector<tagged> concat;
  for (size_type i = 0; i <= parts; ++i) {
    auto const ai = sa[static_cast<std::size_t>(i)];
    auto const bi = sb[static_cast<std::size_t>(i)];
    SCOPED_TRACE("diagonal " + std::to_string(i) + " split (" + std::to_string(ai) + ", " +
                 std::to_string(bi) + ")");
    ASSERT_EQ(ai + bi, merge_path_diagonal(na + nb, parts, i));
    ASSERT_GE(ai, 0);
    ASSERT_LE(ai, na);
    ASSERT_GE(bi, 0);
    ASSERT_LE(bi, nb);
    if (ai > 0 && bi < nb) { ASSERT_TRUE(a[ai - 1] <= b[bi]) << "A[a-1] > B[b]"; }
    if (bi > 0 && ai < na) { ASSERT_TRUE(b[bi - 1] < a[ai]) << "B[b-1] >= A[a]: tie not from A"; }
    if (i > 0) {
      auto const pa = sa[static_cast<std::size_t>(i) - 1];
      auto const pb = sb[static_cast<std::size_t>(i) - 1];
      ASSERT_LE(pa, ai);
      ASSERT_LE(pb, bi);
      auto const piece = reference_merge(a, pa, ai, b, pb, bi);
      concat.insert(concat.end(), piece.begin(), piece.end());
    }
  }
  auto const whole = reference_merge(a, 0, a.size(), b, 0, b.size());
  ASSERT_EQ(concat.size(), whole.size());
  ASSERT_TRUE(concat == whole) << "the per-diagonal merges do not concatenate to std::merge";
}

template <class K>
std::vector<K> sorted_keys(size_type n, key_mix mix, std::uint64_t seed) {
  auto v = make_keys<K>(n, mix, seed);
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::pair<size_type, size_type>> const merge_sizes = {
  {0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 1000}, {1000, 0}, {33, 31}, {1023, 1025}, {5000, 17},
  {17, 5000}, {65537, 40000}};

std::vector<size_type> merge_parts(size_type total) {
  std::vector<size_type> p = {1, 2, 3, 7, 64, 1000};
  p.push_back(std::max<size_type>(total, 1));
  p.push_back(total + 5);
  return p;
}

TYPED_TEST(SortMergePath, MergePathPartitionInvariant) {
  using K = TypeParam;
  for (auto mix : mixes) {
    for (auto [na, nb] : merge_sizes) {
      auto const a = sorted_keys<K>(na, mix, 21 + na);
      auto const b = sorted_keys<K>(nb, mix, 22 + nb + 1000003);
      auto const da = to_device(a, this->stream_);
      auto const db = to_device(b, this->stream_);
      for (auto parts : merge_parts(na + nb)) {
        SCOPED_TRACE("|A|=" + std::to_string(na) + " |B|=" + std::to_string(nb) +
                     " parts=" + std::to_string(parts) + " mix=" + std::to_string(int(mix)));
        auto const s = merge_path_partition(da.view(), db.view(), parts, this->stream_);
        ASSERT_EQ(s.parts, parts);
        auto const sa = to_host<std::int64_t>(s.a, this->stream_);
        auto const sb = to_host<std::int64_t>(s.b, this->stream_);
        check_splits(a, b, parts, sa, sb);
        // The host version gives the same splits.
        auto const host = merge_path_partition(std::span<K const>(a), std::span<K const>(b), parts);
        ASSERT_EQ(host, sa);
      }
    }
  }
}

// ---- sorted search --------------------------------------------------------------------------

TYPED_TEST(SortMergePath, SortedSearchMatchesStd) {
  using K = TypeParam;
  constexpr size_type st = sorted_search_policy::tile_items;
  std::vector<std::pair<size_type, size_type>> const cases = {
    {0, 0}, {0, 5}, {5, 0}, {1, 1}, {1, 100}, {100, st - 1}, {1000, st + 1}, {st, 4 * st + 3},
    {65537, 300007}};
  for (auto mix : mixes) {
    for (auto [n, m] : cases) {
      SCOPED_TRACE("|sorted|=" + std::to_string(n) + " probes=" + std::to_string(m) +
                   " mix=" + std::to_string(int(mix)));
      auto const sorted = sorted_keys<K>(n, mix, 31 + n);
      // Probes: keys of the same distribution (hits and misses), plus the extremes.
      auto probes = make_keys<K>(m, mix, 32 + m + 77);
      K const special[] = {std::numeric_limits<K>::min(), std::numeric_limits<K>::max(), K(0),
                           static_cast<K>(-1)};
      for (std::size_t i = 0; i < probes.size() && i < std::size(special); ++i) {
        probes[i] = special[i];
      }
      // Some probes taken from the sorted column itself (exact hits on runs of duplicates).
      for (std::size_t i = std::size(special); i < probes.size() && !sorted.empty(); i += 3) {
        probes[i] = sorted[detail::mix64(i) % sorted.size()];
      }
      auto const ds = to_device(sorted, this->stream_);
      auto const dp = to_device(probes, this->stream_);
      auto const lo = lower_bound(ds.view(), dp.view(), this->stream_);
      auto const hi = upper_bound(ds.view(), dp.view(), this->stream_);
      ASSERT_EQ(lo.type(), type_id::int64);
      ASSERT_EQ(hi.type(), type_id::int64);
      ASSERT_EQ(lo.size(), m);
      ASSERT_EQ(hi.size(), m);
      auto const glo = to_host<std::int64_t>(lo, this->stream_);
      auto const ghi = to_host<std::int64_t>(hi, this->stream_);
      for (std::size_t i = 0; i < probes.size(); ++i) {
        auto const elo = std::lower_bound(sorted.begin(), sorted.end(), probes[i]) - sorted.begin();
        auto const ehi = std::upper_bound(sorted.begin(), sorted.end(), probes[i]) - sorted.begin();
        ASSERT_EQ(glo[i], elo) << "lower_bound of probe " << i << " = " << probes[i];
        ASSERT_EQ(ghi[i], ehi) << "upper_bound of probe " << i << " = " << probes[i];
      }
    }
  }
}

// ---- beyond 2^31 rows: 64-bit positions in the merge path and the sorted search --------------

class SortMergePathLarge : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
  cuda_stream stream_;
};

TEST_F(SortMergePathLarge, BeyondTwoToThe31Rows) {
  // A[i] = i / 3 over 2^31 + 2^16 + 3 int32 rows (sorted, runs of 3 equal keys), B[j] = j / 5:
  // lower and upper bounds have closed forms (3v and 3(v + 1), clamped), independent of std.
  size_type const na = (size_type{1} << 31) + (size_type{1} << 16) + 3;
  size_type const nb = (size_type{1} << 20) + 7;
  size_type const m = (size_type{1} << 20) + 1;
  std::size_t const device_need = sizeof(std::int32_t) * static_cast<std::size_t>(na) +
                                  (std::size_t{2} << 30);
  std::size_t const host_need = 2 * sizeof(std::int32_t) * static_cast<std::size_t>(na);
  auto const host_bytes = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                          static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  if (get_device_info(0).free_memory < device_need || host_bytes < host_need) {
    GTEST_SKIP() << "needs " << (device_need >> 30) << " GiB free device memory and "
                 << (host_need >> 30) << " GiB host memory";
  }
  std::vector<std::int32_t> a(static_cast<std::size_t>(na));
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < na; ++i) { a[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i / 3); }
  std::vector<std::int32_t> b(static_cast<std::size_t>(nb));
  for (size_type j = 0; j < nb; ++j) { b[static_cast<std::size_t>(j)] = static_cast<std::int32_t>(j / 5); }
  std::int64_t const max_a = (na - 1) / 3;
  std::vector<std::int32_t> probes(static_cast<std::size_t>(m));
  for (size_type k = 0; k < m; ++k) {
    // Spread over [-1, max_a + 1]: below all keys, every run, above all keys.
    auto const v = static_cast<std::int64_t>(detail::mix64(static_cast<std::uint64_t>(k) + 99) %
                                             static_cast<std::uint64_t>(max_a + 3)) - 1;
    probes[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(v);
  }
  probes[0] = -1;
  probes[1] = static_cast<std::int32_t>(max_a);
  probes[2] = static_cast<std::int32_t>(max_a + 1);
  auto const da = to_device(a, stream_);
  auto const db = to_device(b, stream_);
  auto const dp = to_device(probes, stream_);

  auto const lo = to_host<std::int64_t>(lower_bound(da.view(), dp.view(), stream_), stream_);
  auto const hi = to_host<std::int64_t>(upper_bound(da.view(), dp.view(), stream_), stream_);
  auto clamp = [&](std::int64_t x) { return std::min<std::int64_t>(std::max<std::int64_t>(x, 0), na); };
  for (size_type k = 0; k < m; ++k) {
    std::int64_t const v = probes[static_cast<std::size_t>(k)];
    ASSERT_EQ(lo[static_cast<std::size_t>(k)], clamp(3 * v)) << "lower_bound of " << v;
    ASSERT_EQ(hi[static_cast<std::size_t>(k)], clamp(3 * (v + 1))) << "upper_bound of " << v;
  }

  size_type const parts = 4099;
  auto const s = merge_path_partition(da.view(), db.view(), parts, stream_);
  auto const sa = to_host<std::int64_t>(s.a, stream_);
  auto const sb = to_host<std::int64_t>(s.b, stream_);
  auto const host = merge_path_partition(std::span<std::int32_t const>(a),
                                         std::span<std::int32_t const>(b), parts);
  ASSERT_EQ(sa, host);
  ASSERT_EQ(sa.back(), na);
  ASSERT_EQ(sb.back(), nb);
  for (size_type i = 0; i <= parts; ++i) {
    auto const ai = sa[static_cast<std::size_t>(i)];
    auto const bi = sb[static_cast<std::size_t>(i)];
    ASSERT_EQ(ai + bi, merge_path_diagonal(na + nb, parts, i));
    ASSERT_TRUE(ai >= 0 && ai <= na && bi >= 0 && bi <= nb) << "diagonal " << i;
    if (ai > 0 && bi < nb) { ASSERT_LE(a[ai - 1], b[bi]) << "diagonal " << i; }
    if (bi > 0 && ai < na) { ASSERT_LT(b[bi - 1], a[ai]) << "diagonal " << i; }
    if (i > 0) {
      ASSERT_LE(sa[static_cast<std::size_t>(i) - 1], ai);
      ASSERT_LE(sb[static_cast<std::size_t>(i) - 1], bi);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// No GPU needed: the host merge path and the refusals.

TEST(MergePathHost, InvariantOnRandomAndTiedData) {
  for (auto mix : mixes) {
    for (auto [na, nb] : merge_sizes) {
      auto const a = sorted_keys<std::int32_t>(na, mix, 41 + na);
      auto const b = sorted_keys<std::int32_t>(nb, mix, 42 + nb + 99991);
      for (auto parts : merge_parts(na + nb)) {
        SCOPED_TRACE("|A|=" + std::to_string(na) + " |B|=" + std::to_string(nb) +
                     " parts=" + std::to_string(parts) + " mix=" + std::to_string(int(mix)));
        auto const sa = merge_path_partition(std::span<std::int32_t const>(a),
                                             std::span<std::int32_t const>(b), parts);
        std::vector<std::int64_t> sb;
        for (size_type i = 0; i <= parts; ++i) {
          sb.push_back(merge_path_diagonal(na + nb, parts, i) - sa[static_cast<std::size_t>(i)]);
        }
        check_splits(a, b, parts, sa, sb);
      }
    }
  }
}

TEST(MergePathHost, DiagonalsDoNotOverflow) {
  size_type const total = size_type{1} << 40;
  size_type const parts = (size_type{1} << 31) - 1;
  EXPECT_EQ(merge_path_diagonal(total, parts, 0), 0);
  EXPECT_EQ(merge_path_diagonal(total, parts, parts), total);
  EXPECT_EQ(merge_path_diagonal(10, 3, 1), 3);
  EXPECT_EQ(merge_path_diagonal(10, 3, 2), 6);
  EXPECT_THROW((void)merge_path_partition(std::span<std::int32_t const>(),
                                          std::span<std::int32_t const>(), 0),
               logic_error);
}

TEST(SortMergePathRefusals, HostColumnsNeedTheDevice) {
  std::vector<std::int32_t> const k = {3, 1, 2};
  auto const host = column::from_host(k);
  expect_refused([&] { (void)sort_keys(host.view()); }, "must be in device memory");
  expect_refused([&] { (void)sort_pairs(host.view(), {host.view()}); }, "must be in device memory");
  expect_refused([&] { (void)merge_path_partition(host.view(), host.view(), 4); },
                 "must be in device memory");
  expect_refused([&] { (void)lower_bound(host.view(), host.view()); }, "must be in device memory");
  expect_refused([&] { (void)upper_bound(host.view(), host.view()); }, "must be in device memory");
}

TEST(SortMergePathRefusals, NonKeyTypes) {
  std::vector<double> const d = {1.0, 2.0};
  std::vector<std::int16_t> const s = {1, 2};
  std::vector<std::int32_t> const k = {1, 2};
  auto const dc = column::from_host(d);
  auto const sc = column::from_host(s);
  auto const kc = column::from_host(k);
  expect_refused([&] { (void)sort_keys(dc.view()); }, "keys must be int32, int64, uint32 or uint64");
  expect_refused([&] { (void)sort_pairs(sc.view(), {kc.view()}); },
                 "keys must be int32, int64, uint32 or uint64");
  expect_refused([&] { (void)merge_path_partition(dc.view(), dc.view(), 2); },
                 "must be int32, int64, uint32 or uint64");
  expect_refused([&] { (void)lower_bound(kc.view(), sc.view()); },
                 "must be int32, int64, uint32 or uint64");
}

TEST(SortMergePathRefusals, MismatchedLengthsAndTypes) {
  std::vector<std::int32_t> const k = {1, 2, 3};
  std::vector<std::int64_t> const p = {1, 2};
  std::vector<std::int64_t> const k64 = {1, 2, 3};
  auto const kc = column::from_host(k);
  auto const pc = column::from_host(p);
  auto const k64c = column::from_host(k64);
  expect_refused([&] { (void)sort_pairs(kc.view(), {pc.view()}); },
                 "the payload 0 column has 2 rows but the keys have 3");
  expect_refused([&] { (void)sort_pairs(kc.view(), {kc.view(), pc.view()}); },
                 "the payload 1 column has 2 rows but the keys have 3");
  expect_refused([&] { (void)merge_path_partition(kc.view(), k64c.view(), 2); },
                 "same key type");
  expect_refused([&] { (void)upper_bound(k64c.view(), kc.view()); }, "same key type");
  expect_refused([&] { (void)merge_path_partition(kc.view(), kc.view(), 0); },
                 "parts must lie in [1, 2^31)");
}

TEST(SortMergePathRefusals, MergeSortPairs) {
  std::vector<std::int32_t> const k = {3, 1, 2};
  std::vector<std::int64_t> const p = {1, 2};
  std::vector<double> const d = {1.0, 2.0, 3.0};
  auto const kc = column::from_host(k);
  auto const pc = column::from_host(p);
  auto const dc = column::from_host(d);
  auto nk = column::from_host(k);
  nk.make_nullable();
  auto const asc = sort_order::ascending;
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {}, asc); }, "must be in device memory");
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {kc.view()}, sort_order::descending); },
                 "the key column is in host memory but must be in device memory");
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {pc.view()}, asc); },
                 "merge_sort_pairs: the payload 0 column has 2 rows but the keys have 3");
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {kc.view(), pc.view()}, asc); },
                 "the payload 1 column has 2 rows but the keys have 3");
  expect_refused([&] { (void)merge_sort_pairs(dc.view(), {}, asc); },
                 "merge_sort_pairs: keys must be int32, int64, uint32 or uint64, got float64");
  expect_refused([&] { (void)merge_sort_pairs(nk.view(), {}, asc); }, "nullable");
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {nk.view()}, asc); },
                 "payload 0 column is nullable");
  expect_refused([&] { (void)merge_sort_pairs(kc.view(), {}, static_cast<sort_order>(7)); },
                 "the order must be ascending or descending, got 7");
}

TEST(SortMergePathRefusals, Nullable) {
  std::vector<std::int32_t> const k = {1, 2, 3};
  auto nk = column::from_host(k);
  nk.make_nullable();
  auto const kc = column::from_host(k);
  expect_refused([&] { (void)sort_keys(nk.view()); }, "nullable");
  expect_refused([&] { (void)sort_pairs(kc.view(), {nk.view()}); }, "payload 0 column is nullable");
  expect_refused([&] { (void)merge_path_partition(kc.view(), nk.view(), 2); }, "nullable");
  expect_refused([&] { (void)lower_bound(nk.view(), kc.view()); }, "nullable");
}

}  // namespace
}  // namespace joinery::test
