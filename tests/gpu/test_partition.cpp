// GPU radix partitioning (stable_cub, shared_atomic, block_scatter, swwc and hierarchical), one
// instance per algorithm, against a CPU reference on random data: at tile and block edges, with
// skew, every digit width and several offsets, two passes, > 2^31 rows where memory allows. GPU
// tests skip with a message when no GPU is present. The tuned swwc / hierarchical runs, the
// histogram, the scan and the refusals: test_partition_tuning.cpp.
#include "gpu/partition_test_util.hpp"

#include <joinery/gen.hpp>
#include <joinery/primitives/partition.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

constexpr partition_algorithm algorithms[] = {partition_algorithm::stable_cub,
                                              partition_algorithm::shared_atomic,
                                              partition_algorithm::block_scatter,
                                              partition_algorithm::swwc,
                                              partition_algorithm::hierarchical};

/// The partitioning tests, one instance per algorithm (so that a sanitizer run can pick one:
/// --gtest_filter='Algorithms/PartitionAlgorithms.*/swwc').
class PartitionAlgorithms : public Partition,
                            public ::testing::WithParamInterface<partition_algorithm> {};

// ---------------------------------------------------------------------------------------------
// Radix partitioning.

TEST_P(PartitionAlgorithms, SizesAroundTilesAndBlocks) {
  constexpr size_type t = shared_atomic_partition_policy::tile_items;
  constexpr size_type h = radix_histogram_policy::tile_items;
  constexpr size_type b = block_scatter_partition_policy::tile_items;
  constexpr size_type bh = block_scatter_partition_policy_high::tile_items;
  constexpr size_type w = swwc_partition_policy::tile_items;
  constexpr size_type wl = detail::gpu::swwc_partition_policy_long::tile_items;
  std::vector<size_type> const sizes{0,     1,     2,         31,        33,    t - 1, t,
                                     t + 1, 2 * t + 1, h - 1, h + 1, 37 * t + 11, b - 1,
                                     b + 1, 3 * b,     bh + 1, 5 * bh - 1, w - 1, w + 1, 9 * w + 5,
                                     wl - 1, wl + 1, 3 * wl + 7};
  std::vector<std::vector<type_id>> const payload_sets{{}, {type_id::int32}, {type_id::uint64}};
  std::uint64_t seed = 100;
  {  // one algorithm per instance
    auto const a = GetParam();
    for (auto key : key_types) {
      for (auto const& payloads : payload_sets) {
        for (auto n : sizes) {
          auto const d = make_data({key, n, payloads, true, 0, 0, ++seed}, stream_);
          // 6 bits; and 9, 10, 11 bits, where swwc takes its other policies (other tiles).
          for (int bits : {6, 9, 10, 11}) {
            EXPECT_EQ(partition_and_check(d, 0, bits, a, stream_), "")
              << describe(a, key, n, 0, bits, payloads.size());
          }
        }
      }
    }
  }
}

TEST_P(PartitionAlgorithms, BlocksOwningSeveralTiles) {
  // More tiles than the grid has blocks (SMs x resident blocks), so that blocks own several
  // tiles and a partial last one.
  auto const info = get_device_info(0);
  size_type const n = static_cast<size_type>(info.sm_count) *
                        shared_atomic_partition_policy::max_blocks_per_sm *
                        shared_atomic_partition_policy::tile_items * 5 / 2 + 13;
  {  // one algorithm per instance
    auto const a = GetParam();
    for (auto key : {type_id::int32, type_id::uint64}) {
      auto const d = make_data({key, n, {type_id::int64}, true, 0, 0, 7}, stream_);
      EXPECT_EQ(partition_and_check(d, 3, 9, a, stream_), "") << describe(a, key, n, 3, 9, 1);
    }
  }
}

TEST_P(PartitionAlgorithms, EveryDigitWidthAndOffset) {
  size_type const n = 3 * radix_histogram_policy::tile_items + 77;
  std::uint64_t seed = 1000;
  for (auto key : key_types) {
    // 8-byte payloads with 4-byte keys and the other way round.
    auto const payload = size_of(key) == 4 ? type_id::uint64 : type_id::int32;
    auto const d = make_data({key, n, {payload}, true, 0, 0, ++seed}, stream_);
    for (int bits = 1; bits <= max_radix_bits; ++bits) {
      for (int offset : {0, 7, key_width(key) - bits}) {
        {  // one algorithm per instance
          auto const a = GetParam();
          EXPECT_EQ(partition_and_check(d, offset, bits, a, stream_), "")
            << describe(a, key, n, offset, bits, 1);
        }
      }
    }
  }
}

TEST_P(PartitionAlgorithms, DigitsAreBitsOfTheSignedKey) {
  // Hand-checked: digit = bits [28, 32) of the two's-complement pattern.
  std::vector<std::int32_t> keys{-1, 0, 1, std::numeric_limits<std::int32_t>::min(),
                                 std::numeric_limits<std::int32_t>::max(), -2, 0x10000000};
  std::vector<std::int32_t> pay{10, 11, 12, 13, 14, 15, 16};
  auto const dk = column::copy_of(column_view::of(keys), device_resource(), stream_);
  auto const dp = column::copy_of(column_view::of(pay), device_resource(), stream_);
  // digits: 15, 0, 0, 8, 7, 15, 1
  std::vector<std::int64_t> offsets(17, 0);
  for (int p = 0; p <= 16; ++p) {
    offsets[p] = p == 0 ? 0 : p <= 1 ? 2 : p <= 7 ? 3 : p <= 8 ? 4 : p <= 15 ? 5 : 7;
  }
  {  // one algorithm per instance
    auto const a = GetParam();
    auto const r = radix_partition(dk.view(), {dp.view()}, 28, 4, a, stream_);
    auto const host_offsets = column::copy_of(r.offsets.view(), host_resource(), stream_);
    EXPECT_EQ(host_offsets.to_vector<std::int64_t>(), offsets) << to_string(a);
    auto const hk = column::copy_of(r.keys.view(), host_resource(), stream_).to_vector<std::int32_t>();
    auto const hp = column::copy_of(r.payloads[0].view(), host_resource(), stream_).to_vector<std::int32_t>();
    if (is_stable(a)) {
      EXPECT_EQ(hk, (std::vector<std::int32_t>{0, 1, 0x10000000, std::numeric_limits<std::int32_t>::max(),
                                               std::numeric_limits<std::int32_t>::min(), -1, -2}));
      EXPECT_EQ(hp, (std::vector<std::int32_t>{11, 12, 16, 14, 13, 10, 15}));
    } else {
      EXPECT_EQ(std::vector<std::int32_t>(hk.begin() + 2, hk.end()),
                (std::vector<std::int32_t>{0x10000000, std::numeric_limits<std::int32_t>::max(),
                                           std::numeric_limits<std::int32_t>::min(), hk[5], hk[6]}));
      EXPECT_EQ(std::min(hk[0], hk[1]), 0);
      EXPECT_EQ(std::max(hk[0], hk[1]), 1);
      EXPECT_EQ(std::min(hk[5], hk[6]), -2);
      EXPECT_EQ(std::max(hk[5], hk[6]), -1);
    }
  }
}

TEST_P(PartitionAlgorithms, SkewedKeys) {
  size_type const n = (size_type{1} << 20) + 3;
  struct skew {
    char const* name;
    double hot, zipf;
    bool hashed;
  };
  std::uint64_t seed = 2000;
  for (auto const& sk : {skew{"hot key on half the rows", 0.5, 0.0, false},
                         skew{"hot key on half the rows, hashed", 0.5, 0.0, true},
                         skew{"Zipf 1.5", 0.0, 1.5, false}, skew{"Zipf 1.5, hashed", 0.0, 1.5, true}}) {
    for (auto key : {type_id::int64, type_id::uint32}) {
      for (auto payload : {type_id::uint32, type_id::int64}) {
        auto const d = make_data({key, n, {payload}, sk.hashed, sk.hot, sk.zipf, ++seed}, stream_);
        for (int bits : {1, 8, 11}) {
          {  // one algorithm per instance
            auto const a = GetParam();
            EXPECT_EQ(partition_and_check(d, 0, bits, a, stream_), "")
              << sk.name << ": " << describe(a, key, n, 0, bits, 1);
          }
        }
      }
    }
  }
}

TEST_P(PartitionAlgorithms, EveryRowInOneDigit) {
  // One key on every row: every tile's tuples go to one digit (swwc: the smallest buffers at 12
  // bits with 8+8-byte tuples, and the flush that takes whole multiples of the buffer at once).
  size_type const n = 300'001;
  auto const a = GetParam();
  std::uint64_t seed = 3000;
  for (auto key : {type_id::uint32, type_id::int64}) {
    for (auto payload : {type_id::uint64, type_id::int32}) {
      auto const d = make_data({key, n, {payload}, false, 1.0, 0.0, ++seed}, stream_);
      for (int bits : {4, 12}) {
        EXPECT_EQ(partition_and_check(d, 0, bits, a, stream_), "")
          << "one key: " << describe(a, key, n, 0, bits, 1);
      }
    }
  }
}

/// A device view of rows [begin, end) of a device column.
column_view rows_of(column const& c, size_type begin, size_type end) {
  auto const* base = static_cast<char const*>(c.view().data());
  return column_view(c.type(), base + begin * static_cast<size_type>(size_of(c.type())),
                     end - begin, memory_space::device);
}

TEST_P(PartitionAlgorithms, TwoPassesEqualOnePassOverBothDigits) {
  // Pass 1 by bits [6, 12), pass 2 each partition (a view of the output) by bits [0, 6): the
  // result is a partitioning by bits [0, 12), for stable_cub exactly the one-pass stable one.
  size_type const n = 200'003;
  for (auto key : {type_id::int64, type_id::uint32}) {
    auto const d = make_data({key, n, {type_id::uint32}, true, 0, 0, 77}, stream_);
    {  // one algorithm per instance
      auto const a = GetParam();
      auto const first = radix_partition(d.keys(), d.payloads(), 6, 6, a, stream_);
      auto const o1 = column::copy_of(first.offsets.view(), host_resource(), stream_)
                        .to_vector<std::int64_t>();
      ASSERT_EQ(o1.size(), 65u);
      host_rows all;
      all.payloads.resize(1);
      all.offsets.push_back(0);
      for (int p = 0; p < 64; ++p) {
        auto const second = radix_partition(rows_of(first.keys, o1[p], o1[p + 1]),
                                            {rows_of(first.payloads[0], o1[p], o1[p + 1])}, 0, 6,
                                            a, stream_);
        auto const h = to_host(second, stream_);
        ASSERT_EQ(h.offsets.size(), 65u);
        all.keys.insert(all.keys.end(), h.keys.begin(), h.keys.end());
        all.payloads[0].insert(all.payloads[0].end(), h.payloads[0].begin(), h.payloads[0].end());
        for (int q = 1; q <= 64; ++q) { all.offsets.push_back(o1[p] + h.offsets[q]); }
      }
      bool const stable = is_stable(a);
      // Digit order of two passes: bits [6, 12) major, bits [0, 6) minor = bits [0, 12).
      EXPECT_EQ(check_partition(d.rows(), all, 0, 12, stable), "") << describe(a, key, n, 0, 12, 1);
      if (stable) {
        auto const one = to_host(radix_partition(d.keys(), d.payloads(), 0, 12, a, stream_), stream_);
        EXPECT_EQ(one.keys, all.keys);
        EXPECT_EQ(one.payloads, all.payloads);
        EXPECT_EQ(one.offsets, all.offsets);
      }
    }
  }
}

TEST_P(PartitionAlgorithms, BeyondTwoToThe31Rows) {
  // 2^31 + 2^16 + 3 rows of uint32 keys and uint64 row ids: 64-bit slots, offsets and indices.
  size_type const n = (size_type{1} << 31) + (size_type{1} << 16) + 3;
  std::size_t const tuple = sizeof(std::uint32_t) + sizeof(std::uint64_t);
  std::size_t const device_need = 3 * tuple * static_cast<std::size_t>(n) + (std::size_t{4} << 30);
  std::size_t const host_need = 3 * tuple * static_cast<std::size_t>(n);
  auto const host_bytes = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                          static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  if (get_device_info(0).free_memory < device_need || host_bytes < host_need) {
    GTEST_SKIP() << "needs " << (device_need >> 30) << " GiB free device memory and "
                 << (host_need >> 30) << " GiB host memory";
  }
  gen::relation_spec spec;
  spec.rows = n;
  spec.kind = gen::key_kind::foreign;
  spec.key_type = type_id::uint32;
  spec.domain = (size_type{1} << 32) - 2;
  spec.seed = 31;
  auto keys_host = gen::generate(spec);
  std::vector<std::uint64_t> ids(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < n; ++i) { ids[i] = static_cast<std::uint64_t>(i); }
  auto const* kin = keys_host.column(0).data_as<std::uint32_t>();
  int const bit_offset = 5, bits = 8;
  size_type const fanout = size_type{1} << bits;
  auto digit = [&](std::uint32_t k) { return static_cast<size_type>((k >> bit_offset) & (fanout - 1)); };
  std::vector<size_type> count(fanout, 0);
#pragma omp parallel
  {
    std::vector<size_type> local(fanout, 0);
#pragma omp for schedule(static) nowait
    for (size_type i = 0; i < n; ++i) { ++local[digit(kin[i])]; }
#pragma omp critical
    for (size_type p = 0; p < fanout; ++p) { count[p] += local[p]; }
  }
  auto const dk = column::copy_of(keys_host.view().column(0), device_resource(), stream_);
  auto const di = column::copy_of(column_view::of(ids), device_resource(), stream_);
  {  // one algorithm per instance
    auto const a = GetParam();
    bool const stable = is_stable(a);
    std::vector<std::int64_t> offsets;
    std::vector<std::uint32_t> kout;
    std::vector<std::uint64_t> iout;
    {
      auto const r = radix_partition(dk.view(), {di.view()}, bit_offset, bits, a, stream_);
      offsets = column::copy_of(r.offsets.view(), host_resource(), stream_).to_vector<std::int64_t>();
      kout = column::copy_of(r.keys.view(), host_resource(), stream_).to_vector<std::uint32_t>();
      iout = column::copy_of(r.payloads[0].view(), host_resource(), stream_).to_vector<std::uint64_t>();
    }
    ASSERT_EQ(offsets.size(), static_cast<std::size_t>(fanout + 1));
    ASSERT_EQ(offsets[0], 0);
    for (size_type p = 0; p < fanout; ++p) {
      ASSERT_EQ(offsets[p + 1] - offsets[p], count[p]) << to_string(a) << " partition " << p;
    }
    // Every output row is an input row (its id), in its digit's partition, each row once; with
    // a stable algorithm, ids increase within a partition.
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(n), 0);
    size_type errors = 0;
    std::string first_error;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : errors)
    for (size_type p = 0; p < fanout; ++p) {
      for (auto i = offsets[p]; i < offsets[p + 1]; ++i) {
        auto const id = iout[i];
        bool ok = id < static_cast<std::uint64_t>(n) && kout[i] == kin[id] && digit(kout[i]) == p &&
                  std::atomic_ref<std::uint8_t>(seen[id]).fetch_add(1) == 0 &&
                  (!stable || i == offsets[p] || iout[i - 1] < id);
        if (!ok) {
          ++errors;
#pragma omp critical
          if (first_error.empty()) {
            first_error = "output row " + std::to_string(i) + " (partition " + std::to_string(p) +
                          ") holds row id " + std::to_string(id);
          }
        }
      }
    }
    EXPECT_EQ(errors, 0) << to_string(a) << ": " << first_error;
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, PartitionAlgorithms, ::testing::ValuesIn(algorithms),
                         [](auto const& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace joinery::test
