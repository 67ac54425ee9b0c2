#include "support/workloads.hpp"

#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

namespace joinery::test {

namespace {

using gen::key_kind;
using gen::relation_spec;

std::vector<type_id> mixed_payloads(int n) {
  // Mixed widths: 4, 8, 1, 2, ... bytes, signed and unsigned.
  static constexpr type_id cycle[] = {type_id::int32, type_id::uint64, type_id::int8,
                                      type_id::uint16, type_id::int64, type_id::uint32,
                                      type_id::int16, type_id::uint8};
  std::vector<type_id> v;
  for (int i = 0; i < n; ++i) { v.push_back(cycle[i % 8]); }
  return v;
}

relation_spec pk(size_type rows, type_id key, int payloads, std::uint64_t seed) {
  relation_spec s;
  s.rows = rows;
  s.kind = key_kind::primary;
  s.key_type = key;
  s.payload_types = mixed_payloads(payloads);
  s.seed = seed;
  return s;
}

relation_spec fk(size_type rows, size_type domain, type_id key, int payloads, std::uint64_t seed) {
  relation_spec s;
  s.rows = rows;
  s.kind = key_kind::foreign;
  s.domain = domain;
  s.key_type = key;
  s.payload_types = mixed_payloads(payloads);
  s.seed = seed;
  return s;
}

join_workload make(std::string name, relation_spec const& b, relation_spec const& p,
                   bool large = false) {
  return {std::move(name), gen::generate(b), gen::generate(p), large};
}

/// Hand-made keys at the ends of the type's range, with duplicates on both sides.
template <class K>
join_workload extremes(std::string name) {
  using lim = std::numeric_limits<K>;
  std::vector<K> b{lim::min(), lim::max(), K(0), K(1), lim::max(), K(lim::max() - 1), K(lim::min() + 1)};
  std::vector<K> p{lim::max(), lim::min(), lim::min(), K(lim::max() - 1), K(7), K(0), lim::max()};
  if constexpr (std::is_signed_v<K>) {
    b.push_back(K(-1));
    p.push_back(K(-1));
    p.push_back(K(-2));
  }
  std::vector<std::int32_t> bp(b.size()), pp(p.size());
  for (std::size_t i = 0; i < bp.size(); ++i) { bp[i] = static_cast<std::int32_t>(1000 + i * 7919); }
  for (std::size_t i = 0; i < pp.size(); ++i) { pp[i] = -static_cast<std::int32_t>(2000 + i * 104729); }
  std::vector<column> bc, pc;
  bc.push_back(column::from_host(b));
  bc.push_back(column::from_host(bp));
  pc.push_back(column::from_host(p));
  pc.push_back(column::from_host(pp));
  return {std::move(name), table(std::move(bc)), table(std::move(pc)), false};
}

join_workload build_join_workload(std::string const& n) {
  auto const i32 = type_id::int32;
  if (n == "pk_fk_uniform") { return make(n, pk(2000, i32, 1, 1), fk(6000, 2000, i32, 1, 2)); }
  if (n == "pk_fk_large") { return make(n, pk(1 << 16, i32, 1, 3), fk(1 << 18, 1 << 16, i32, 1, 4), true); }
  for (auto z : {"0.5", "1.0", "1.5", "2.0"}) {
    if (n == std::string("zipf_") + z) {
      auto f = fk(8000, 2000, i32, 1, 5);
      f.zipf = std::stod(z);
      return make(n, pk(2000, i32, 1, 6), f);
    }
  }
  for (auto m : {"0", "0.5", "1"}) {
    if (n == std::string("match_") + m) {
      auto b = pk(3000, i32, 1, 7);
      b.match_ratio = std::stod(m);
      return make(n, b, fk(5000, 3000, i32, 1, 8));
    }
  }
  if (n == "many_to_many") { return make(n, fk(2000, 64, i32, 2, 9), fk(3000, 64, i32, 2, 10)); }
  if (n == "many_to_many_8byte") {
    return make(n, fk(1500, 100, type_id::int64, 1, 11), fk(2500, 100, type_id::int64, 1, 12));
  }
  if (n == "all_keys_equal") { return make(n, fk(300, 1, i32, 1, 13), fk(400, 1, i32, 1, 14)); }
  if (n == "hot_key_half_probe") {
    auto f = fk(6000, 2000, i32, 1, 15);
    f.hot_key_fraction = 0.5;
    return make(n, pk(2000, i32, 1, 16), f);
  }
  if (n == "empty_build") { return make(n, pk(0, i32, 1, 17), fk(100, 100, i32, 1, 18)); }
  if (n == "empty_probe") { return make(n, pk(100, i32, 1, 19), fk(0, 100, i32, 1, 20)); }
  if (n == "empty_both") { return make(n, pk(0, i32, 1, 21), fk(0, 1, i32, 1, 22)); }
  if (n == "one_row") { return make(n, pk(1, i32, 1, 23), fk(1, 1, i32, 1, 24)); }
  for (int e : {31, 32, 33, 127, 128, 129, 1023, 1024, 1025}) {
    if (n == "tile_edge_" + std::to_string(e)) {
      return make(n, pk(e, i32, 1, 25 + e), fk(e + 1, e, i32, 1, 26 + e));
    }
  }
  if (n == "extremes_int32") { return extremes<std::int32_t>(n); }
  if (n == "extremes_int64") { return extremes<std::int64_t>(n); }
  if (n == "extremes_uint32") { return extremes<std::uint32_t>(n); }
  if (n == "extremes_uint64") { return extremes<std::uint64_t>(n); }
  for (auto t : {type_id::int64, type_id::uint32, type_id::uint64}) {
    if (n == "keys_" + std::string(to_string(t))) {
      return make(n, pk(1500, t, 1, 40), fk(4000, 1500, t, 1, 41));
    }
  }
  if (n == "negative_keys") {
    auto b = pk(1000, type_id::int64, 1, 42);
    b.key_offset = -500;
    auto p = fk(3000, 1000, type_id::int64, 1, 43);
    p.key_offset = -500;
    return make(n, b, p);
  }
  for (int k : {0, 1, 2, 8}) {
    if (n == "payloads_" + std::to_string(k)) {
      return make(n, pk(1000, i32, k, 50 + k), fk(2500, 1000, i32, k, 60 + k));
    }
  }
  // Wide joins: build sides large enough that the radix join partitions (bits > 0), so GFTR
  // transforms really reorder the payloads; every payload width on both sides.
  if (n == "wide_pk_fk_8") {
    return make(n, pk(20000, i32, 8, 70), fk(50000, 20000, i32, 8, 71), true);
  }
  if (n == "wide_many_to_many_2") {
    return make(n, fk(6000, 300, i32, 2, 72), fk(8000, 300, i32, 2, 73), true);
  }
  if (n == "wide_zipf_int64_2") {
    auto f = fk(30000, 12000, type_id::int64, 2, 75);
    f.zipf = 1.0;
    return make(n, pk(12000, type_id::int64, 2, 74), f, true);
  }
  if (n == "wide_match_0.3_uint32_1") {
    auto b = pk(16000, type_id::uint32, 1, 76);
    b.match_ratio = 0.3;
    return make(n, b, fk(40000, 16000, type_id::uint32, 1, 77), true);
  }
  throw std::invalid_argument("unknown join workload " + n);
}

groupby_workload build_groupby_workload(std::string const& n) {
  auto input = [&](size_type rows, size_type groups, type_id key, double z, std::uint64_t seed) {
    relation_spec s = fk(rows, groups, key, 0, seed);
    s.zipf = z;
    s.payload_types = {type_id::int32, type_id::int64, type_id::uint32, type_id::uint64};
    return groupby_workload{n, gen::generate(s)};
  };
  if (n == "one_group") { return input(5000, 1, type_id::int32, 0, 1); }
  if (n == "groups_16") { return input(5000, 16, type_id::int32, 0, 2); }
  if (n == "groups_1000") { return input(20000, 1000, type_id::int64, 0, 3); }
  if (n == "all_distinct") {
    relation_spec s = pk(5000, type_id::uint32, 0, 4);
    s.payload_types = {type_id::int32, type_id::int64, type_id::uint32, type_id::uint64};
    return {n, gen::generate(s)};
  }
  if (n == "zipf_1.0") { return input(20000, 4096, type_id::int32, 1.0, 5); }
  if (n == "zipf_2.0") { return input(20000, 4096, type_id::uint64, 2.0, 6); }
  if (n == "hot_group") {
    relation_spec s = fk(20000, 4096, type_id::int32, 0, 7);
    s.hot_key_fraction = 0.5;
    s.payload_types = {type_id::int32, type_id::int64, type_id::uint32, type_id::uint64};
    return {n, gen::generate(s)};
  }
  if (n == "empty") { return input(0, 1, type_id::int32, 0, 8); }
  throw std::invalid_argument("unknown group-by workload " + n);
}

}  // namespace

std::vector<size_type> payloads_of(table const& t) {
  std::vector<size_type> v;
  for (size_type c = 1; c < t.num_columns(); ++c) { v.push_back(c); }
  return v;
}

std::vector<std::string> join_workload_names() {
  std::vector<std::string> v{"pk_fk_uniform", "pk_fk_large", "zipf_0.5", "zipf_1.0", "zipf_1.5",
                             "zipf_2.0", "match_0", "match_0.5", "match_1", "many_to_many",
                             "many_to_many_8byte", "all_keys_equal", "hot_key_half_probe",
                             "empty_build", "empty_probe", "empty_both", "one_row"};
  for (int e : {31, 32, 33, 127, 128, 129, 1023, 1024, 1025}) {
    v.push_back("tile_edge_" + std::to_string(e));
  }
  for (auto s : {"extremes_int32", "extremes_int64", "extremes_uint32", "extremes_uint64",
                 "keys_int64", "keys_uint32", "keys_uint64", "negative_keys", "payloads_0",
                 "payloads_1", "payloads_2", "payloads_8", "wide_pk_fk_8", "wide_many_to_many_2",
                 "wide_zipf_int64_2", "wide_match_0.3_uint32_1"}) {
    v.emplace_back(s);
  }
  return v;
}

join_workload const& join_workload_named(std::string const& name) {
  static std::mutex m;
  static std::map<std::string, join_workload> cache;
  std::lock_guard lock(m);
  auto it = cache.find(name);
  if (it == cache.end()) { it = cache.emplace(name, build_join_workload(name)).first; }
  return it->second;
}

std::vector<std::string> groupby_workload_names() {
  return {"one_group", "groups_16", "groups_1000", "all_distinct", "zipf_1.0", "zipf_2.0",
          "hot_group", "empty"};
}

groupby_workload const& groupby_workload_named(std::string const& name) {
  static std::mutex m;
  static std::map<std::string, groupby_workload> cache;
  std::lock_guard lock(m);
  auto it = cache.find(name);
  if (it == cache.end()) { it = cache.emplace(name, build_groupby_workload(name)).first; }
  return it->second;
}

}  // namespace joinery::test
