// The general key path on the GPU at sizes past one block's worth of rows (the conformance suite
// covers every algorithm on small tables): several key columns with NULLs, packed and hashed,
// against the CPU backend's general path (itself checked against a brute-force reference).
#include "support/oracle.hpp"

#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace joinery::test {
namespace {

#if defined(JOINERY_HAS_CUDA)

/// A column of `n` random values in [lo, hi], about one row in `null_every` NULL (0: none).
template <class T>
column random_column(std::mt19937_64& rng, size_type n, std::int64_t lo, std::int64_t hi,
                     int null_every) {
  std::uniform_int_distribution<std::int64_t> dist(lo, hi);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) { x = static_cast<T>(dist(rng)); }
  auto c = column::from_host(v);
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
  return c;
}

table side(std::uint64_t seed, size_type n, bool wide) {
  std::mt19937_64 rng(seed);
  std::vector<column> cols;
  if (wide) {  // two int64 keys over their whole range: hashed and checked
    std::mt19937_64 pool_rng(99);  // the same 64 values on both sides
    std::vector<std::int64_t> pool(64);
    for (auto& x : pool) { x = static_cast<std::int64_t>(pool_rng()); }
    auto a = random_column<std::int64_t>(rng, n, 0, 63, 0);
    auto b = random_column<std::int64_t>(rng, n, 0, 63, 10);
    for (auto* c : {&a, &b}) {
      auto* d = c->data_as<std::int64_t>();
      for (size_type i = 0; i < n; ++i) { d[i] = pool[static_cast<std::size_t>(d[i])]; }
    }
    cols.push_back(std::move(a));
    cols.push_back(std::move(b));
  } else {  // int16 and uint32 keys, NULLs in both
    cols.push_back(random_column<std::int16_t>(rng, n, -300, 300, 10));
    cols.push_back(random_column<std::uint32_t>(rng, n, 0, 700, 20));
  }
  cols.push_back(random_column<std::int64_t>(rng, n, -1000000, 1000000, 7));
  return table(std::move(cols));
}

class GpuGeneralKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
};

TEST_F(GpuGeneralKeys, LargeTablesMatchTheCpuBackend) {
  for (bool wide : {false, true}) {
    auto const b = side(1, 300000, wide);
    auto const p = side(2, 450000, wide);
    auto const db = place(b.view(), memory_space::device);
    auto const dp = place(p.view(), memory_space::device);
    for (auto kind : {join_kind::inner, join_kind::left_anti, join_kind::right_semi,
                      join_kind::full_outer}) {
      SCOPED_TRACE(std::string(wide ? "hashed keys, " : "packed keys, ") +
                   std::string(to_string(kind)));
      join_options o;
      o.kind = kind;
      o.output = output_form::table;
      o.build_payloads = {2};
      o.probe_payloads = {2};
      o.backend = backend::cpu;
      auto const expected = join(b, {0, 1}, p, {0, 1}, o);
      o.backend = backend::gpu;
      o.algorithm = join_algorithm::radix_hash;
      auto const got = join(db, {0, 1}, dp, {0, 1}, o);
      EXPECT_EQ(got.columns.column(0).space(), memory_space::device);
      EXPECT_EQ(diff_rows(table_rows(expected.columns), table_rows(got.columns)), "");
      EXPECT_EQ(got.aggregate.count, expected.aggregate.count);
      EXPECT_EQ(got.aggregate.checksum, expected.aggregate.checksum);
      EXPECT_GT(got.aggregate.count, 1000U);
    }
  }
}

#endif

}  // namespace
}  // namespace joinery::test
