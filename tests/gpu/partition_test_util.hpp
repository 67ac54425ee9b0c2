// Helpers shared by the GPU radix-partitioning tests (test_partition.cpp,
// test_partition_tuning.cpp): the fixture, data sets, and the CPU reference check.
#pragma once

#include "core/hash.hpp"
#include "primitives/detail/partition_policy.hpp"

#include <joinery/gen.hpp>
#include <joinery/primitives/partition.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace joinery::test {

using detail::gpu::radix_histogram_policy;
using detail::gpu::shared_atomic_partition_policy;
using detail::gpu::block_scatter_partition_policy;
using detail::gpu::block_scatter_partition_policy_high;
using detail::gpu::swwc_partition_policy;

/// Whether an algorithm keeps the input order within each partition.
constexpr bool is_stable(partition_algorithm a) {
  return a == partition_algorithm::stable_cub || a == partition_algorithm::block_scatter;
}
inline constexpr type_id key_types[] = {type_id::int32, type_id::int64, type_id::uint32,
                                        type_id::uint64};

inline int key_width(type_id t) { return static_cast<int>(8 * size_of(t)); }

class Partition : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
  cuda_stream stream_;  // a non-blocking stream: the library must not rely on the default one
};

// ---------------------------------------------------------------------------------------------
// Host side: data sets and the reference.

/// Bit patterns of a column's values, zero-extended to 64 bits (copied to the host if needed).
inline std::vector<std::uint64_t> bits_of(column_view const& c, stream_ref s) {
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

inline host_rows to_host(partitioned_columns const& r, stream_ref s) {
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
inline dataset make_data(data_spec const& d, stream_ref s) {
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

inline std::string at(char const* what, size_type i) {
  return std::string(what) + " " + std::to_string(i);
}

/// "" when `out` is a correct partitioning of `in` by the digit [bit_offset, bit_offset + bits):
/// offsets are the digit counts' exclusive scan (2^bits + 1 entries), every partition holds
/// exactly the multiset of (key, payloads) rows of its digit, and with `stable` in input order.
inline std::string check_partition(host_rows const& in, host_rows const& out, int bit_offset,
                                   int bits, bool stable) {
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

inline std::string describe(partition_algorithm a, type_id key, size_type rows, int bit_offset,
                            int bits, std::size_t payloads) {
  return std::string(to_string(a)) + " " + std::string(to_string(key)) + " keys, " +
         std::to_string(rows) + " rows, bits [" + std::to_string(bit_offset) + ", " +
         std::to_string(bit_offset + bits) + "), " + std::to_string(payloads) + " payload(s)";
}

/// Partitions `d` on the GPU and checks it against the reference.
/// `tuning`: the swwc / hierarchical overrides (detail::radix_partition); empty, the public call.
inline std::string partition_and_check(dataset const& d, int bit_offset, int bits,
                                       partition_algorithm a, stream_ref s,
                                       detail::gpu::swwc_tuning const& tuning = {}) {
  auto const r = detail::radix_partition(d.keys(), d.payloads(), bit_offset, bits, a, tuning, s);
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

}  // namespace joinery::test
