// The CPU radix join where the conformance suite does not reach: forced pass counts and tiny
// partitions, one giant hot-key partition split across threads, build-side skew, sizes that are
// not multiples of a write-combining line, 64-bit row ids, and the bit choice itself.
#include "support/oracle.hpp"
#include "support/threads.hpp"

#include "cpu/radix_hash_join.hpp"

#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

using detail::cpu::join_input;
using detail::cpu::list_sink;
using detail::cpu::radix_join_policy;
using detail::cpu::radix_join_stats;

constexpr join_kind all_kinds[] = {join_kind::inner, join_kind::left_semi, join_kind::left_anti,
                                   join_kind::left_outer};

/// Runs the radix join through its detail entry point; the result as the oracle's sorted rows.
template <class Key>
rows radix_rows(std::vector<Key> const& build, std::vector<Key> const& probe, join_kind kind,
                radix_join_policy const& policy, radix_join_stats* stats = nullptr) {
  join_input<Key> in;
  in.build = build.data();
  in.build_rows = static_cast<size_type>(build.size());
  in.probe = probe.data();
  in.probe_rows = static_cast<size_type>(probe.size());
  in.kind = kind;
  std::vector<list_sink> sinks(static_cast<std::size_t>(omp_get_max_threads()));
  detail::cpu::radix_hash_join_with(in, sinks, policy, stats);
  bool const probe_only = kind == join_kind::left_semi || kind == join_kind::left_anti;
  rows out;
  for (auto const& s : sinks) {
    EXPECT_EQ(s.m.build.size(), probe_only ? 0 : s.m.probe.size());
    for (std::size_t i = 0; i < s.m.probe.size(); ++i) {
      auto const p = static_cast<std::uint64_t>(s.m.probe[i]);
      out.push_back(probe_only ? row{p} : row{static_cast<std::uint64_t>(s.m.build[i]), p});
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <class Key>
rows oracle_rows(std::vector<Key> const& build, std::vector<Key> const& probe, join_kind kind) {
  table_view const b{{column_view::of(build)}};
  table_view const p{{column_view::of(probe)}};
  return oracle_join_index(b, 0, p, 0, kind, predicate::equal());
}

/// Every join kind against the oracle, the full result compared.
template <class Key>
void expect_all_kinds_match(std::vector<Key> const& build, std::vector<Key> const& probe,
                            radix_join_policy const& policy) {
  for (auto kind : all_kinds) {
    SCOPED_TRACE(std::string("kind ") + std::string(to_string(kind)));
    EXPECT_EQ(diff_rows(oracle_rows(build, probe, kind), radix_rows(build, probe, kind, policy)),
              "");
  }
}

/// `n` keys drawn from [lo, lo + range) (duplicates when range < n).
template <class Key>
std::vector<Key> random_keys(std::size_t n, Key lo, std::uint64_t range, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Key> v(n);
  for (auto& k : v) { k = static_cast<Key>(static_cast<std::uint64_t>(lo) + rng() % range); }
  return v;
}

radix_join_policy forced(int b1, int b2) {
  radix_join_policy p;
  p.bits_pass1 = b1;
  p.bits_pass2 = b2;
  return p;
}

TEST(CpuRadix, ForcedPassCountsMatchOracle) {
  // m:n with ~half the probe keys absent, negative keys included.
  auto const b32 = random_keys<std::int32_t>(5000, -3000, 6000, 1);
  auto const p32 = random_keys<std::int32_t>(7777, -3000, 12000, 2);
  auto const b64 = random_keys<std::uint64_t>(4099, 1ULL << 40, 3000, 3);
  auto const p64 = random_keys<std::uint64_t>(6001, 1ULL << 40, 6000, 4);
  struct bits {
    int b1, b2;
  };
  for (auto [b1, b2] : {bits{0, 0}, bits{1, 0}, bits{6, 0}, bits{3, 4}, bits{5, 5}, bits{0, 3},
                        bits{8, 8}}) {
    SCOPED_TRACE("bits " + std::to_string(b1) + "+" + std::to_string(b2));
    radix_join_stats st;
    auto const policy = forced(b1, b2);
    (void)radix_rows(b32, p32, join_kind::inner, policy, &st);
    EXPECT_EQ(st.bits_pass1, b1);
    EXPECT_EQ(st.bits_pass2, b2);
    expect_all_kinds_match(b32, p32, policy);
    expect_all_kinds_match(b64, p64, policy);
  }
}

TEST(CpuRadix, TwoPassesWithTinyPartitionsAndManyThreads) {
  scoped_threads threads(5);
  auto const build = random_keys<std::int64_t>(20000, -10000, 20000, 5);
  auto const probe = random_keys<std::int64_t>(30011, -15000, 30000, 6);
  auto policy = forced(4, 6);  // 1024 partitions of ~20 build rows
  policy.split_min_rows = 64;
  policy.probe_chunk_rows = 100;
  expect_all_kinds_match(build, probe, policy);
}

TEST(CpuRadix, GiantHotKeyPartitionIsSplitAcrossThreads) {
  scoped_threads threads(4);
  // Half the probe side is one key; the rest are PK-FK over 40000 keys, some missing.
  std::vector<std::int32_t> build(40000);
  for (std::size_t i = 0; i < build.size(); ++i) { build[i] = static_cast<std::int32_t>(3 * i); }
  auto probe = random_keys<std::int32_t>(200003, 0, 120000, 7);
  std::mt19937_64 rng(8);
  for (auto& k : probe) {
    if (rng() % 2 == 0) { k = 4242 * 3; }
  }
  for (auto [b1, b2] : {std::pair{6, 0}, std::pair{3, 3}, std::pair{0, 0}}) {
    SCOPED_TRACE("bits " + std::to_string(b1) + "+" + std::to_string(b2));
    auto policy = forced(b1, b2);
    policy.split_min_rows = 1000;
    policy.probe_chunk_rows = 777;
    radix_join_stats st;
    (void)radix_rows(build, probe, join_kind::inner, policy, &st);
    EXPECT_GE(st.split_join_partitions, 1u) << "the hot partition was not split";
    EXPECT_GE(st.probe_chunks, 100000 / 777u);
    if (b2 > 0) { EXPECT_GE(st.split_pass2_partitions, 1u); }
    expect_all_kinds_match(build, probe, policy);
  }
  // The same hot key absent from the build side: anti and outer emit it from the split chunks.
  auto build_without = build;
  std::erase(build_without, 4242 * 3);
  auto policy = forced(5, 0);
  policy.split_min_rows = 1000;
  expect_all_kinds_match(build_without, probe, policy);
}

TEST(CpuRadix, BuildSideSkewBuildsOneTableProbedInChunks) {
  scoped_threads threads(3);
  // 5000 build rows of one key plus a uniform rest: the hot partition's table is built by all
  // threads at once (atomic chain pushes) and probed in chunks.
  auto build = random_keys<std::uint32_t>(20000, 0, 1u << 20, 9);
  build.insert(build.end(), 5000, 77u);
  auto probe = random_keys<std::uint32_t>(50000, 0, 1u << 20, 10);
  for (std::size_t i = 0; i < probe.size(); i += 5000) { probe[i] = 77u; }  // 10 x 5000 matches
  auto policy = forced(4, 0);
  policy.split_min_rows = 2000;
  policy.probe_chunk_rows = 10;
  radix_join_stats st;
  (void)radix_rows(build, probe, join_kind::inner, policy, &st);
  EXPECT_GE(st.split_join_partitions, 1u);
  expect_all_kinds_match(build, probe, policy);
}

TEST(CpuRadix, SizesOffTheWriteCombiningLine) {
  // 8-byte tuples (4-byte keys) fill a line with 8, 16-byte tuples with 4: sizes around and off
  // those, with streaming stores forced on and off, one and two passes.
  for (std::size_t n : {1u, 3u, 7u, 8u, 9u, 15u, 17u, 63u, 65u, 1001u, 100003u}) {
    SCOPED_TRACE("rows " + std::to_string(n));
    auto const b32 = random_keys<std::uint32_t>(n, 0, 2 * n + 1, 11 + n);
    auto const p32 = random_keys<std::uint32_t>(n + 5, 0, 2 * n + 1, 12 + n);
    auto const b64 = random_keys<std::int64_t>(n + 1, -static_cast<std::int64_t>(n), 2 * n, 13);
    auto const p64 = random_keys<std::int64_t>(n + 3, -static_cast<std::int64_t>(n), 2 * n, 14);
    for (int nt : {0, 1}) {
      for (auto [b1, b2] : {std::pair{6, 0}, std::pair{2, 3}}) {
        SCOPED_TRACE("non_temporal " + std::to_string(nt) + " bits " + std::to_string(b1) + "+" +
                     std::to_string(b2));
        auto policy = forced(b1, b2);
        policy.non_temporal = nt;
        EXPECT_EQ(diff_rows(oracle_rows(b32, p32, join_kind::inner),
                            radix_rows(b32, p32, join_kind::inner, policy)),
                  "");
        EXPECT_EQ(diff_rows(oracle_rows(b64, p64, join_kind::left_outer),
                            radix_rows(b64, p64, join_kind::left_outer, policy)),
                  "");
      }
    }
  }
}

TEST(CpuRadix, WideRowIdsMatchOracle) {
  // The > 2^32-row path (64-bit row ids in the tuples and chains) on a small input.
  auto const build = random_keys<std::int32_t>(3001, 0, 2000, 15);
  auto const probe = random_keys<std::int32_t>(4003, 0, 4000, 16);
  for (auto [b1, b2] : {std::pair{0, 0}, std::pair{5, 0}, std::pair{3, 3}}) {
    auto policy = forced(b1, b2);
    policy.wide_row_ids = true;
    radix_join_stats st;
    (void)radix_rows(build, probe, join_kind::inner, policy, &st);
    EXPECT_EQ(st.tuple_bytes, 16u);
    expect_all_kinds_match(build, probe, policy);
  }
}

TEST(CpuRadix, EmptySides) {
  std::vector<std::int64_t> const none;
  auto const some = random_keys<std::int64_t>(100, 0, 50, 17);
  expect_all_kinds_match(none, some, radix_join_policy{});
  expect_all_kinds_match(some, none, radix_join_policy{});
  expect_all_kinds_match(none, none, radix_join_policy{});
}

TEST(CpuRadix, BitsFollowTheCacheSize) {
  using detail::cpu::choose_radix_bits;
  radix_join_policy const p;  // half of L2 per partition, <= 10 bits per pass
  std::size_t const l2 = std::size_t{1} << 20;
  auto const fits = choose_radix_bits(1 << 15, 16, l2, p);  // 512 KiB: fits already
  EXPECT_EQ(fits.pass1, 0);
  EXPECT_EQ(fits.pass2, 0);
  auto const one = choose_radix_bits(1 << 22, 16, l2, p);  // 64 MiB -> 128 partitions
  EXPECT_EQ(one.pass1, 7);
  EXPECT_EQ(one.pass2, 0);
  auto const two = choose_radix_bits(size_type{1} << 27, 16, l2, p);  // 2^12 partitions
  EXPECT_EQ(two.pass1, 6);
  EXPECT_EQ(two.pass2, 6);
  auto const odd = choose_radix_bits(size_type{1} << 28, 16, l2, p);
  EXPECT_EQ(odd.pass1, 7);
  EXPECT_EQ(odd.pass2, 6);
  auto const capped = choose_radix_bits(size_type{1} << 50, 16, l2, p);
  EXPECT_EQ(capped.pass1, 10);
  EXPECT_EQ(capped.pass2, 10);
  // Each partition of the chosen layout fits the budget.
  EXPECT_LE((std::size_t{1} << 22) * 16 >> (one.pass1 + one.pass2), l2 / 2);
}

TEST(CpuRadix, PublicApiWithMachineChosenBits) {
  // Large enough that the machine's L2 asks for partitioning; PK-FK with a payload checksum.
  std::vector<std::int32_t> bk(1 << 18);
  for (std::size_t i = 0; i < bk.size(); ++i) { bk[i] = static_cast<std::int32_t>(i * 7 - 5000); }
  std::shuffle(bk.begin(), bk.end(), std::mt19937_64(18));
  auto const pk = random_keys<std::int32_t>(1 << 19, -5000, 7u << 18, 19);
  table_view const build{{column_view::of(bk)}};
  table_view const probe{{column_view::of(pk)}};
  for (auto kind : all_kinds) {
    SCOPED_TRACE(std::string("kind ") + std::string(to_string(kind)));
    join_options o;
    o.algorithm = join_algorithm::radix_hash;
    o.backend = backend::cpu;
    o.kind = kind;
    auto const r = join(build, 0, probe, 0, o);
    EXPECT_EQ(r.stats.algorithm, join_algorithm::radix_hash);
    EXPECT_EQ(diff_rows(oracle_join_index(build, 0, probe, 0, kind, predicate::equal()),
                        index_rows(r, kind)),
              "");
  }
}

}  // namespace
}  // namespace joinery::test
