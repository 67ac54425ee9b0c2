#include "cpu/cpu_join.hpp"

#include "core/hash.hpp"

#include <omp.h>

#include <bit>
#include <cstring>

namespace joinery::detail::cpu {

namespace {

using joinery::detail::mix64;

template <class Key>
struct key_table {
  // Slot s is empty when count[s] == 0; after build, rows[offset[s] .. offset[s]+count[s]) holds
  // the build rows with key keys[s].
  std::vector<Key> keys;
  std::vector<std::int64_t> count;
  std::vector<std::int64_t> offset;
  std::vector<std::int64_t> rows;
  std::uint64_t mask = 0;

  [[nodiscard]] std::int64_t find(Key k) const noexcept {
    for (auto s = mix64(static_cast<std::uint64_t>(k)) & mask;; s = (s + 1) & mask) {
      if (count[s] == 0) { return -1; }
      if (keys[s] == k) { return static_cast<std::int64_t>(s); }
    }
  }
};

template <class Key>
key_table<Key> build_table(Key const* keys, std::int64_t n) {
  key_table<Key> t;
  // Load factor <= 50% keeps linear-probing runs short.
  auto const capacity = std::bit_ceil(static_cast<std::uint64_t>(std::max<std::int64_t>(2 * n, 16)));
  t.mask = capacity - 1;
  t.keys.assign(capacity, Key{});
  t.count.assign(capacity, 0);
  std::vector<std::int64_t> slot_of(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    auto s = mix64(static_cast<std::uint64_t>(keys[i])) & t.mask;
    while (t.count[s] != 0 && t.keys[s] != keys[i]) { s = (s + 1) & t.mask; }
    t.keys[s] = keys[i];
    ++t.count[s];
    slot_of[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(s);
  }
  t.offset.assign(capacity, 0);
  std::int64_t running = 0;
  for (std::uint64_t s = 0; s < capacity; ++s) {
    t.offset[s] = running;
    running += t.count[s];
  }
  t.rows.resize(static_cast<std::size_t>(n));
  std::vector<std::int64_t> fill(t.offset);
  for (std::int64_t i = 0; i < n; ++i) {
    t.rows[static_cast<std::size_t>(fill[static_cast<std::size_t>(slot_of[i])]++)] = i;
  }
  return t;
}

template <class Key>
match_list probe_table(key_table<Key> const& t, Key const* keys, std::int64_t n, join_kind kind) {
  std::vector<match_list> parts(static_cast<std::size_t>(omp_get_max_threads()));
#pragma omp parallel
  {
    auto& out = parts[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      auto const s = t.find(keys[i]);
      std::int64_t const c = s < 0 ? 0 : t.count[static_cast<std::size_t>(s)];
      emit_matches(
        kind, i, c,
        [&](auto&& f) {
          auto const o = t.offset[static_cast<std::size_t>(s)];
          for (std::int64_t j = 0; j < c; ++j) { f(t.rows[static_cast<std::size_t>(o + j)]); }
        },
        out);
    }
  }
  return concatenate(std::move(parts));
}

}  // namespace

match_list concatenate(std::vector<match_list>&& parts) {
  if (parts.size() == 1) { return std::move(parts.front()); }
  match_list out;
  std::size_t nb = 0, np = 0;
  for (auto const& p : parts) {
    nb += p.build.size();
    np += p.probe.size();
  }
  out.build.resize(nb);
  out.probe.resize(np);
  std::size_t ob = 0, op = 0;
  for (auto const& p : parts) {
    if (!p.build.empty()) { std::memcpy(out.build.data() + ob, p.build.data(), p.build.size() * 8); }
    if (!p.probe.empty()) { std::memcpy(out.probe.data() + op, p.probe.data(), p.probe.size() * 8); }
    ob += p.build.size();
    op += p.probe.size();
  }
  return out;
}

match_list no_partition_hash_join(column_view const& build_key, column_view const& probe_key,
                                  join_kind kind) {
  return dispatch_key_type(build_key.type(), [&](auto tag) {
    using key = typename decltype(tag)::type;
    auto const t = build_table(build_key.data_as<key>(), build_key.size());
    return probe_table(t, probe_key.data_as<key>(), probe_key.size(), kind);
  });
}

}  // namespace joinery::detail::cpu
