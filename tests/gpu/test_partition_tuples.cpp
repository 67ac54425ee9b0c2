// radix_partition_tuples (chunked write-combining into interleaved (key, payload) tuples) against
// a CPU reference: sizes around its tiles and block ranges, every digit width and several
// offsets, blocks of several tiles at every ring size, signed keys, skew (a hot key, Zipf 1.5, one
// key everywhere), columns off 16-byte boundaries (the path without bulk copies), > 2^31 rows
// where memory allows; and the refusals.
// GPU tests skip with a message when no GPU is present; the refusals run everywhere.
#include "core/hash.hpp"
#include "primitives/detail/partition_policy.hpp"
#include "support/refusal.hpp"

#include <joinery/gen.hpp>
#include <joinery/primitives/partition.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace joinery::test {
namespace {

using detail::gpu::tuple_partition_policy;

class PartitionTuples : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
  cuda_stream stream_;
};

/// Bit patterns of a host column's values, zero-extended to 64 bits.
std::vector<std::uint64_t> bits_of(column_view const& c) {
  std::vector<std::uint64_t> v(static_cast<std::size_t>(c.size()));
  if (size_of(c.type()) == 4) {
    auto const* p = static_cast<std::uint32_t const*>(c.data());
    for (std::size_t i = 0; i < v.size(); ++i) { v[i] = p[i]; }
  } else if (!v.empty()) {
    std::memcpy(v.data(), c.data(), v.size() * sizeof(std::uint64_t));
  }
  return v;
}

struct data_spec {
  type_id key_type = type_id::uint32;
  type_id payload_type = type_id::int32;
  size_type rows = 0;
  bool hashed = true;  // keys = mix64(generated key): random bits over the whole width
  double hot_key_fraction = 0;
  double zipf = 0;
  std::uint64_t seed = 1;
};

/// Host rows (column 0 keys, column 1 payloads), random keys (hashed over the whole width unless
/// raw; raw signed keys include negative values) and random payloads.
table make_rows(data_spec const& d) {
  gen::relation_spec spec;
  spec.rows = d.rows;
  spec.kind = gen::key_kind::foreign;
  spec.key_type = d.key_type;
  spec.domain = std::max<size_type>(2 * d.rows + 17, 1000);
  spec.key_offset = is_signed(d.key_type) ? -spec.domain / 2 : 1;
  spec.zipf = d.zipf;
  spec.hot_key_fraction = d.hot_key_fraction;
  spec.payload_types = {d.payload_type};
  spec.seed = d.seed;
  auto t = gen::generate(spec);
  if (d.hashed) {
    auto& keys = t.column(0);
    std::uint64_t const salt = d.seed * 0x9e3779b97f4a7c15ULL;
    for (size_type i = 0; i < keys.size(); ++i) {
      if (size_of(d.key_type) == 4) {
        auto* k = static_cast<std::uint32_t*>(keys.data());
        k[i] = static_cast<std::uint32_t>(detail::mix64(k[i] ^ salt));
      } else {
        auto* k = static_cast<std::uint64_t*>(keys.data());
        k[i] = detail::mix64(k[i] ^ salt);
      }
    }
  }
  return t;
}

/// "" when `r` is a correct partitioning of (keys, payloads) by the digit [bit_offset, bit_offset
/// + bits): offsets are the digit counts' exclusive scan, and every partition's rows are exactly
/// the multiset of (key, payload) pairs of its digit, each stored key first in tuple_bytes().
std::string check(std::vector<std::uint64_t> const& keys, std::vector<std::uint64_t> const& pays,
                  partitioned_tuples const& r, int bit_offset, int bits, stream_ref s) {
  auto const n = static_cast<size_type>(keys.size());
  size_type const fanout = size_type{1} << bits;
  std::uint64_t const mask = (std::uint64_t{1} << bits) - 1;
  auto digit = [&](std::uint64_t k) { return static_cast<size_type>((k >> bit_offset) & mask); };
  if (r.rows != n || r.bits != bits || r.bit_offset != bit_offset || r.fanout() != fanout) {
    return "the result describes the wrong partitioning";
  }
  if (r.tuples.size() != static_cast<std::size_t>(n) * r.tuple_bytes()) {
    return "tuples hold " + std::to_string(r.tuples.size()) + " bytes";
  }
  if (r.offsets.space() != memory_space::device || (n > 0 && r.tuples.space() != memory_space::device)) {
    return "results are not in device memory";
  }
  auto const offsets =
    column::copy_of(r.offsets.view(), host_resource(), s).to_vector<std::int64_t>();
  std::vector<unsigned char> bytes(r.tuples.size());
  if (!bytes.empty()) {
    copy_bytes(bytes.data(), memory_space::host, r.tuples.data(), memory_space::device,
               bytes.size(), s);
  }
  std::size_t const w = r.tuple_bytes() / 2;
  auto field = [&](size_type row, std::size_t at) {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + static_cast<std::size_t>(row) * 2 * w + at, w);
    return v;
  };
  if (static_cast<size_type>(offsets.size()) != fanout + 1) { return "wrong number of offsets"; }
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> want(static_cast<std::size_t>(fanout));
  for (size_type i = 0; i < n; ++i) { want[digit(keys[i])].emplace_back(keys[i], pays[i]); }
  if (offsets[0] != 0) { return "offsets[0] = " + std::to_string(offsets[0]); }
  for (size_type p = 0; p < fanout; ++p) {
    if (offsets[p + 1] - offsets[p] != static_cast<std::int64_t>(want[p].size())) {
      return "partition " + std::to_string(p) + " holds " +
             std::to_string(offsets[p + 1] - offsets[p]) + " rows, expected " +
             std::to_string(want[p].size());
    }
  }
  // Each partition's multiset, sorted and compared in parallel (skew puts half the rows in one).
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> got(static_cast<std::size_t>(fanout));
  size_type first_bad = fanout;
#pragma omp parallel for schedule(dynamic, 1) reduction(min : first_bad)
  for (size_type p = 0; p < fanout; ++p) {
    auto& expect = want[p];
    auto& mine = got[p];
    for (auto i = offsets[p]; i < offsets[p + 1]; ++i) { mine.emplace_back(field(i, 0), field(i, w)); }
    std::sort(expect.begin(), expect.end());
    std::sort(mine.begin(), mine.end());
    if (mine != expect) { first_bad = std::min(first_bad, p); }
  }
  if (first_bad < fanout) {
    auto const& expect = want[first_bad];
    auto const m = std::mismatch(expect.begin(), expect.end(), got[first_bad].begin());
    return "partition " + std::to_string(first_bad) +
           " holds the wrong rows: first difference, expected (" + std::to_string(m.first->first) +
           ", " + std::to_string(m.first->second) + ") got (" + std::to_string(m.second->first) +
           ", " + std::to_string(m.second->second) + ")";
  }
  return "";
}

/// Partitions host rows `t` (copied to the device, optionally `shift` rows into a longer
/// allocation so that the columns start off a 16-byte boundary) and checks the result.
std::string run_and_check(table const& t, int bit_offset, int bits, stream_ref s, size_type shift = 0) {
  auto const keys = t.view().column(0);
  auto const pays = t.view().column(1);
  auto const n = keys.size();
  auto device_view = [&](column_view const& c, column& holder) {
    holder = column(c.type(), n + shift, device_resource(), s);
    auto const w = size_of(c.type());
    if (n > 0) {
      copy_bytes(static_cast<unsigned char*>(holder.data()) + shift * w, memory_space::device,
                 c.data(), memory_space::host, static_cast<std::size_t>(n) * w, s);
    }
    return column_view(c.type(), static_cast<unsigned char const*>(holder.data()) + shift * w, n,
                       memory_space::device);
  };
  column dk, dp;
  auto const kv = device_view(keys, dk);
  auto const pv = device_view(pays, dp);
  auto const r = radix_partition_tuples(kv, pv, bit_offset, bits, s);
  if (r.key_type != keys.type() || r.payload_type != pays.type()) { return "the types changed"; }
  return check(bits_of(keys), bits_of(pays), r, bit_offset, bits, s);
}

std::string describe(data_spec const& d, int bit_offset, int bits) {
  return std::string(to_string(d.key_type)) + " keys, " + std::string(to_string(d.payload_type)) +
         " payload, " + std::to_string(d.rows) + " rows, bits [" + std::to_string(bit_offset) +
         ", " + std::to_string(bit_offset + bits) + ")";
}

constexpr std::pair<type_id, type_id> widths[] = {{type_id::uint32, type_id::int32},
                                                  {type_id::int64, type_id::uint64}};

TEST_F(PartitionTuples, SizesAroundTilesAndBlocks) {
  // Tiles of 8192 (4+4 B) and 4096 (8+8 B) rows; one block an SM owns whole tiles, so sizes past
  // (SMs x tile) give blocks of several tiles and a last block with a partial tile.
  size_type const sms = get_device_info(0).sm_count;
  std::uint64_t seed = 100;
  for (auto [key, pay] : widths) {
    size_type const t = key == type_id::uint32 ? tuple_partition_policy::tile_items<std::uint32_t>
                                               : tuple_partition_policy::tile_items<std::uint64_t>;
    for (size_type n : {size_type{0}, size_type{1}, size_type{31}, t - 1, t, t + 1, 2 * t + 5,
                        sms * t - 1, sms * t + 3, 3 * sms * t + t / 2 + 9}) {
      data_spec const d{key, pay, n, true, 0, 0, ++seed};
      auto const rows = make_rows(d);
      for (int bits : {1, 8}) {
        EXPECT_EQ(run_and_check(rows, 0, bits, stream_), "") << describe(d, 0, bits);
      }
    }
  }
}

TEST_F(PartitionTuples, EveryDigitWidthAndOffset) {
  std::uint64_t seed = 200;
  for (auto [key, pay] : widths) {
    data_spec const d{key, pay, (size_type{1} << 18) + 7, true, 0, 0, ++seed};
    auto const rows = make_rows(d);
    int const width = static_cast<int>(8 * size_of(key));
    for (int bits = 1; bits <= max_radix_bits; ++bits) {
      for (int offset : {0, 5, width - bits}) {
        EXPECT_EQ(run_and_check(rows, offset, bits, stream_), "") << describe(d, offset, bits);
      }
    }
  }
}

/// Rows for blocks of several tiles each (one block an SM; the 4-byte tile, twice the 8-byte).
size_type several_tiles_per_block(int tiles_per_block, size_type extra) {
  return static_cast<size_type>(get_device_info(0).sm_count) * tiles_per_block *
           tuple_partition_policy::tile_items<std::uint32_t> + extra;
}

TEST_F(PartitionTuples, SeveralTilesPerBlockAtEveryRingSize) {
  // Rings carry over tiles at every size: 2 bits (rings of 4096 tuples), 5, 9 and 10 (the
  // kernels with constant sizes), 11 and 12 (rings of 4 and 2 tuples of 8 bytes, 2 and 1 of 16).
  size_type const n = several_tiles_per_block(3, 1234);
  std::uint64_t seed = 250;
  for (auto [key, pay] : widths) {
    data_spec const d{key, pay, n, true, 0, 0, ++seed};
    auto const rows = make_rows(d);
    for (int bits : {2, 5, 9, 10, 11, 12}) {
      EXPECT_EQ(run_and_check(rows, 3, bits, stream_), "") << describe(d, 3, bits);
    }
  }
}

TEST_F(PartitionTuples, SignedKeysAndSkew) {
  // Raw signed keys (negative values: digits of the two's-complement pattern), a hot key on half
  // the rows, Zipf 1.5, and one key on every row (every tile's tuples into one ring: the whole
  // chunks past a ring go straight to their rows), with blocks of two tiles and more.
  size_type const n = several_tiles_per_block(2, 3);
  struct skew {
    char const* name;
    double hot, zipf;
  };
  std::uint64_t seed = 300;
  for (auto const& sk : {skew{"uniform raw keys", 0.0, 0.0}, skew{"hot key on half the rows", 0.5, 0.0},
                         skew{"Zipf 1.5", 0.0, 1.5}, skew{"one key", 1.0, 0.0}}) {
    for (auto [key, pay] : {std::pair{type_id::int32, type_id::uint32},
                            std::pair{type_id::int64, type_id::int64}}) {
      data_spec const d{key, pay, n, false, sk.hot, sk.zipf, ++seed};
      auto const rows = make_rows(d);
      for (int bits : {1, 8, 12}) {
        EXPECT_EQ(run_and_check(rows, 0, bits, stream_), "") << sk.name << ": " << describe(d, 0, bits);
      }
    }
  }
}

TEST_F(PartitionTuples, ColumnsOffSixteenByteBoundaries) {
  // Views 1 and 3 rows into their allocations: no bulk copies, every row loaded on its own (and
  // no barrier at the start of a tile), blocks of several tiles.
  std::uint64_t seed = 400;
  for (auto [key, pay] : widths) {
    data_spec const d{key, pay, several_tiles_per_block(3, 11), true, 0, 0, ++seed};
    auto const rows = make_rows(d);
    for (size_type shift : {size_type{1}, size_type{3}}) {
      EXPECT_EQ(run_and_check(rows, 0, 8, stream_, shift), "") << describe(d, 0, 8) << ", shift " << shift;
    }
  }
}

TEST_F(PartitionTuples, BeyondTwoToThe31Rows) {
  // 2^31 + 2^16 + 3 rows of uint32 keys and uint32 row ids (4+4 B): 64-bit rows and offsets.
  size_type const n = (size_type{1} << 31) + (size_type{1} << 16) + 3;
  std::size_t const device_need = 4 * 8 * static_cast<std::size_t>(n) + (std::size_t{4} << 30);
  std::size_t const host_need = 4 * 8 * static_cast<std::size_t>(n);
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
  std::vector<std::uint32_t> ids(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < n; ++i) { ids[i] = static_cast<std::uint32_t>(i); }
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
  std::vector<std::int64_t> offsets;
  std::vector<std::uint32_t> out(2 * static_cast<std::size_t>(n));
  {
    auto const dk = column::copy_of(keys_host.view().column(0), device_resource(), stream_);
    auto const di = column::copy_of(column_view::of(ids), device_resource(), stream_);
    auto const r = radix_partition_tuples(dk.view(), di.view(), bit_offset, bits, stream_);
    offsets = column::copy_of(r.offsets.view(), host_resource(), stream_).to_vector<std::int64_t>();
    copy_bytes(out.data(), memory_space::host, r.tuples.data(), memory_space::device,
               r.tuples.size(), stream_);
  }
  ASSERT_EQ(offsets.size(), static_cast<std::size_t>(fanout + 1));
  ASSERT_EQ(offsets[0], 0);
  for (size_type p = 0; p < fanout; ++p) {
    ASSERT_EQ(offsets[p + 1] - offsets[p], count[p]) << "partition " << p;
  }
  // Every output row is an input row (its id) with its key, in its digit's partition, once.
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(n), 0);
  size_type errors = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : errors)
  for (size_type p = 0; p < fanout; ++p) {
    for (auto i = offsets[p]; i < offsets[p + 1]; ++i) {
      auto const key = out[2 * static_cast<std::size_t>(i)];
      auto const id = out[2 * static_cast<std::size_t>(i) + 1];
      bool const ok = id < static_cast<std::uint64_t>(n) && key == kin[id] && digit(key) == p &&
                      std::atomic_ref<std::uint8_t>(seen[id]).fetch_add(1) == 0;
      errors += ok ? 0 : 1;
    }
  }
  EXPECT_EQ(errors, 0);
}

TEST(PartitionTuplesRefusals, ClearMessages) {
  std::vector<std::int32_t> k32{5, -3, 7, 9};
  std::vector<std::uint32_t> p32{1, 2, 3, 4};
  std::vector<std::uint32_t> p32short{1, 2, 3};
  std::vector<std::int64_t> p64{1, 2, 3, 4};
  std::vector<std::int16_t> k16{5, 3, 7, 9};
  auto const keys = column_view::of(k32);
  auto const pay = column_view::of(p32);
  if (!built_with_cuda()) {
    expect_refusal([&] { (void)radix_partition_tuples(keys, pay, 0, 4); }, "built without CUDA");
    return;
  }
  for (int bits : {0, -1, max_radix_bits + 1}) {
    expect_refusal([&] { (void)radix_partition_tuples(keys, pay, 0, bits); }, "bits must lie in [1, 12]");
  }
  expect_refusal([&] { (void)radix_partition_tuples(keys, pay, 25, 8); },
                 "[25, 33) do not lie within the 32 bits of the int32 keys");
  expect_refusal([&] { (void)radix_partition_tuples(column_view::of(k16), pay, 0, 4); },
                 "keys must be int32, int64, uint32 or uint64, got int16");
  expect_refusal([&] { (void)radix_partition_tuples(keys, column_view::of(p64), 0, 4); },
                 "the payload is int64 and the keys int32; both must be 4 or both 8 bytes wide");
  expect_refusal([&] { (void)radix_partition_tuples(keys, column_view::of(p32short), 0, 4); },
                 "the payload column has 3 rows but the keys have 4");
  std::uint8_t mask = 0x0f;
  column_view const nullable(type_id::uint32, p32.data(), 4, memory_space::host, &mask, 0);
  expect_refusal([&] { (void)radix_partition_tuples(keys, nullable, 0, 4); }, "nullable");
  expect_refusal([&] { (void)radix_partition_tuples(keys, pay, 0, 4); },
                 "the key column is in host memory but must be in device memory");
  if (device_count() == 0) { return; }
  cuda_stream s;
  auto const dk = column::copy_of(keys, device_resource(), s);
  auto const dp = column::copy_of(pay, device_resource(), s);
  expect_refusal([&] { (void)radix_partition_tuples(dk.view(), pay, 0, 4, s); },
                 "the payload column is in host memory");
  expect_refusal([&] { (void)radix_partition_tuples(dk.view(), dp.view(), 0, 4, s, host_resource()); },
                 "the memory resource must allocate device memory, not host memory");
  s.ref().synchronize();
}

}  // namespace
}  // namespace joinery::test
