// GPU radix primitives: prefix scan, radix histogram, radix partitioning (stable_cub,
// shared_atomic, block_scatter, swwc and hierarchical) against CPU references on random data, at tile and block edges, with skew,
// every digit width and several offsets, two passes, > 2^31 rows where memory allows; and the
// refusals. GPU tests skip with a message when no GPU is present; the refusals run everywhere.
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
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace joinery::test {
namespace {

using detail::gpu::radix_histogram_policy;
using detail::gpu::shared_atomic_partition_policy;
using detail::gpu::block_scatter_partition_policy;
using detail::gpu::block_scatter_partition_policy_high;
using detail::gpu::swwc_partition_policy;

constexpr partition_algorithm algorithms[] = {partition_algorithm::stable_cub,
                                              partition_algorithm::shared_atomic,
                                              partition_algorithm::block_scatter,
                                              partition_algorithm::swwc,
                                              partition_algorithm::hierarchical};

/// Whether an algorithm keeps the input order within each partition.
constexpr bool is_stable(partition_algorithm a) {
  return a == partition_algorithm::stable_cub || a == partition_algorithm::block_scatter;
}
constexpr type_id key_types[] = {type_id::int32, type_id::int64, type_id::uint32,
                                 type_id::uint64};

int key_width(type_id t) { return static_cast<int>(8 * size_of(t)); }

class Partition : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
  cuda_stream stream_;  // a non-blocking stream: the library must not rely on the default one
};

/// The partitioning tests, one instance per algorithm (so that a sanitizer run can pick one:
/// --gtest_filter='Algorithms/PartitionAlgorithms.*/swwc').
class PartitionAlgorithms : public Partition,
                            public ::testing::WithParamInterface<partition_algorithm> {};

// ---------------------------------------------------------------------------------------------
// Host side: data sets and the reference.

/// Bit patterns of a column's values, zero-extended to 64 bits (copied to the host if needed).
std::vector<std::uint64_t> bits_of(column_view const& c, stream_ref s) {
  if (!host_accessible(c.space())) {
    auto const h = column::copy_of(c, host_resource(), s);
    return bits_of(h.view(), s);
  }
  std::vector<std::uint64_t> v(static_cast<std::size_t>(c.size()));
  if (size_of(c.type()) == 4) {
    auto const* p = static_cast<std::uint32_t const*>(c.data());
    for (std::size_t i = 0; i < v.size(); ++i) { v[i] = p[i]; }
  } else if (!v.empty()) {
    std::memcpy(v.data(), c.data(), v.size() * sizeof(std::uint64_t));
  }
  return v;
}

/// Rows as bit patterns: keys, payload columns, and (outputs only) the partition offsets.
struct host_rows {
  std::vector<std::uint64_t> keys;
  std::vector<std::vector<std::uint64_t>> payloads;
  std::vector<std::int64_t> offsets;
};

host_rows to_host(partitioned_columns const& r, stream_ref s) {
  host_rows h;
  h.keys = bits_of(r.keys.view(), s);
  for (auto const& p : r.payloads) { h.payloads.push_back(bits_of(p.view(), s)); }
  for (auto v : bits_of(r.offsets.view(), s)) { h.offsets.push_back(static_cast<std::int64_t>(v)); }
  return h;
}

struct dataset {
  table host;    // column 0: keys, then the payloads
  table device;  // the same on the device
  [[nodiscard]] column_view keys() const { return device.view().column(0); }
  [[nodiscard]] std::vector<column_view> payloads() const {
    auto const cols = device.view().columns();
    return {cols.begin() + 1, cols.end()};
  }
  [[nodiscard]] host_rows rows() const {
    host_rows h;
    h.keys = bits_of(host.view().column(0), stream_ref{});
    for (size_type i = 1; i < host.num_columns(); ++i) {
      h.payloads.push_back(bits_of(host.view().column(i), stream_ref{}));
    }
    return h;
  }
};

struct data_spec {
  type_id key_type = type_id::int32;
  size_type rows = 0;
  std::vector<type_id> payload_types;
  bool hashed = true;  // keys = mix64(generated key): random bits over the whole width
  double hot_key_fraction = 0;
  double zipf = 0;
  std::uint64_t seed = 1;
};

template <class K>
void hash_keys(column& keys, std::uint64_t seed) {
  auto* k = keys.data_as<K>();
  for (size_type i = 0; i < keys.size(); ++i) {
    k[i] = static_cast<K>(detail::mix64(static_cast<std::uint64_t>(k[i]) ^ seed));
  }
}

/// Random keys (never all zero: generated, then hashed over the whole width unless raw) and
/// random payloads; raw signed keys include negative values.
dataset make_data(data_spec const& d, stream_ref s) {
  gen::relation_spec spec;
  spec.rows = d.rows;
  spec.kind = gen::key_kind::foreign;
  spec.key_type = d.key_type;
  spec.domain = std::max<size_type>(2 * d.rows + 17, 1000);
  spec.key_offset = is_signed(d.key_type) ? -spec.domain / 2 : 1;
  spec.zipf = d.zipf;
  spec.hot_key_fraction = d.hot_key_fraction;
  spec.payload_types = d.payload_types;
  spec.seed = d.seed;
  dataset out;
  out.host = gen::generate(spec);
  if (d.hashed) {
    dispatch_key_type(d.key_type, [&](auto tag) {
      hash_keys<typename decltype(tag)::type>(out.host.column(0), d.seed * 0x9e3779b97f4a7c15ULL);
    });
  }
  std::vector<column> dev;
  for (auto const& c : out.host.view()) { dev.push_back(column::copy_of(c, device_resource(), s)); }
  out.device = table(std::move(dev));
  return out;
}

std::string at(char const* what, size_type i) { return std::string(what) + " " + std::to_string(i); }

/// "" when `out` is a correct partitioning of `in` by the digit [bit_offset, bit_offset + bits):
/// offsets are the digit counts' exclusive scan (2^bits + 1 entries), every partition holds
/// exactly the multiset of (key, payloads) rows of its digit, and with `stable` in input order.
std::string check_partition(host_rows const& in, host_rows const& out, int bit_offset, int bits,
                            bool stable) {
  auto const n = static_cast<size_type>(in.keys.size());
  size_type const fanout = size_type{1} << bits;
  std::uint64_t const mask = (std::uint64_t{1} << bits) - 1;
  auto digit = [&](std::uint64_t k) { return static_cast<size_type>((k >> bit_offset) & mask); };
  if (static_cast<size_type>(out.keys.size()) != n) {
    return "output has " + std::to_string(out.keys.size()) + " keys, input " + std::to_string(n);
  }
  if (out.payloads.size() != in.payloads.size()) { return "wrong number of payload columns"; }
  for (auto const& p : out.payloads) {
    if (static_cast<size_type>(p.size()) != n) { return "a payload column has the wrong length"; }
  }
  if (static_cast<size_type>(out.offsets.size()) != fanout + 1) {
    return "offsets have " + std::to_string(out.offsets.size()) + " entries, expected " +
           std::to_string(fanout + 1);
  }
  std::vector<size_type> count(static_cast<std::size_t>(fanout), 0);
  for (auto k : in.keys) { ++count[static_cast<std::size_t>(digit(k))]; }
  if (out.offsets[0] != 0) { return "offsets[0] = " + std::to_string(out.offsets[0]); }
  for (size_type p = 0; p < fanout; ++p) {
    auto const got = out.offsets[p + 1] - out.offsets[p];
    if (got != count[p]) {
      return at("partition", p) + " holds " + std::to_string(got) + " rows (offsets " +
             std::to_string(out.offsets[p]) + ".." + std::to_string(out.offsets[p + 1]) +
             "), expected " + std::to_string(count[p]);
    }
  }
  // The stable reference: input rows ordered by digit, ties in input order.
  std::vector<size_type> next(static_cast<std::size_t>(fanout), 0);
  for (size_type p = 1; p < fanout; ++p) { next[p] = next[p - 1] + count[p - 1]; }
  std::vector<size_type> order(static_cast<std::size_t>(n));
  for (size_type i = 0; i < n; ++i) { order[next[digit(in.keys[i])]++] = i; }
  if (stable) {
    for (size_type i = 0; i < n; ++i) {
      auto const r = order[i];
      bool same = out.keys[i] == in.keys[r];
      for (std::size_t c = 0; c < in.payloads.size(); ++c) {
        same = same && out.payloads[c][i] == in.payloads[c][r];
      }
      if (!same) {
        return at("output row", i) + " (partition " + std::to_string(digit(in.keys[r])) +
               ") is not input row " + std::to_string(r) + ": key " +
               std::to_string(out.keys[i]) + " vs " + std::to_string(in.keys[r]) +
               " (wrong content or not in input order)";
      }
    }
    return "";
  }
  if (in.payloads.size() > 1) { return "the unstable check handles at most one payload"; }
  using tuple = std::pair<std::uint64_t, std::uint64_t>;
  auto payload = [](host_rows const& h, size_type i) {
    return h.payloads.empty() ? std::uint64_t{0} : h.payloads[0][i];
  };
  // Every partition's rows as (key, payload) tuples in both, each range sorted (in parallel: the
  // skewed workloads put half the rows in one partition), then compared.
  std::vector<tuple> want(static_cast<std::size_t>(n)), got(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < n; ++i) {
    auto const r = order[i];  // the reference rows of each partition occupy the same range
    want[static_cast<std::size_t>(i)] = {in.keys[r], payload(in, r)};
    got[static_cast<std::size_t>(i)] = {out.keys[i], payload(out, i)};
  }
  size_type first_bad = fanout;
#pragma omp parallel for schedule(dynamic, 1) reduction(min : first_bad)
  for (size_type p = 0; p < fanout; ++p) {
    auto const b = want.begin() + out.offsets[p];
    auto const e = want.begin() + out.offsets[p + 1];
    auto const gb = got.begin() + out.offsets[p];
    auto const ge = got.begin() + out.offsets[p + 1];
    std::sort(b, e);
    std::sort(gb, ge);
    if (!std::equal(b, e, gb)) { first_bad = std::min(first_bad, p); }
  }
  if (first_bad < fanout) {
    auto const b = want.begin() + out.offsets[first_bad];
    auto const e = want.begin() + out.offsets[first_bad + 1];
    auto const m = std::mismatch(b, e, got.begin() + out.offsets[first_bad]);
    return at("partition", first_bad) +
           " holds the wrong multiset of rows: first difference, expected (" +
           std::to_string(m.first->first) + ", " + std::to_string(m.first->second) + ") got (" +
           std::to_string(m.second->first) + ", " + std::to_string(m.second->second) + ")";
  }
  return "";
}

std::string describe(partition_algorithm a, type_id key, size_type rows, int bit_offset, int bits,
                     std::size_t payloads) {
  return std::string(to_string(a)) + " " + std::string(to_string(key)) + " keys, " +
         std::to_string(rows) + " rows, bits [" + std::to_string(bit_offset) + ", " +
         std::to_string(bit_offset + bits) + "), " + std::to_string(payloads) + " payload(s)";
}

/// Partitions `d` on the GPU and checks it against the reference.
std::string partition_and_check(dataset const& d, int bit_offset, int bits, partition_algorithm a,
                                stream_ref s) {
  auto const r = radix_partition(d.keys(), d.payloads(), bit_offset, bits, a, s);
  if (r.keys.type() != d.keys().type()) { return "the key column changed type"; }
  for (std::size_t i = 0; i < r.payloads.size(); ++i) {
    if (r.payloads[i].type() != d.payloads()[i].type()) { return "a payload column changed type"; }
  }
  if (r.offsets.space() != memory_space::device || r.keys.space() != memory_space::device) {
    return "results are not in device memory";
  }
  return check_partition(d.rows(), to_host(r, s), bit_offset, bits,
                         is_stable(a));
}

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

/// Sets an environment variable for the scope (the A/B knobs the dispatch reads on every call).
class scoped_env {
 public:
  scoped_env(char const* name, std::string const& value) : name_(name) {
    ::setenv(name, value.c_str(), 1);
  }
  ~scoped_env() { ::unsetenv(name_); }
  scoped_env(scoped_env const&) = delete;
  scoped_env& operator=(scoped_env const&) = delete;

 private:
  char const* name_;
};

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
    scoped_env const r("JOINERY_HSWWC_LOG2R", std::to_string(st.log2_r));
    scoped_env const c("JOINERY_HSWWC_LOG2C", std::to_string(st.log2_c));
    for (auto key : {type_id::uint32, type_id::int64}) {
      for (auto const& payloads : std::vector<std::vector<type_id>>{{}, {type_id::int32}, {type_id::uint64}}) {
        for (double zipf : {0.0, 1.5}) {
          auto const d = make_data({key, n, payloads, zipf == 0.0, 0, zipf, ++seed}, stream_);
          for (int bits : {1, 6, 11}) {
            EXPECT_EQ(partition_and_check(d, 0, bits, partition_algorithm::hierarchical, stream_), "")
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
  struct setting {
    char const* policy;
    char const* align;
    char const* b;  // JOINERY_SWWC_B, "" for the policy's own
  };
  std::vector<setting> settings;
  for (char const* policy : {"0", "1", "2", "3"}) {
    for (char const* align : {"0", "1"}) { settings.push_back({policy, align, ""}); }
  }
  settings.push_back({"3", "1", "96"});
  settings.push_back({"2", "0", "128"});
  std::uint64_t seed = 5000;
  for (auto const& st : settings) {
    scoped_env const p("JOINERY_SWWC_POLICY", st.policy);
    scoped_env const a("JOINERY_SWWC_ALIGN", st.align);
    scoped_env const b("JOINERY_SWWC_B", st.b);
    for (size_type n : {size_type{3001}, (size_type{1} << 18) + 77}) {
      for (auto key : {type_id::uint32, type_id::int64}) {
        for (auto const& payloads : std::vector<std::vector<type_id>>{{type_id::int32}, {type_id::uint64}}) {
          for (double zipf : {0.0, 1.5}) {
            auto const d = make_data({key, n, payloads, zipf == 0.0, 0, zipf, ++seed}, stream_);
            for (int bits : {3, 8, 9, 11}) {
              EXPECT_EQ(partition_and_check(d, 0, bits, partition_algorithm::swwc, stream_), "")
                << "policy " << st.policy << ", aligned " << st.align << ", b '" << st.b
                << "', Zipf " << zipf << ": "
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
  struct setting {
    type_id key, payload;
    char const* policy;
    char const* log2_b;
    char const* b;
    size_type n0, n1;
  };
  for (auto const& st : {// b = 32, h = 31 / 12: row_of wraps / the drain (20 rows) wraps
                         setting{type_id::uint32, type_id::int32, "0", "5", "", 1, 4000},
                         setting{type_id::uint32, type_id::int32, "0", "5", "", 20, 4020},
                         // b = 64, h = 61 / 24
                         setting{type_id::uint32, type_id::int32, "3", "6", "", 3, 8000},
                         setting{type_id::uint32, type_id::int32, "3", "6", "", 40, 8040},
                         // b = 96 (aligned to 64 rows), h = 59
                         setting{type_id::uint32, type_id::int32, "3", "", "96", 5, 7680},
                         // 16-byte tuples, one block of 1024 x 4, b = 32
                         setting{type_id::uint64, type_id::uint64, "1", "5", "", 1, 4000},
                         setting{type_id::uint64, type_id::uint64, "1", "5", "", 20, 4020}}) {
    scoped_env const a("JOINERY_SWWC_ALIGN", "1");
    scoped_env const p("JOINERY_SWWC_POLICY", st.policy);
    scoped_env const l("JOINERY_SWWC_LOG2B", st.log2_b);
    scoped_env const b("JOINERY_SWWC_B", st.b);
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
    EXPECT_EQ(partition_and_check(d, 0, 1, partition_algorithm::swwc, stream_), "")
      << "policy " << st.policy << ", n0 " << st.n0 << ", n1 " << st.n1;
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

INSTANTIATE_TEST_SUITE_P(Algorithms, PartitionAlgorithms, ::testing::ValuesIn(algorithms),
                         [](auto const& info) { return std::string(to_string(info.param)); });

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
