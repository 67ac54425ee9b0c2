// GPU radix primitives: swwc and hierarchical partitioning under their tunings, stable payloads
// across calls, the radix histogram and the prefix scan against CPU references; and the
// refusals. GPU tests skip with a message when no GPU is present; the refusals run everywhere.
// The partitioning tests of every algorithm: test_partition.cpp.
#include "gpu/partition_test_util.hpp"
#include "support/refusal.hpp"

#include <joinery/gen.hpp>
#include <joinery/primitives/partition.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

TEST_F(Partition, HierarchicalWithSmallRingsAndChunks) {
  // Hierarchical's staging under pressure: one or two slots a digit and 32-row chunks, so that
  // chunks often find their slot busy (and go direct), slots pass over direct chunks, buffers
  // straddle two chunks and skewed ranges many; and long chunks (2^10 rows) with one slot.
  size_type const n = (size_type{1} << 18) + 77;  // 257 tiles of 1024 rows, 4 digit widths
  struct setting {
    int log2_r, log2_c;
  };
  std::uint64_t seed = 4000;
  for (auto const st : {setting{0, 5}, setting{1, 5}, setting{0, 10}, setting{3, 7}}) {
    detail::gpu::swwc_tuning tuning;
    tuning.log2_ring = st.log2_r;
    tuning.log2_chunk = st.log2_c;
    for (auto key : {type_id::uint32, type_id::int64}) {
      for (auto const& payloads : std::vector<std::vector<type_id>>{{}, {type_id::int32}, {type_id::uint64}}) {
        for (double zipf : {0.0, 1.5}) {
          auto const d = make_data({key, n, payloads, zipf == 0.0, 0, zipf, ++seed}, stream_);
          for (int bits : {1, 6, 11}) {
            EXPECT_EQ(partition_and_check(d, 0, bits, partition_algorithm::hierarchical, stream_,
                                          tuning),
                      "")
              << "R = 2^" << st.log2_r << ", C = 2^" << st.log2_c << ", Zipf " << zipf << ": "
              << describe(partition_algorithm::hierarchical, key, n, 0, bits, payloads.size());
          }
        }
      }
    }
  }
}

TEST_F(Partition, SwwcUnderEveryPolicyAndFlushAlignment) {
  // Each block shape with and without aligned flushes (rotated digit ranges: full buffers on
  // aligned rows, drains from the top, the run that wraps), and buffers of 96 and 128 tuples
  // (the long-buffer flush, one that is not a power of two). Small inputs give digits shorter than their alignment gap.
  using detail::gpu::swwc_variant;
  struct setting {
    swwc_variant policy;
    bool align;
    std::optional<int> b;  // buffer_tuples; empty for the policy's own
  };
  std::vector<setting> settings;
  for (auto policy : {swwc_variant::base, swwc_variant::wide, swwc_variant::long_tile,
                      swwc_variant::wide_long}) {
    for (bool align : {false, true}) { settings.push_back({policy, align, std::nullopt}); }
  }
  settings.push_back({swwc_variant::wide_long, true, 96});
  settings.push_back({swwc_variant::long_tile, false, 128});
  std::uint64_t seed = 5000;
  for (auto const& st : settings) {
    detail::gpu::swwc_tuning tuning;
    tuning.variant = st.policy;
    tuning.aligned_flushes = st.align;
    tuning.buffer_tuples = st.b;
    for (size_type n : {size_type{3001}, (size_type{1} << 18) + 77}) {
      for (auto key : {type_id::uint32, type_id::int64}) {
        for (auto const& payloads : std::vector<std::vector<type_id>>{{type_id::int32}, {type_id::uint64}}) {
          for (double zipf : {0.0, 1.5}) {
            auto const d = make_data({key, n, payloads, zipf == 0.0, 0, zipf, ++seed}, stream_);
            for (int bits : {3, 8, 9, 11}) {
              EXPECT_EQ(partition_and_check(d, 0, bits, partition_algorithm::swwc, stream_, tuning),
                        "")
                << "policy " << static_cast<int>(st.policy) << ", aligned " << st.align << ", b "
                << st.b.value_or(0) << ", Zipf " << zipf << ": "
                << describe(partition_algorithm::swwc, key, n, 0, bits, payloads.size());
            }
          }
        }
      }
    }
  }
}

TEST_F(Partition, SwwcAlignedRunsThatWrap) {
  // Aligned flushes rotate each digit's range by h rows (to the first aligned row), so the run
  // that reaches the range's end continues at its start. Built to happen: one tile, n0 rows of
  // digit 0 then n1 of digit 1, whose range starts at row n0 (h = -n0 mod the alignment). The
  // tile's digit-1 claims go out as one skew range of n1 - n1 % b positions, whose pending tuples
  // pass position n1 - h (row_of wraps) when n1 % b < h; the drain of the last n1 % b positions
  // straddles n1 - h (the write loop wraps) when n1 % b > h > 0.
  using detail::gpu::swwc_variant;
  struct setting {
    type_id key, payload;
    swwc_variant policy;
    std::optional<int> log2_b;
    std::optional<int> b;
    size_type n0, n1;
  };
  auto const base = swwc_variant::base;
  auto const wide = swwc_variant::wide;
  auto const wide_long = swwc_variant::wide_long;
  auto const none = std::nullopt;
  for (auto const& st : {// b = 32, h = 31 / 12: row_of wraps / the drain (20 rows) wraps
                         setting{type_id::uint32, type_id::int32, base, 5, none, 1, 4000},
                         setting{type_id::uint32, type_id::int32, base, 5, none, 20, 4020},
                         // b = 64, h = 61 / 24
                         setting{type_id::uint32, type_id::int32, wide_long, 6, none, 3, 8000},
                         setting{type_id::uint32, type_id::int32, wide_long, 6, none, 40, 8040},
                         // b = 96 (aligned to 64 rows), h = 59
                         setting{type_id::uint32, type_id::int32, wide_long, none, 96, 5, 7680},
                         // 16-byte tuples, one block of 1024 x 4, b = 32
                         setting{type_id::uint64, type_id::uint64, wide, 5, none, 1, 4000},
                         setting{type_id::uint64, type_id::uint64, wide, 5, none, 20, 4020}}) {
    detail::gpu::swwc_tuning tuning;
    tuning.aligned_flushes = true;
    tuning.variant = st.policy;
    tuning.log2_buffer = st.log2_b;
    tuning.buffer_tuples = st.b;
    auto d = make_data({st.key, st.n0 + st.n1, {st.payload}, true, 0, 0,
                        static_cast<std::uint64_t>(6000 + st.n0)}, stream_);
    dispatch_key_type(st.key, [&](auto tag) {
      using K = typename decltype(tag)::type;
      auto* k = d.host.column(0).template data_as<K>();
      for (size_type i = 0; i < st.n0 + st.n1; ++i) {
        k[i] = static_cast<K>((k[i] & ~K{1}) | (i < st.n0 ? K{0} : K{1}));
      }
    });
    std::vector<column> dev;
    for (auto const& c : d.host.view()) { dev.push_back(column::copy_of(c, device_resource(), stream_)); }
    d.device = table(std::move(dev));
    EXPECT_EQ(partition_and_check(d, 0, 1, partition_algorithm::swwc, stream_, tuning), "")
      << "policy " << static_cast<int>(st.policy) << ", n0 " << st.n0 << ", n1 " << st.n1;
  }
}

TEST_F(Partition, StablePayloadsLineUpAcrossCalls) {
  size_type const n = 100'003;
  auto const d = make_data({type_id::int32, n,
                            {type_id::int32, type_id::uint64, type_id::uint32, type_id::int64},
                            true, 0, 0, 99},
                           stream_);
  // A float32 payload: the uint32 column's bits seen as floats (NaNs included), moved as is.
  auto payloads = d.payloads();
  payloads[2] = column_view(type_id::float32, payloads[2].data(), n, memory_space::device);
  auto const a = partition_algorithm::stable_cub;
  auto const all = radix_partition(d.keys(), payloads, 3, 9, a, stream_);
  EXPECT_EQ(all.payloads[2].type(), type_id::float32);
  auto const h_all = to_host(all, stream_);
  EXPECT_EQ(check_partition(d.rows(), h_all, 3, 9, true), "");
  // Each payload partitioned on its own lines up with the joint call.
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    auto const one = to_host(radix_partition(d.keys(), {payloads[i]}, 3, 9, a, stream_), stream_);
    EXPECT_EQ(one.keys, h_all.keys) << "payload " << i;
    EXPECT_EQ(one.payloads[0], h_all.payloads[i]) << "payload " << i;
    EXPECT_EQ(one.offsets, h_all.offsets) << "payload " << i;
  }
  auto const keys_only = to_host(radix_partition(d.keys(), {}, 3, 9, a, stream_), stream_);
  EXPECT_EQ(keys_only.keys, h_all.keys);
}

// ---------------------------------------------------------------------------------------------
// Histogram and scan.

TEST_F(Partition, RadixHistogramMatchesCpu) {
  constexpr size_type h = radix_histogram_policy::tile_items;
  std::uint64_t seed = 3000;
  for (auto key : key_types) {
    for (size_type n : {size_type{0}, size_type{1}, h - 1, h, h + 1, (size_type{1} << 20) + 1}) {
      for (double hot : {0.0, 0.5}) {
        if (n == 0 && hot > 0) { continue; }
        auto const d = make_data({key, n, {}, true, hot, 0, ++seed}, stream_);
        auto const in = d.rows().keys;
        for (int bits : {1, 4, 8, 12}) {
          for (int offset : {0, key_width(key) - bits}) {
            auto const counts = radix_histogram(d.keys(), offset, bits, stream_);
            ASSERT_EQ(counts.type(), type_id::int64);
            ASSERT_EQ(counts.size(), size_type{1} << bits);
            std::vector<std::int64_t> want(std::size_t{1} << bits, 0);
            for (auto k : in) { ++want[(k >> offset) & ((std::uint64_t{1} << bits) - 1)]; }
            EXPECT_EQ(column::copy_of(counts.view(), host_resource(), stream_).to_vector<std::int64_t>(),
                      want)
              << to_string(key) << " keys, " << n << " rows, hot " << hot << ", bits [" << offset
              << ", " << offset + bits << ")";
          }
        }
      }
    }
  }
}

TEST_F(Partition, PrefixScanMatchesCpu) {
  std::uint64_t seed = 4000;
  for (size_type n : {size_type{0}, size_type{1}, size_type{2}, size_type{1000}, size_type{4095},
                      size_type{4097}, (size_type{1} << 22) + 3}) {
    gen::relation_spec spec;
    spec.rows = n;
    spec.payload_types = {type_id::int64};
    spec.seed = ++seed;
    auto const t = gen::generate(spec);
    auto const& vals = t.column(1);
    auto const dev = column::copy_of(vals.view(), device_resource(), stream_);
    auto const out = prefix_scan(dev.view(), stream_);
    ASSERT_EQ(out.size(), n + 1);
    auto const got = column::copy_of(out.view(), host_resource(), stream_).to_vector<std::int64_t>();
    auto const v = vals.to_vector<std::int64_t>();
    std::vector<std::int64_t> want(static_cast<std::size_t>(n) + 1, 0);
    std::uint64_t sum = 0;  // wrapping, as documented
    for (size_type i = 0; i < n; ++i) {
      sum += static_cast<std::uint64_t>(v[i]);
      want[i + 1] = static_cast<std::int64_t>(sum);
    }
    EXPECT_EQ(got, want) << n << " rows";
  }
  // Counts in the usual range: sums past 2^32.
  std::vector<std::int64_t> big(100'000);
  for (std::size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<std::int64_t>(detail::mix64(i) >> 30);
  }
  auto const out = prefix_scan(column::copy_of(column_view::of(big), device_resource(), stream_).view(),
                               stream_);
  auto const got = column::copy_of(out.view(), host_resource(), stream_).to_vector<std::int64_t>();
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < big.size(); ++i) {
    ASSERT_EQ(got[i], sum) << i;
    sum += big[i];
  }
  EXPECT_EQ(got.back(), sum);
  EXPECT_GT(sum, std::int64_t{1} << 40);
}

// ---------------------------------------------------------------------------------------------
// Refusals: argument checks come before any device work, so most run without a GPU too.

TEST(PartitionRefusals, ClearMessages) {
  std::vector<std::int32_t> k32{5, -3, 7, 9};
  std::vector<std::uint64_t> k64{5, 3, 7, 9};
  std::vector<std::int16_t> k16{5, 3, 7, 9};
  std::vector<std::int64_t> p64{1, 2, 3, 4};
  std::vector<std::int32_t> p32short{1, 2, 3};
  auto const keys = column_view::of(k32);
  auto const keys64 = column_view::of(k64);
  auto const pay = column_view::of(p64);
  auto const sa = partition_algorithm::shared_atomic;
  auto const sc = partition_algorithm::stable_cub;
  if (!built_with_cuda()) {
    expect_refusal([&] { (void)radix_partition(keys, {pay}, 0, 4); }, "built without CUDA");
    expect_refusal([&] { (void)radix_histogram(keys, 0, 4); }, "built without CUDA");
    expect_refusal([&] { (void)prefix_scan(pay); }, "built without CUDA");
    return;
  }
  // Digits.
  for (int bits : {0, -1, max_radix_bits + 1, 32}) {
    expect_refusal([&] { (void)radix_partition(keys, {pay}, 0, bits, sc); }, "bits must lie in [1, 12]");
    expect_refusal([&] { (void)radix_histogram(keys, 0, bits); }, "bits must lie in [1, 12]");
  }
  expect_refusal([&] { (void)radix_partition(keys, {pay}, -1, 4, sa); }, "do not lie within");
  expect_refusal([&] { (void)radix_partition(keys, {pay}, 25, 8, sa); },
                 "[25, 33) do not lie within the 32 bits of the int32 keys");
  expect_refusal([&] { (void)radix_partition(keys64, {pay}, 60, 5, sc); },
                 "do not lie within the 64 bits of the uint64 keys");
  expect_refusal([&] { (void)radix_histogram(keys64, 57, 8); }, "do not lie within");
  // Types, lengths, payload counts, nulls.
  expect_refusal([&] { (void)radix_partition(column_view::of(k16), {pay}, 0, 4); },
                 "keys must be int32, int64, uint32 or uint64, got int16");
  expect_refusal([&] { (void)radix_histogram(column_view::of(k16), 0, 4); }, "keys must be");
  expect_refusal([&] { (void)radix_partition(keys, {column_view::of(k16)}, 0, 4); },
                 "payloads must be 4- or 8-byte types");
  expect_refusal([&] { (void)radix_partition(keys, {pay, column_view::of(p32short)}, 0, 4); },
                 "the payload 1 column has 3 rows but the keys have 4");
  expect_refusal([&] { (void)radix_partition(keys, {pay, pay}, 0, 4, sa); },
                 "shared_atomic moves the key and at most one payload column");
  std::uint8_t mask = 0x0f;
  column_view const nullable(type_id::int32, k32.data(), 4, memory_space::host, &mask, 0);
  expect_refusal([&] { (void)radix_partition(nullable, {pay}, 0, 4); }, "nullable");
  expect_refusal([&] { (void)prefix_scan(keys); }, "counts must be int64, got int32");
  expect_refusal([&] { (void)partition_algorithm_from_string("linear"); },
                 "unknown partition algorithm 'linear'");
  EXPECT_EQ(partition_algorithm_from_string("shared_atomic"), sa);
  EXPECT_EQ(partition_algorithm_from_string("block_scatter"), partition_algorithm::block_scatter);
  expect_refusal([&] { (void)radix_partition(keys, {pay, pay}, 0, 4, partition_algorithm::block_scatter); },
                 "block_scatter moves the key and at most one payload column");
  EXPECT_EQ(partition_algorithm_from_string("swwc"), partition_algorithm::swwc);
  expect_refusal([&] { (void)radix_partition(keys, {pay, pay}, 0, 4, partition_algorithm::swwc); },
                 "swwc moves the key and at most one payload column");
  EXPECT_EQ(partition_algorithm_from_string("hierarchical"), partition_algorithm::hierarchical);
  expect_refusal([&] { (void)radix_partition(keys, {pay, pay}, 0, 4, partition_algorithm::hierarchical); },
                 "hierarchical moves the key and at most one payload column");
  EXPECT_EQ(partition_algorithm_from_string(to_string(sc)), sc);
  // swwc tuning outside its ranges (detail::radix_partition: the benchmark's A/B runs).
  {
    using detail::gpu::swwc_tuning;
    auto refused = [&](swwc_tuning const& t, std::string const& needle) {
      expect_refusal(
        [&] { (void)detail::radix_partition(keys, {pay}, 0, 4, partition_algorithm::swwc, t); },
        needle);
    };
    swwc_tuning t;
    t.log2_buffer = 8;
    refused(t, "radix_partition: swwc tuning: log2_buffer is 8, outside [0, 7]");
    t = {};
    t.buffer_tuples = 32;
    refused(t, "buffer_tuples is 32, outside [48, 128]");
    t = {};
    t.buffer_tuples = 56;
    refused(t, "buffer_tuples is 56, not a multiple of 16");
    t = {};
    t.log2_chunk = 4;
    refused(t, "log2_chunk is 4, outside [5, 12]");
    t = {};
    t.log2_ring = 9;
    refused(t, "log2_ring is 9, outside [0, 8]");
    t = {};
    t.variant = static_cast<detail::gpu::swwc_variant>(4);
    refused(t, "variant is 4, not one of base, wide, long_tile, wide_long");
  }
  // Memory spaces: host columns where device memory is needed.
  expect_refusal([&] { (void)radix_partition(keys, {pay}, 0, 4, sa); },
                 "the key column is in host memory but must be in device memory");
  expect_refusal([&] { (void)radix_histogram(keys, 0, 4); }, "must be in device memory");
  expect_refusal([&] { (void)prefix_scan(pay); }, "must be in device memory");
  if (device_count() == 0) { return; }
  cuda_stream s;
  auto const dk = column::copy_of(keys, device_resource(), s);
  auto const dp = column::copy_of(pay, device_resource(), s);
  expect_refusal([&] { (void)radix_partition(dk.view(), {dp.view(), pay}, 0, 4, sc, s); },
                 "the payload 1 column is in host memory");
  expect_refusal([&] { (void)radix_partition(dk.view(), {dp.view()}, 0, 4, sc, s, host_resource()); },
                 "the memory resource must allocate device memory, not host memory");
  expect_refusal([&] { (void)radix_histogram(dk.view(), 0, 4, s, host_resource()); },
                 "must allocate device memory");
  expect_refusal([&] { (void)prefix_scan(dp.view(), s, host_resource()); }, "must allocate device memory");
  s.ref().synchronize();
}

}  // namespace
}  // namespace joinery::test
