// Parallel sort group-by on the CPU: LSD radix sort of the keys (mapped to unsigned
// order-preserving form, passes over constant digits skipped) carrying the aggregated columns,
// then segmented aggregation over even ranges, one per thread; a group crossing a range boundary
// is finished by a small merge of its carried head. Groups come out in key order.
#include "core/cancel.hpp"
#include "core/parallel_shares.hpp"
#include "cpu/cpu_groupby.hpp"
#include "cpu/groupby_accumulators.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <type_traits>

namespace joinery::detail::cpu {

namespace {

using clock_type = std::chrono::steady_clock;

template <class K>
using ukey = std::make_unsigned_t<K>;

/// Order-preserving map to unsigned: flip the sign bit of signed keys.
template <class K>
constexpr ukey<K> to_unsigned(K k) noexcept {
  if constexpr (std::is_signed_v<K>) {
    return static_cast<ukey<K>>(k) ^ (ukey<K>{1} << (8 * sizeof(K) - 1));
  }
  return static_cast<ukey<K>>(k);
}
template <class K>
constexpr K from_unsigned(ukey<K> u) noexcept {
  if constexpr (std::is_signed_v<K>) {
    return static_cast<K>(u ^ (ukey<K>{1} << (8 * sizeof(K) - 1)));
  }
  return static_cast<K>(u);
}

/// A sort record: the key and either the row's aggregated values packed into `Words` 4-byte
/// words (carried through the sort, so that aggregation reads them in order) or, when they are
/// too wide, its row id (gathered afterwards). Packed: 12 bytes for an int32 key and two int32
/// values, one write stream per digit.
/// One 4- or 8-byte value (fixed-size copies: a run-time size would be a library call a row).
inline void copy_value(void* dst, void const* src, std::size_t width) {
  if (width == 4) {
    std::memcpy(dst, src, 4);
  } else {
    std::memcpy(dst, src, 8);
  }
}

template <class U, int Words>
struct [[gnu::packed]] entry {
  U key;
  std::uint32_t word[Words];
};

template <class K, int Words, bool Packed>
table run_sort(table_view const& input, size_type key_column, agg_plan const& plan,
               sort_groupby_policy const& policy, std::vector<phase_time>* phases) {
  using U = ukey<K>;
  using E = entry<U, Words>;
  auto t0 = clock_type::now();
  auto lap = [&](char const* name) {
    auto const now = clock_type::now();
    if (phases != nullptr) {
      phases->push_back({name, std::chrono::duration<double>(now - t0).count()});
    }
    t0 = now;
    throw_if_cancelled();  // between phases (joinery/cancel.hpp)
  };
  auto const* keys = input.column(key_column).template data_as<K>();
  auto const n = static_cast<std::size_t>(input.num_rows());
  int const threads = n < policy.serial_rows ? 1 : usable_threads();
  auto const nt = static_cast<std::size_t>(threads);
  std::size_t const radix = std::size_t{1} << policy.radix_bits;
  auto const digit_mask = static_cast<U>(radix - 1);

  // Distinct aggregated columns, and where each sits in a packed record (in 4-byte words).
  std::vector<size_type> columns;
  std::vector<int> buffer_of(plan.accs.size(), -1);
  std::vector<std::size_t> width;
  std::vector<std::size_t> word_of;
  std::size_t words = 0;
  for (std::size_t a = 0; a < plan.accs.size(); ++a) {
    auto const c = plan.accs[a].column;
    if (c < 0) { continue; }
    auto const it = std::find(columns.begin(), columns.end(), c);
    buffer_of[a] = static_cast<int>(it - columns.begin());
    if (it == columns.end()) {
      columns.push_back(c);
      width.push_back(plan.accs[a].ops.value_width);
      word_of.push_back(words);
      words += plan.accs[a].ops.value_width / 4;
    }
  }
  auto const nc = columns.size();
  std::vector<std::byte const*> in_cols(nc);
  for (std::size_t c = 0; c < nc; ++c) {
    in_cols[c] = static_cast<std::byte const*>(input.column(columns[c]).data());
  }

  // Which key bits vary at all: digits that never change cost no pass.
  std::vector<U> varying(nt, 0);
  U const first = n > 0 ? to_unsigned(keys[0]) : U{0};
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (std::size_t t = 0; t < nt; ++t) {
    U v = 0;
    for (auto i = n * t / nt; i < n * (t + 1) / nt; ++i) { v |= to_unsigned(keys[i]) ^ first; }
    varying[t] = v;
  }
  U vary = 0;
  for (auto v : varying) { vary |= v; }
  std::vector<int> shifts;
  for (int shift = 0; shift < static_cast<int>(8 * sizeof(U)); shift += policy.radix_bits) {
    if (((vary >> shift) & digit_mask) != 0) { shifts.push_back(shift); }
  }
  // All keys equal: no pass, and the aggregation reads the input in place.
  bool const sorted_input = shifts.empty();

  auto make_entry = [&](std::size_t i) {
    E e;
    e.key = to_unsigned(keys[i]);
    if constexpr (Packed) {
      for (std::size_t c = 0; c < nc; ++c) {
        copy_value(&e.word[word_of[c]], in_cols[c] + i * width[c], width[c]);
      }
    } else {
      auto const row = static_cast<std::uint64_t>(i);
      std::memcpy(e.word, &row, sizeof(e.word));
    }
    return e;
  };
  aligned_bytes buf_a(sorted_input ? 0 : n * sizeof(E));
  aligned_bytes buf_b(sorted_input ? 0 : n * sizeof(E));
  auto* src = reinterpret_cast<E*>(buf_a.get());
  auto* dst = reinterpret_cast<E*>(buf_b.get());
  std::vector<std::size_t> count(nt * radix);  // [t * radix + digit]
  for (std::size_t p = 0; p < shifts.size(); ++p) {
    auto const shift = shifts[p];
#pragma omp parallel num_threads(threads)
    {
      auto const t = static_cast<std::size_t>(omp_get_thread_num());
      auto const lo = n * t / nt;
      auto const hi = n * (t + 1) / nt;
      auto* c = count.data() + t * radix;
      std::fill(c, c + radix, 0);
      if (p == 0) {
        for (auto i = lo; i < hi; ++i) { ++c[(to_unsigned(keys[i]) >> shift) & digit_mask]; }
      } else {
        for (auto i = lo; i < hi; ++i) { ++c[(src[i].key >> shift) & digit_mask]; }
      }
#pragma omp barrier
#pragma omp single
      {
        // Digit-major, thread-minor: stable, as LSD needs.
        std::size_t run = 0;
        for (std::size_t d = 0; d < radix; ++d) {
          for (std::size_t u = 0; u < nt; ++u) {
            auto const x = count[u * radix + d];
            count[u * radix + d] = run;
            run += x;
          }
        }
      }
      if (p == 0) {
        // The first pass builds the records from the input columns as it scatters them.
        for (auto i = lo; i < hi; ++i) {
          auto const e = make_entry(i);
          dst[c[(e.key >> shift) & digit_mask]++] = e;
        }
      } else {
        for (auto i = lo; i < hi; ++i) { dst[c[(src[i].key >> shift) & digit_mask]++] = src[i]; }
      }
    }
    std::swap(src, dst);
  }
  auto key_of = [&](std::size_t i) { return sorted_input ? to_unsigned(keys[i]) : src[i].key; };
  lap("sort");

  // Even ranges, one per thread. A group that starts in an earlier range is carried on: its rows
  // at the head of this range fold into a private accumulator, merged once the threads are done,
  // so that one giant group (g = 1) is still aggregated by every thread.
  std::vector<std::size_t> begin(nt + 1, n);
  for (std::size_t t = 0; t < nt; ++t) { begin[t] = n * t / nt; }
  auto is_start = [&](std::size_t i) { return i == 0 || key_of(i) != key_of(i - 1); };
  std::vector<std::size_t> head_end(nt);  // the range's first group start (or its end)
  std::vector<std::size_t> group_start(nt + 1, 0);
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (std::size_t t = 0; t < nt; ++t) {
    auto h = begin[t];
    while (h < begin[t + 1] && !is_start(h)) { ++h; }
    head_end[t] = h;
    std::size_t g = 0;
    for (auto i = h; i < begin[t + 1]; ++i) { g += is_start(i); }
    group_start[t + 1] = g;
  }
  for (std::size_t t = 0; t < nt; ++t) { group_start[t + 1] += group_start[t]; }
  auto const total = group_start[nt];

  acc_set accs(&plan);
  accs.allocate(total);
  std::vector<K> group_keys(total);
  std::vector<acc_set> carried;
  for (std::size_t t = 0; t < nt; ++t) { carried.emplace_back(&plan); }
#pragma omp parallel num_threads(threads)
  {
    auto const t = static_cast<std::size_t>(omp_get_thread_num());
    for (std::size_t a = 0; a < plan.accs.size(); ++a) {
      plan.accs[a].ops.init(accs.data(a), group_start[t], group_start[t + 1]);
    }
    auto const chunk = policy.chunk_rows;
    std::vector<std::uint32_t> gids(chunk);
    std::vector<aligned_bytes> vals;
    for (std::size_t c = 0; c < nc; ++c) { vals.emplace_back(chunk * 8); }
    // Values of each column for rows [b, b + len) of the sorted order, contiguous.
    std::vector<std::byte const*> col_at(nc);
    auto load = [&](std::size_t b, std::size_t len) {
      for (std::size_t c = 0; c < nc; ++c) {
        if (sorted_input) {
          col_at[c] = in_cols[c] + b * width[c];
          continue;
        }
        auto* out = vals[c].get();
        auto const w = width[c];
        for (std::size_t i = 0; i < len; ++i) {
          if constexpr (Packed) {
            copy_value(out + i * w, &src[b + i].word[word_of[c]], w);
          } else {
            std::uint64_t row = 0;
            std::memcpy(&row, src[b + i].word, sizeof(src[b + i].word));
            copy_value(out + i * w, in_cols[c] + row * w, w);
          }
        }
        col_at[c] = out;
      }
    };
    auto values = [&](std::size_t a) -> void const* {
      return buffer_of[a] < 0 ? nullptr : col_at[static_cast<std::size_t>(buffer_of[a])];
    };
    // The carried head, a chunk at a time.
    if (head_end[t] > begin[t]) { carried[t].grow(1); }
    for (auto b = begin[t]; b < head_end[t]; b += chunk) {
      auto const len = std::min(chunk, head_end[t] - b);
      load(b, len);
      for (std::size_t a = 0; a < plan.accs.size(); ++a) {
        plan.accs[a].ops.reduce(carried[t].data(a), 0, values(a), len);
      }
    }
    // The group of row i is `g`, which starts one below the thread's first group.
    auto g = group_start[t] - 1;
    for (auto b = head_end[t]; b < begin[t + 1]; b += chunk) {
      auto const len = std::min(chunk, begin[t + 1] - b);
      std::size_t base = 0;  // group of the chunk's first row: ids relative to it fit 32 bits
      for (std::size_t i = 0; i < len; ++i) {
        auto const r = b + i;
        if (is_start(r)) {
          ++g;
          group_keys[g] = from_unsigned<K>(key_of(r));
        }
        if (i == 0) { base = g; }
        gids[i] = static_cast<std::uint32_t>(g - base);
      }
      load(b, len);
      bool const one_group = g == base;  // sorted: long runs fill whole chunks
      for (std::size_t a = 0; a < plan.accs.size(); ++a) {
        auto const& ops = plan.accs[a].ops;
        if (one_group) {
          ops.reduce(accs.data(a) + base * ops.width, 0, values(a), len);
        } else {
          ops.update(accs.data(a) + base * ops.width, gids.data(), values(a), len);
        }
      }
    }
  }
  // Carried heads join the group they continue.
  for (std::size_t t = 0; t < nt; ++t) {
    if (head_end[t] == begin[t]) { continue; }
    auto const dst_gid = static_cast<std::uint32_t>(group_start[t] - 1);
    std::uint32_t const zero = 0;
    for (std::size_t a = 0; a < plan.accs.size(); ++a) {
      plan.accs[a].ops.merge(accs.data(a), &dst_gid, carried[t].data(a), &zero, 1);
    }
  }
  lap("aggregate");
  std::vector<group_run<K>> runs;
  for (std::size_t t = 0; t < nt; ++t) {
    runs.push_back(run_of(accs, group_keys.data() + group_start[t], group_start[t],
                          group_start[t + 1] - group_start[t]));
  }
  auto out = finalize_groups(plan, runs);
  lap("output");
  return out;
}

/// Words of aggregated values per row (distinct columns).
std::size_t value_words(agg_plan const& plan) {
  std::vector<size_type> seen;
  std::size_t w = 0;
  for (auto const& a : plan.accs) {
    if (a.column < 0 || std::find(seen.begin(), seen.end(), a.column) != seen.end()) { continue; }
    seen.push_back(a.column);
    w += a.ops.value_width / 4;
  }
  return w;
}

}  // namespace

table sort_groupby(table_view const& input, size_type key_column,
                   std::vector<aggregation> const& aggregations,
                   sort_groupby_policy const& policy, std::vector<phase_time>* phases) {
  JOINERY_EXPECTS(policy.radix_bits >= 1 && policy.radix_bits <= 16,
                  "sort group-by radix bits must be in [1, 16]");
  auto const plan = make_plan(input, aggregations, input.num_rows());
  return dispatch_key_type(input.column(key_column).type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    // Up to 4 words (16 bytes) of values ride in the records; wider ones travel as a row id.
    switch (value_words(plan)) {
      case 0:
      case 1: return run_sort<K, 1, true>(input, key_column, plan, policy, phases);
      case 2: return run_sort<K, 2, true>(input, key_column, plan, policy, phases);
      case 3: return run_sort<K, 3, true>(input, key_column, plan, policy, phases);
      case 4: return run_sort<K, 4, true>(input, key_column, plan, policy, phases);
      default: break;
    }
    if (static_cast<std::uint64_t>(input.num_rows()) <= std::numeric_limits<std::uint32_t>::max()) {
      return run_sort<K, 1, false>(input, key_column, plan, policy, phases);
    }
    return run_sort<K, 2, false>(input, key_column, plan, policy, phases);
  });
}

}  // namespace joinery::detail::cpu
