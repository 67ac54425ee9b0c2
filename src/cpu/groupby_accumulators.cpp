#include "cpu/groupby_accumulators.hpp"

#include "core/average.hpp"

#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

namespace joinery::detail::cpu {

namespace {

template <acc_kind A, class T>
struct acc_traits;

template <class T>
struct acc_traits<acc_kind::count, T> {
  using acc = std::int64_t;
  static constexpr acc identity() { return 0; }
  static void add(acc& a, T) { ++a; }
  static void combine(acc& a, acc b) { a += b; }
};
template <class T>
struct acc_traits<acc_kind::sum_wrap, T> {
  using acc = std::uint64_t;
  using wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
  static constexpr acc identity() { return 0; }
  // Sign-extend, then add modulo 2^64: the two's complement of the signed sum.
  static void add(acc& a, T v) { a += static_cast<acc>(static_cast<wide>(v)); }
  static void combine(acc& a, acc b) { a += b; }
};
template <class T>
struct acc_traits<acc_kind::sum_i64, T> {
  using acc = std::int64_t;
  static constexpr acc identity() { return 0; }
  static void add(acc& a, T v) { a += static_cast<acc>(v); }
  static void combine(acc& a, acc b) { a += b; }
};
template <class T>
struct acc_traits<acc_kind::sum_i128, T> {
  using acc = __int128;
  static constexpr acc identity() { return 0; }
  static void add(acc& a, T v) { a += static_cast<acc>(v); }
  static void combine(acc& a, acc b) { a += b; }
};
template <class T>
struct acc_traits<acc_kind::sum_f64, T> {
  using acc = double;
  static constexpr acc identity() { return 0.0; }
  static void add(acc& a, T v) { a += static_cast<double>(v); }
  static void combine(acc& a, acc b) { a += b; }
};
template <class T>
struct acc_traits<acc_kind::min, T> {
  using acc = T;
  static constexpr acc identity() {
    if constexpr (std::is_floating_point_v<T>) { return std::numeric_limits<T>::infinity(); }
    return std::numeric_limits<T>::max();
  }
  static void add(acc& a, T v) { a = v < a ? v : a; }
  static void combine(acc& a, acc b) { a = b < a ? b : a; }
};
template <class T>
struct acc_traits<acc_kind::max, T> {
  using acc = T;
  static constexpr acc identity() {
    if constexpr (std::is_floating_point_v<T>) { return -std::numeric_limits<T>::infinity(); }
    return std::numeric_limits<T>::lowest();
  }
  static void add(acc& a, T v) { a = a < v ? v : a; }
  static void combine(acc& a, acc b) { a = a < b ? b : a; }
};

template <acc_kind A, class T>
acc_ops make_ops() {
  using tr = acc_traits<A, T>;
  using acc = typename tr::acc;
  acc_ops o;
  o.width = sizeof(acc);
  o.value_width = A == acc_kind::count ? 0 : sizeof(T);
  o.init = [](std::byte* p, std::size_t from, std::size_t to) {
    auto* a = reinterpret_cast<acc*>(p);
    std::fill(a + from, a + to, tr::identity());
  };
  o.update = [](std::byte* p, std::uint32_t const* gids, void const* values, std::size_t n) {
    auto* a = reinterpret_cast<acc*>(p);
    if constexpr (A == acc_kind::count) {
      for (std::size_t i = 0; i < n; ++i) { ++a[gids[i]]; }
    } else {
      auto const* v = static_cast<T const*>(values);
      for (std::size_t i = 0; i < n; ++i) { tr::add(a[gids[i]], v[i]); }
    }
  };
  o.reduce = [](std::byte* p, std::uint32_t gid, void const* values, std::size_t n) {
    auto& a = reinterpret_cast<acc*>(p)[gid];
    if constexpr (A == acc_kind::count) {
      a += static_cast<acc>(n);
    } else {
      // Four independent partial folds: they vectorise (integers) or at least pipeline (floats,
      // whose sums then differ from the row-order sum only by rounding).
      auto const* v = static_cast<T const*>(values);
      acc r[4] = {tr::identity(), tr::identity(), tr::identity(), tr::identity()};
      std::size_t i = 0;
      for (; i + 4 <= n; i += 4) {
        for (std::size_t j = 0; j < 4; ++j) { tr::add(r[j], v[i + j]); }
      }
      for (; i < n; ++i) { tr::add(r[0], v[i]); }
      for (std::size_t j = 0; j < 4; ++j) { tr::combine(a, r[j]); }
    }
  };
  o.merge = [](std::byte* dp, std::uint32_t const* dg, std::byte const* sp,
               std::uint32_t const* sg, std::size_t n) {
    auto* d = reinterpret_cast<acc*>(dp);
    auto const* s = reinterpret_cast<acc const*>(sp);
    for (std::size_t i = 0; i < n; ++i) { tr::combine(d[dg[i]], s[sg[i]]); }
  };
  return o;
}

template <class T>
acc_ops ops_for(acc_kind k) {
  switch (k) {
    case acc_kind::count: return make_ops<acc_kind::count, T>();
    case acc_kind::sum_wrap:
      if constexpr (std::is_integral_v<T>) { return make_ops<acc_kind::sum_wrap, T>(); }
      break;
    case acc_kind::sum_i64:
      if constexpr (std::is_integral_v<T>) { return make_ops<acc_kind::sum_i64, T>(); }
      break;
    case acc_kind::sum_i128:
      if constexpr (std::is_integral_v<T>) { return make_ops<acc_kind::sum_i128, T>(); }
      break;
    case acc_kind::sum_f64: return make_ops<acc_kind::sum_f64, T>();
    case acc_kind::min: return make_ops<acc_kind::min, T>();
    case acc_kind::max: return make_ops<acc_kind::max, T>();
  }
  JOINERY_FAIL("no such accumulator for this value type");
}

int find_or_add(agg_plan& p, acc_kind k, type_id t, size_type column) {
  for (std::size_t a = 0; a < p.accs.size(); ++a) {
    if (p.accs[a].kind == k && p.accs[a].column == column) { return static_cast<int>(a); }
  }
  acc_spec s{k, t, column, {}};
  s.ops = dispatch_type(t, [&](auto tag) { return ops_for<typename decltype(tag)::type>(k); });
  p.accs.push_back(s);
  return static_cast<int>(p.accs.size() - 1);
}

int find(agg_plan const& p, acc_kind k, size_type column) {
  for (std::size_t a = 0; a < p.accs.size(); ++a) {
    if (p.accs[a].kind == k && p.accs[a].column == column) { return static_cast<int>(a); }
  }
  return -1;
}

}  // namespace

std::size_t agg_plan::acc_bytes() const noexcept {
  std::size_t b = 0;
  for (auto const& a : accs) { b += a.ops.width; }
  return b;
}

agg_plan make_plan(table_view const& input, std::vector<aggregation> const& aggs, size_type rows) {
  agg_plan p;
  // Exact sums first, so that a plain sum over the same column reuses them.
  auto exact_kind = [&](type_id t) {
    return size_of(t) == 4 && rows < (size_type{1} << 31) ? acc_kind::sum_i64 : acc_kind::sum_i128;
  };
  for (auto const& a : aggs) {
    if (a.kind != aggregation_kind::avg) { continue; }
    auto const t = input.column(a.column).type();
    find_or_add(p, is_floating(t) ? acc_kind::sum_f64 : exact_kind(t), t, a.column);
    find_or_add(p, acc_kind::count, type_id::int64, -1);
  }
  for (auto const& a : aggs) {
    output_spec o;
    o.kind = a.kind;
    switch (a.kind) {
      case aggregation_kind::count_distinct:
        JOINERY_FAIL("count_distinct reached the CPU accumulators (composed_groupby runs it)");
      case aggregation_kind::count:
      case aggregation_kind::count_valid:  // the general key path hands over no NULLs
        o.acc = find_or_add(p, acc_kind::count, type_id::int64, -1);
        break;
      case aggregation_kind::sum: {
        auto const t = input.column(a.column).type();
        o.input = t;
        if (is_floating(t)) {
          o.acc = find_or_add(p, acc_kind::sum_f64, t, a.column);
        } else {
          o.acc = find(p, exact_kind(t), a.column);
          if (o.acc < 0) { o.acc = find_or_add(p, acc_kind::sum_wrap, t, a.column); }
        }
        break;
      }
      case aggregation_kind::min:
      case aggregation_kind::max: {
        auto const t = input.column(a.column).type();
        o.input = t;
        o.acc = find_or_add(p, a.kind == aggregation_kind::min ? acc_kind::min : acc_kind::max, t,
                            a.column);
        break;
      }
      case aggregation_kind::avg: {
        auto const t = input.column(a.column).type();
        o.input = t;
        o.acc = find(p, is_floating(t) ? acc_kind::sum_f64 : exact_kind(t), a.column);
        o.count_acc = find(p, acc_kind::count, -1);
        break;
      }
    }
    p.outputs.push_back(o);
  }
  return p;
}

void acc_set::grow(std::size_t groups) {
  if (groups <= capacity_) { return; }
  auto const cap = std::max<std::size_t>(std::bit_ceil(groups), 16);
  for (std::size_t a = 0; a < data_.size(); ++a) {
    auto const& ops = plan_->accs[a].ops;
    aligned_bytes fresh(cap * ops.width);
    if (capacity_ > 0) { std::memcpy(fresh.get(), data_[a].get(), capacity_ * ops.width); }
    ops.init(fresh.get(), capacity_, cap);
    data_[a] = std::move(fresh);
  }
  capacity_ = cap;
}

void acc_set::allocate(std::size_t groups) {
  for (std::size_t a = 0; a < data_.size(); ++a) {
    data_[a] = aligned_bytes(groups * plan_->accs[a].ops.width);
  }
  capacity_ = groups;
}

template <class K>
group_table<K>::group_table(agg_plan const* plan, std::size_t expected_groups)
    : plan_(plan), accs_(plan) {
  auto const want = std::max<std::size_t>(expected_groups, 8);
  rehash(std::bit_ceil(slots_per_group * want));
  keys_.reserve(want);
  accs_.grow(want);
}

template <class K>
void group_table<K>::rehash(std::size_t slot_count) {
  slots_.assign(slot_count, slot{K{}, 0});
  mask_ = slot_count - 1;
  for (std::size_t g = 0; g < keys_.size(); ++g) {
    auto s = mix64(static_cast<std::uint64_t>(keys_[g])) & mask_;
    while (slots_[s].id != 0) { s = (s + 1) & mask_; }
    slots_[s] = slot{keys_[g], static_cast<std::uint32_t>(g + 1)};
  }
}

template <class K>
std::uint32_t group_table<K>::insert_at(std::size_t s, K key) {
  auto const g = keys_.size();
  JOINERY_EXPECTS(g + 1 < std::numeric_limits<std::uint32_t>::max(),
                  "a group-by table would hold more than 2^32 groups");
  keys_.push_back(key);
  accs_.grow(g + 1);
  if (slots_per_group * (g + 1) > slots_.size()) {
    rehash(2 * slots_.size());  // places the new key too
    return static_cast<std::uint32_t>(g);
  }
  slots_[s] = slot{key, static_cast<std::uint32_t>(g + 1)};
  return static_cast<std::uint32_t>(g);
}

namespace {
/// Whether keys[0..n) are all equal. Two probes first, so that mixed chunks (the common case
/// with many groups) cost almost nothing; the full test is a branch-free, vectorised pass.
template <class K>
bool uniform(K const* keys, std::size_t n) {
  if (n == 0 || keys[n - 1] != keys[0] || keys[n / 2] != keys[0]) { return false; }
  K diff = 0;
  for (std::size_t i = 0; i < n; ++i) { diff |= keys[i] ^ keys[0]; }
  return diff == 0;
}
}  // namespace

template <class K>
void group_table<K>::reduce_chunk(K key, void const* const* values, std::size_t begin,
                                  std::size_t len) {
  auto const gid = find_or_insert(key);
  auto const& accs = plan_->accs;
  for (std::size_t a = 0; a < accs.size(); ++a) {
    auto const* v = values[a] == nullptr
                      ? nullptr
                      : static_cast<std::byte const*>(values[a]) + begin * accs[a].ops.value_width;
    accs[a].ops.reduce(accs_.data(a), gid, v, len);
  }
}

template <class K>
std::size_t group_table<K>::aggregate(K const* keys, void const* const* values, std::size_t n,
                               std::size_t chunk, std::size_t max_groups) {
  std::vector<std::uint32_t> gids(chunk);
  auto const& accs = plan_->accs;
  for (std::size_t begin = 0; begin < n; begin += chunk) {
    auto const len = std::min(chunk, n - begin);
    auto const* k = keys + begin;
    if (uniform(k, len)) [[unlikely]] {
      // One key over the whole chunk (one group, or sorted/clustered input): one lookup, then
      // each accumulator folds the chunk in registers. Out of line, so that the per-row loop
      // below keeps the layout it had without this path.
      reduce_chunk(k[0], values, begin, len);
    } else {
      for (std::size_t i = 0; i < len; ++i) { gids[i] = find_or_insert(k[i]); }
      for (std::size_t a = 0; a < accs.size(); ++a) {
        auto const* v = values[a] == nullptr ? nullptr
                                             : static_cast<std::byte const*>(values[a]) +
                                                 begin * accs[a].ops.value_width;
        accs[a].ops.update(accs_.data(a), gids.data(), v, len);
      }
    }
    if (size() > max_groups) { return begin + len; }
  }
  return n;
}

template <class K>
void group_table<K>::clear() {
  std::fill(slots_.begin(), slots_.end(), slot{K{}, 0});
  for (std::size_t a = 0; a < plan_->accs.size(); ++a) {
    plan_->accs[a].ops.init(accs_.data(a), 0, keys_.size());
  }
  keys_.clear();
}

template <class K>
void group_table<K>::merge_from(group_table const& src, std::uint32_t const* src_gids,
                                std::size_t n, std::size_t chunk) {
  std::vector<std::uint32_t> dst(chunk);
  auto const& accs = plan_->accs;
  for (std::size_t begin = 0; begin < n; begin += chunk) {
    auto const len = std::min(chunk, n - begin);
    for (std::size_t i = 0; i < len; ++i) {
      dst[i] = find_or_insert(src.keys_[src_gids[begin + i]]);
    }
    for (std::size_t a = 0; a < accs.size(); ++a) {
      accs[a].ops.merge(accs_.data(a), dst.data(), src.accs_.data(a), src_gids + begin, len);
    }
  }
}

namespace {

/// Writes one requested aggregate of one run of groups into `out` (at the run's offset).
void write_output(output_spec const& o, agg_plan const& plan, std::vector<std::byte const*> const& accs,
                  std::size_t n, void* out) {
  auto const* src = accs[static_cast<std::size_t>(o.acc)];
  switch (o.kind) {
    case aggregation_kind::count_distinct:
      JOINERY_FAIL("count_distinct reached the CPU accumulators (composed_groupby runs it)");
    case aggregation_kind::count:
    case aggregation_kind::count_valid:
    case aggregation_kind::min:
    case aggregation_kind::max: std::memcpy(out, src, n * plan.accs[o.acc].ops.width); return;
    case aggregation_kind::sum:
      if (plan.accs[o.acc].kind == acc_kind::sum_i128) {
        // The wrapping sum is the low 64 bits of the exact one.
        auto const* s = reinterpret_cast<__int128 const*>(src);
        auto* d = static_cast<std::uint64_t*>(out);
        for (std::size_t i = 0; i < n; ++i) { d[i] = static_cast<std::uint64_t>(s[i]); }
      } else {
        std::memcpy(out, src, n * 8);  // uint64, int64 (same bits) or double
      }
      return;
    case aggregation_kind::avg: {
      auto const* c = reinterpret_cast<std::int64_t const*>(accs[static_cast<std::size_t>(o.count_acc)]);
      auto* d = static_cast<double*>(out);
      switch (plan.accs[o.acc].kind) {
        case acc_kind::sum_f64: {
          auto const* s = reinterpret_cast<double const*>(src);
          for (std::size_t i = 0; i < n; ++i) { d[i] = s[i] / static_cast<double>(c[i]); }
          return;
        }
        // The GPU backend's formula (core/average.hpp): both return the same bits.
        case acc_kind::sum_i64: {
          auto const* s = reinterpret_cast<std::int64_t const*>(src);
          for (std::size_t i = 0; i < n; ++i) {
            d[i] = exact_average(static_cast<std::uint64_t>(s[i]), 0, true, false, c[i]);
          }
          return;
        }
        case acc_kind::sum_i128: {
          auto const* s = reinterpret_cast<__int128 const*>(src);
          bool const is_signed_input = is_signed(o.input);
          for (std::size_t i = 0; i < n; ++i) {
            auto const u = static_cast<unsigned __int128>(s[i]);
            d[i] = exact_average(static_cast<std::uint64_t>(u), static_cast<std::uint64_t>(u >> 64),
                                 is_signed_input, true, c[i]);
          }
          return;
        }
        default: break;
      }
      JOINERY_FAIL("avg without a sum accumulator");
    }
  }
}

}  // namespace

template <class K>
table finalize_groups(agg_plan const& plan, std::vector<group_run<K>> const& runs) {
  std::vector<std::size_t> offset(runs.size() + 1, 0);
  for (std::size_t r = 0; r < runs.size(); ++r) { offset[r + 1] = offset[r] + runs[r].groups; }
  auto const total = static_cast<size_type>(offset.back());
  std::vector<column> cols;
  cols.emplace_back(type_to_id_v<K>, total);
  for (auto const& o : plan.outputs) {
    cols.emplace_back(aggregation_result_type(o.kind, o.input), total);
  }
  std::vector<std::byte*> base;
  for (auto& c : cols) { base.push_back(static_cast<std::byte*>(c.data())); }
  auto const nr = static_cast<std::int64_t>(runs.size());
#pragma omp parallel for schedule(dynamic, 1) if (total > 4096)
  for (std::int64_t r = 0; r < nr; ++r) {
    auto const& run = runs[static_cast<std::size_t>(r)];
    auto const off = offset[static_cast<std::size_t>(r)];
    if (run.groups == 0) { continue; }
    std::memcpy(base[0] + off * sizeof(K), run.keys, run.groups * sizeof(K));
    for (std::size_t i = 0; i < plan.outputs.size(); ++i) {
      auto const& o = plan.outputs[i];
      auto const w = size_of(aggregation_result_type(o.kind, o.input));
      write_output(o, plan, run.accs, run.groups, base[i + 1] + off * w);
    }
  }
  return table(std::move(cols));
}

#define JOINERY_GROUPBY_INSTANTIATE(K)                                                         \
  template class group_table<K>;                                                               \
  template table finalize_groups<K>(agg_plan const&, std::vector<group_run<K>> const&);
JOINERY_GROUPBY_INSTANTIATE(std::int32_t)
JOINERY_GROUPBY_INSTANTIATE(std::int64_t)
JOINERY_GROUPBY_INSTANTIATE(std::uint32_t)
JOINERY_GROUPBY_INSTANTIATE(std::uint64_t)
#undef JOINERY_GROUPBY_INSTANTIATE

}  // namespace joinery::detail::cpu
