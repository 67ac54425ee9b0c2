// Parallel sort group-by on the CPU: LSD radix sort of (key, row id) pairs (keys mapped to
// unsigned order-preserving form, passes over constant digits skipped), then segmented
// aggregation: the sorted pairs are cut into one range per thread at run boundaries, so each
// group belongs to exactly one thread and no merge is needed; groups come out in key order.
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

template <class K, class I>
struct entry {
  ukey<K> key;
  I row;
};

template <class W>
void gather(std::byte* dst, void const* src, std::size_t const* rows, std::size_t n) {
  auto* d = reinterpret_cast<W*>(dst);
  auto const* s = static_cast<W const*>(src);
  for (std::size_t i = 0; i < n; ++i) { d[i] = s[rows[i]]; }
}

template <class K, class I>
table run_sort(table_view const& input, size_type key_column, agg_plan const& plan,
               sort_groupby_policy const& policy, std::vector<phase_time>* phases) {
  using U = ukey<K>;
  using E = entry<K, I>;
  auto t0 = clock_type::now();
  auto lap = [&](char const* name) {
    auto const now = clock_type::now();
    if (phases != nullptr) {
      phases->push_back({name, std::chrono::duration<double>(now - t0).count()});
    }
    t0 = now;
  };
  auto const* keys = input.column(key_column).template data_as<K>();
  auto const n = static_cast<std::size_t>(input.num_rows());
  int const threads = n < policy.serial_rows ? 1 : std::max(1, omp_get_max_threads());
  auto const nt = static_cast<std::size_t>(threads);
  std::size_t const radix = std::size_t{1} << policy.radix_bits;
  auto const digit_mask = static_cast<U>(radix - 1);

  aligned_bytes buf_a(n * sizeof(E));
  aligned_bytes buf_b(n * sizeof(E));
  auto* src = reinterpret_cast<E*>(buf_a.get());
  auto* dst = reinterpret_cast<E*>(buf_b.get());
  // Which key bits vary at all: digits that never change cost no pass.
  std::vector<U> varying(nt, 0);
  U const first = n > 0 ? to_unsigned(keys[0]) : U{0};
#pragma omp parallel num_threads(threads)
  {
    auto const t = static_cast<std::size_t>(omp_get_thread_num());
    U v = 0;
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
      auto const u = to_unsigned(keys[i]);
      src[i] = E{u, static_cast<I>(i)};
      v |= u ^ first;
    }
    varying[t] = v;
  }
  U vary = 0;
  for (auto v : varying) { vary |= v; }

  std::vector<std::size_t> count(nt * radix);  // [t * radix + digit]
  for (int shift = 0; shift < static_cast<int>(8 * sizeof(U)); shift += policy.radix_bits) {
    if (((vary >> shift) & digit_mask) == 0) { continue; }
#pragma omp parallel num_threads(threads)
    {
      auto const t = static_cast<std::size_t>(omp_get_thread_num());
      auto const lo = n * t / nt;
      auto const hi = n * (t + 1) / nt;
      auto* c = count.data() + t * radix;
      std::fill(c, c + radix, 0);
      for (auto i = lo; i < hi; ++i) { ++c[(src[i].key >> shift) & digit_mask]; }
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
      for (auto i = lo; i < hi; ++i) { dst[c[(src[i].key >> shift) & digit_mask]++] = src[i]; }
    }
    std::swap(src, dst);
  }
  lap("sort");

  // One range per thread, each starting at a run of equal keys.
  std::vector<std::size_t> begin(nt + 1, n);
  for (std::size_t t = 0; t < nt; ++t) {
    auto b = n * t / nt;
    while (b > 0 && b < n && src[b].key == src[b - 1].key) { ++b; }
    begin[t] = b;
  }
  std::vector<std::size_t> group_start(nt + 1, 0);
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (std::size_t t = 0; t < nt; ++t) {
    std::size_t g = 0;
    for (auto i = begin[t]; i < begin[t + 1]; ++i) { g += i == begin[t] || src[i].key != src[i - 1].key; }
    group_start[t + 1] = g;
  }
  for (std::size_t t = 0; t < nt; ++t) { group_start[t + 1] += group_start[t]; }
  auto const total = group_start[nt];

  // Distinct aggregated columns, gathered once per chunk.
  std::vector<size_type> columns;
  std::vector<int> buffer_of(plan.accs.size(), -1);
  std::vector<std::size_t> width;
  for (std::size_t a = 0; a < plan.accs.size(); ++a) {
    auto const c = plan.accs[a].column;
    if (c < 0) { continue; }
    auto const it = std::find(columns.begin(), columns.end(), c);
    buffer_of[a] = static_cast<int>(it - columns.begin());
    if (it == columns.end()) {
      columns.push_back(c);
      width.push_back(plan.accs[a].ops.value_width);
    }
  }
  acc_set accs(&plan);
  accs.allocate(total);
  std::vector<K> group_keys(total);
#pragma omp parallel num_threads(threads)
  {
    auto const t = static_cast<std::size_t>(omp_get_thread_num());
    for (std::size_t a = 0; a < plan.accs.size(); ++a) {
      plan.accs[a].ops.init(accs.data(a), group_start[t], group_start[t + 1]);
    }
    auto const chunk = policy.chunk_rows;
    std::vector<std::uint32_t> gids(chunk);
    std::vector<std::size_t> rows(chunk);
    std::vector<aligned_bytes> gathered;
    for (std::size_t c = 0; c < columns.size(); ++c) { gathered.emplace_back(chunk * 8); }
    // The group of row i is `g`, which starts one below the thread's first group.
    auto g = group_start[t] - 1;
    for (auto b = begin[t]; b < begin[t + 1]; b += chunk) {
      auto const len = std::min(chunk, begin[t + 1] - b);
      std::size_t base = 0;  // group of the chunk's first row: ids relative to it fit 32 bits
      for (std::size_t i = 0; i < len; ++i) {
        auto const r = b + i;
        if (r == begin[t] || src[r].key != src[r - 1].key) {
          ++g;
          group_keys[g] = from_unsigned<K>(src[r].key);
        }
        if (i == 0) { base = g; }
        gids[i] = static_cast<std::uint32_t>(g - base);
        rows[i] = src[r].row;
      }
      for (std::size_t c = 0; c < columns.size(); ++c) {
        auto const* col = input.column(columns[c]).data();
        if (width[c] == 4) {
          gather<std::uint32_t>(gathered[c].get(), col, rows.data(), len);
        } else {
          gather<std::uint64_t>(gathered[c].get(), col, rows.data(), len);
        }
      }
      for (std::size_t a = 0; a < plan.accs.size(); ++a) {
        auto const& ops = plan.accs[a].ops;
        ops.update(accs.data(a) + base * ops.width, gids.data(),
                   buffer_of[a] < 0 ? nullptr
                                    : gathered[static_cast<std::size_t>(buffer_of[a])].get(),
                   len);
      }
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

}  // namespace

table sort_groupby(table_view const& input, size_type key_column,
                   std::vector<aggregation> const& aggregations,
                   sort_groupby_policy const& policy, std::vector<phase_time>* phases) {
  JOINERY_EXPECTS(policy.radix_bits >= 1 && policy.radix_bits <= 16,
                  "sort group-by radix bits must be in [1, 16]");
  auto const plan = make_plan(input, aggregations, input.num_rows());
  auto const n = static_cast<std::uint64_t>(input.num_rows());
  return dispatch_key_type(input.column(key_column).type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    if (n <= std::numeric_limits<std::uint32_t>::max()) {
      return run_sort<K, std::uint32_t>(input, key_column, plan, policy, phases);
    }
    return run_sort<K, std::uint64_t>(input, key_column, plan, policy, phases);
  });
}

}  // namespace joinery::detail::cpu
