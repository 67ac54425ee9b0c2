// Parallel hash group-by on the CPU.
//
// Few groups: each thread pre-aggregates its slice of the rows into its own table (no sharing, no
// atomics), then the thread tables are merged, partitioned by hash so that the merge is parallel
// too. Many groups: thread tables would outgrow the cache and every row would miss, so once a
// thread table passes a cache-derived size the run switches to radix partitioning the rows by
// hash (key and the aggregated columns, one pass, at most 2^10 partitions) and aggregates each
// partition in one cache-resident table, in parallel over partitions; a partition's groups live
// in no other partition, so nothing is merged.
#include "core/cancel.hpp"
#include "core/parallel_shares.hpp"
#include "cpu/cpu_groupby.hpp"
#include "cpu/groupby_accumulators.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>

namespace joinery::detail::cpu {

namespace {

using clock_type = std::chrono::steady_clock;

struct phase_clock {
  std::vector<phase_time>* out;
  clock_type::time_point t = clock_type::now();
  void lap(char const* name) {
    auto const now = clock_type::now();
    if (out != nullptr) {
      out->push_back({name, std::chrono::duration<double>(now - t).count()});
    }
    t = now;
    throw_if_cancelled();  // between phases (joinery/cancel.hpp)
  }
};

std::size_t cache_bytes_of(hash_groupby_policy const& policy) {
  if (policy.cache_bytes > 0) { return policy.cache_bytes; }
  long const l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? static_cast<std::size_t>(l2) : std::size_t{1} << 20;
}

/// Bytes a thread's pre-aggregation table may reach before the run partitions instead.
std::size_t local_table_bytes(hash_groupby_policy const& policy, std::size_t l2, int threads) {
  auto const over = static_cast<std::size_t>(policy.l2_overflow * static_cast<double>(l2));
  if (policy.cache_bytes > 0) { return over; }  // a given cache size stands for the whole machine
  long const l3 = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 <= 0) { return l2; }
  return std::max(l2, std::min(over, static_cast<std::size_t>(l3) / static_cast<std::size_t>(threads)));
}

int ceil_log2(double x) { return x <= 1 ? 0 : static_cast<int>(std::ceil(std::log2(x))); }

/// Distinct keys implied by seeing `d` distinct in `r` uniform draws: solves d = G(1 - e^(-r/G)).
/// Skew makes it an underestimate, which only makes partitions larger (tables grow).
double estimate_groups(double r, double d, double n) {
  if (d <= 0) { return 1; }
  auto f = [r](double g) { return g * -std::expm1(-r / g); };
  if (f(n) <= d) { return n; }
  double lo = d;
  double hi = n;
  for (int i = 0; i < 60 && hi / lo > 1.01; ++i) {
    auto const mid = std::sqrt(lo * hi);
    (f(mid) < d ? lo : hi) = mid;
  }
  return hi;
}

template <class K>
class hash_run {
 public:
  hash_run(table_view const& input, size_type key_column, agg_plan const& plan,
           hash_groupby_policy const& policy, std::vector<phase_time>* phases)
      : plan_(plan), policy_(policy), clock_{phases},
        keys_(input.column(key_column).template data_as<K>()),
        n_(static_cast<std::size_t>(input.num_rows())),
        threads_(n_ < policy.serial_rows ? 1 : usable_threads()),
        cache_(cache_bytes_of(policy)),
        group_bytes_(group_table<K>::slots_per_group * sizeof(typename group_table<K>::slot) + sizeof(K) + plan.acc_bytes()) {
    for (auto const& a : plan.accs) {
      values_.push_back(a.column < 0 ? nullptr : input.column(a.column).data());
    }
  }

  table run(hash_groupby_path* path) {
    auto limit = policy_.max_local_groups < 0
                   ? std::max<std::size_t>(
                       local_table_bytes(policy_, cache_, threads_) / group_bytes_, 1024)
                   : static_cast<std::size_t>(policy_.max_local_groups);
    double groups_estimate = static_cast<double>(n_);
    if (limit > 0) {
      if (auto t = pre_aggregate(limit, groups_estimate)) {
        if (path != nullptr) { *path = hash_groupby_path::pre_aggregate; }
        return std::move(*t);
      }
    }
    if (path != nullptr) { *path = hash_groupby_path::partition; }
    return partition_and_aggregate(groups_estimate);
  }

 private:
  using table_type = group_table<K>;

  /// Per-thread tables, merged; nullopt (and an estimate of the groups) when one outgrew `limit`.
  std::optional<table> pre_aggregate(std::size_t limit, double& groups_estimate) {
    std::vector<std::optional<table_type>> local(static_cast<std::size_t>(threads_));
    std::vector<std::size_t> seen(local.size(), 0);
    std::atomic<bool> overflow{false};
#pragma omp parallel num_threads(threads_)
    {
      auto const t = static_cast<std::size_t>(omp_get_thread_num());
      auto const lo = n_ * t / local.size();
      auto const hi = n_ * (t + 1) / local.size();
      auto& tab = local[t].emplace(&plan_, std::min<std::size_t>(hi - lo, 256));
      // Slices of a few chunks, so that the others stop soon after one thread overflows.
      auto const step = policy_.chunk_rows * 16;
      std::vector<void const*> v(values_.size());
      for (auto b = lo; b < hi && !overflow.load(std::memory_order_relaxed); b += step) {
        auto const len = std::min(step, hi - b);
        for (std::size_t a = 0; a < v.size(); ++a) {
          v[a] = values_[a] == nullptr
                   ? nullptr
                   : static_cast<std::byte const*>(values_[a]) + b * plan_.accs[a].ops.value_width;
        }
        auto const done = tab.aggregate(keys_ + b, v.data(), len, policy_.chunk_rows, limit);
        seen[t] += done;
        // Give up early when the keys seen so far already imply that this thread's table will
        // outgrow the limit (with a 2x margin for the estimate): filling a table of several
        // MiB only to find that out would cost a few percent at g = 2^24.
        auto const r = static_cast<double>(seen[t]);
        auto const groups = estimate_groups(r, static_cast<double>(tab.size()),
                                            static_cast<double>(n_));
        auto const expect = groups * -std::expm1(-static_cast<double>(hi - lo) / groups);
        if (done < len || expect > 2.0 * static_cast<double>(limit)) {
          overflow.store(true, std::memory_order_relaxed);
        }
      }
    }
    clock_.lap("pre-aggregate");
    if (overflow.load()) {
      groups_estimate = 1;
      for (std::size_t t = 0; t < local.size(); ++t) {
        groups_estimate = std::max(groups_estimate,
                                   estimate_groups(static_cast<double>(seen[t]),
                                                   static_cast<double>(local[t]->size()),
                                                   static_cast<double>(n_)));
      }
      return std::nullopt;
    }
    return merge(local);
  }

  table merge(std::vector<std::optional<table_type>>& local) {
    std::size_t total = 0;
    for (auto const& l : local) { total += l->size(); }
    if (local.size() == 1) {
      clock_.lap("merge");
      return output({&*local[0]});
    }
    int const bits = std::clamp(ceil_log2(static_cast<double>(total * group_bytes_) /
                                          static_cast<double>(cache_)),
                                0, policy_.max_partition_bits);
    if (bits == 0) {
      // Few groups: one thread folds the others into the first table.
      std::vector<std::uint32_t> ids;
      for (std::size_t t = 1; t < local.size(); ++t) {
        ids.resize(local[t]->size());
        for (std::size_t g = 0; g < ids.size(); ++g) { ids[g] = static_cast<std::uint32_t>(g); }
        local[0]->merge_from(*local[t], ids.data(), ids.size(), policy_.chunk_rows);
      }
      clock_.lap("merge");
      return output({&*local[0]});
    }
    // Each thread table's groups in order of hash partition, then one merged table per partition.
    std::size_t const parts = std::size_t{1} << bits;
    auto const shift = 64 - bits;
    auto const nt = local.size();
    std::vector<std::vector<std::uint32_t>> order(nt);
    std::vector<std::vector<std::size_t>> start(nt, std::vector<std::size_t>(parts + 1, 0));
#pragma omp parallel for num_threads(threads_) schedule(static, 1)
    for (std::size_t t = 0; t < nt; ++t) {
      auto const& tab = *local[t];
      auto& st = start[t];
      for (std::size_t g = 0; g < tab.size(); ++g) {
        ++st[(mix64(static_cast<std::uint64_t>(tab.keys()[g])) >> shift) + 1];
      }
      for (std::size_t p = 0; p < parts; ++p) { st[p + 1] += st[p]; }
      std::vector<std::size_t> cur(st.begin(), st.end() - 1);
      order[t].resize(tab.size());
      for (std::size_t g = 0; g < tab.size(); ++g) {
        order[t][cur[mix64(static_cast<std::uint64_t>(tab.keys()[g])) >> shift]++] =
          static_cast<std::uint32_t>(g);
      }
    }
    std::vector<std::optional<table_type>> merged(parts);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
    for (std::size_t p = 0; p < parts; ++p) {
      auto& m = merged[p].emplace(&plan_, start[0][p + 1] - start[0][p]);
      for (std::size_t t = 0; t < nt; ++t) {
        m.merge_from(*local[t], order[t].data() + start[t][p], start[t][p + 1] - start[t][p],
                     policy_.chunk_rows);
      }
    }
    local.clear();
    clock_.lap("merge");
    std::vector<table_type const*> tabs;
    for (auto const& m : merged) { tabs.push_back(&*m); }
    return output(tabs);
  }

  table partition_and_aggregate(double groups_estimate) {
    int const min_bits = std::min(ceil_log2(4.0 * threads_), policy_.max_partition_bits);
    int const bits =
      std::clamp(ceil_log2(groups_estimate * static_cast<double>(group_bytes_) /
                           static_cast<double>(cache_ / 2)),
                 min_bits, policy_.max_partition_bits);
    std::size_t const parts = std::size_t{1} << bits;
    auto const shift = 64 - bits;
    // The columns to move: the key, then each aggregated column once.
    std::vector<size_type> columns;
    std::vector<int> buffer_of(plan_.accs.size(), -1);
    for (std::size_t a = 0; a < plan_.accs.size(); ++a) {
      auto const c = plan_.accs[a].column;
      if (c < 0) { continue; }
      auto const it = std::find(columns.begin(), columns.end(), c);
      buffer_of[a] = static_cast<int>(it - columns.begin());
      if (it == columns.end()) { columns.push_back(c); }
    }
    std::vector<std::size_t> width(columns.size());
    std::vector<void const*> source(columns.size());
    std::vector<aligned_bytes> buffers;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      auto const a = static_cast<std::size_t>(
        std::find(buffer_of.begin(), buffer_of.end(), static_cast<int>(c)) - buffer_of.begin());
      width[c] = plan_.accs[a].ops.value_width;
      source[c] = values_[a];
      buffers.emplace_back(n_ * width[c]);
    }
    aligned_bytes key_buffer(n_ * sizeof(K));
    auto* pkeys = reinterpret_cast<K*>(key_buffer.get());

    auto const nt = static_cast<std::size_t>(threads_);
    std::vector<std::size_t> offset(nt * parts, 0);  // thread-major: [t * parts + p]
    std::vector<std::size_t> part_start(parts + 1, 0);
#pragma omp parallel num_threads(threads_)
    {
      auto const t = static_cast<std::size_t>(omp_get_thread_num());
      auto const lo = n_ * t / nt;
      auto const hi = n_ * (t + 1) / nt;
      auto* hist = offset.data() + t * parts;
      for (auto i = lo; i < hi; ++i) { ++hist[mix64(static_cast<std::uint64_t>(keys_[i])) >> shift]; }
#pragma omp barrier
#pragma omp single
      {
        // Partition-major prefix: partition p's rows are contiguous, thread 0's first.
        std::size_t run = 0;
        for (std::size_t p = 0; p < parts; ++p) {
          part_start[p] = run;
          for (std::size_t u = 0; u < nt; ++u) {
            auto const c = offset[u * parts + p];
            offset[u * parts + p] = run;
            run += c;
          }
        }
        part_start[parts] = run;
      }
      auto* cursor = offset.data() + t * parts;
      std::vector<std::size_t> pos(policy_.chunk_rows);
      for (auto b = lo; b < hi; b += policy_.chunk_rows) {
        auto const len = std::min(policy_.chunk_rows, hi - b);
        for (std::size_t i = 0; i < len; ++i) {
          auto const k = keys_[b + i];
          auto const q = cursor[mix64(static_cast<std::uint64_t>(k)) >> shift]++;
          pos[i] = q;
          pkeys[q] = k;
        }
        for (std::size_t c = 0; c < columns.size(); ++c) {
          if (width[c] == 4) {
            scatter<std::uint32_t>(buffers[c].get(), source[c], b, pos.data(), len);
          } else {
            scatter<std::uint64_t>(buffers[c].get(), source[c], b, pos.data(), len);
          }
        }
      }
    }
    clock_.lap("partition");

    // Tasks: one per partition, or several for a partition far above its fair share of rows.
    struct task {
      std::size_t part, begin, end;
    };
    std::vector<task> tasks;
    std::vector<std::size_t> first_task(parts);
    auto const fair = static_cast<double>(n_) / static_cast<double>(parts);
    std::vector<bool> split(parts, false);
    for (std::size_t p = 0; p < parts; ++p) {
      auto const b = part_start[p];
      auto const e = part_start[p + 1];
      first_task[p] = tasks.size();
      auto const rows = e - b;
      if (nt > 1 && static_cast<double>(rows) > policy_.split_factor * fair &&
          rows > 4 * nt * policy_.chunk_rows) {
        split[p] = true;
        for (std::size_t u = 0; u < nt; ++u) {
          tasks.push_back({p, b + rows * u / nt, b + rows * (u + 1) / nt});
        }
      } else {
        tasks.push_back({p, b, e});
      }
    }
    auto const per_part = std::max(groups_estimate / static_cast<double>(parts), 16.0);
    // A whole partition aggregates in its thread's scratch table, reused from one partition to
    // the next, and only its groups are kept (dense keys and accumulators): a fresh table per
    // partition faulted in about 4x the memory of its groups (at g = 2^24, most of this phase).
    // Pieces of a split partition keep their own tables until they are folded together.
    std::vector<std::optional<table_type>> tabs(tasks.size());
    std::vector<std::vector<K>> kept_keys(tasks.size());
    std::vector<acc_set> kept_accs;
    for (std::size_t k = 0; k < tasks.size(); ++k) { kept_accs.emplace_back(&plan_); }
#pragma omp parallel num_threads(threads_)
    {
      std::vector<void const*> v(plan_.accs.size());
      std::optional<table_type> scratch;
#pragma omp for schedule(dynamic, 1)
      for (std::size_t k = 0; k < tasks.size(); ++k) {
        auto const& tk = tasks[k];
        auto const rows = tk.end - tk.begin;
        auto const expect =
          static_cast<std::size_t>(std::min(static_cast<double>(rows), 1.25 * per_part));
        table_type* tab = nullptr;
        if (split[tk.part]) {
          tab = &tabs[k].emplace(&plan_, expect);
        } else {
          if (scratch) {
            scratch->clear();
          } else {
            scratch.emplace(&plan_, expect);
          }
          tab = &*scratch;
        }
        for (std::size_t a = 0; a < v.size(); ++a) {
          v[a] = buffer_of[a] < 0 ? nullptr
                                  : buffers[static_cast<std::size_t>(buffer_of[a])].get() +
                                      tk.begin * plan_.accs[a].ops.value_width;
        }
        tab->aggregate(pkeys + tk.begin, v.data(), rows, policy_.chunk_rows, SIZE_MAX);
        if (!split[tk.part]) {
          auto const g = tab->size();
          kept_keys[k].assign(tab->keys(), tab->keys() + g);
          kept_accs[k].allocate(g);
          for (std::size_t a = 0; a < plan_.accs.size(); ++a) {
            std::memcpy(kept_accs[k].data(a), tab->accs().data(a), g * plan_.accs[a].ops.width);
          }
        }
      }
      // Pieces of a split partition fold into its first piece.
#pragma omp for schedule(dynamic, 1)
      for (std::size_t p = 0; p < parts; ++p) {
        if (!split[p]) { continue; }
        auto& into = *tabs[first_task[p]];
        std::vector<std::uint32_t> ids;
        for (std::size_t u = 1; u < nt; ++u) {
          auto const& from = *tabs[first_task[p] + u];
          ids.resize(from.size());
          for (std::size_t g = 0; g < ids.size(); ++g) { ids[g] = static_cast<std::uint32_t>(g); }
          into.merge_from(from, ids.data(), ids.size(), policy_.chunk_rows);
        }
      }
    }
    clock_.lap("aggregate");
    std::vector<group_run<K>> runs;
    for (std::size_t p = 0; p < parts; ++p) {
      auto const k = first_task[p];
      if (split[p]) {
        auto const& t = *tabs[k];
        runs.push_back(run_of(t.accs(), t.keys(), 0, t.size()));
      } else {
        runs.push_back(run_of(kept_accs[k], kept_keys[k].data(), 0, kept_keys[k].size()));
      }
    }
    auto out = finalize_groups(plan_, runs);
    clock_.lap("output");
    return out;
  }

  template <class W>
  static void scatter(std::byte* dst, void const* src, std::size_t row0, std::size_t const* pos,
                      std::size_t n) {
    auto* d = reinterpret_cast<W*>(dst);
    auto const* s = static_cast<W const*>(src) + row0;
    for (std::size_t i = 0; i < n; ++i) { d[pos[i]] = s[i]; }
  }

  table output(std::vector<table_type const*> const& tabs) {
    std::vector<group_run<K>> runs;
    for (auto const* t : tabs) { runs.push_back(run_of(t->accs(), t->keys(), 0, t->size())); }
    auto out = finalize_groups(plan_, runs);
    clock_.lap("output");
    return out;
  }

  agg_plan const& plan_;
  hash_groupby_policy const& policy_;
  phase_clock clock_;
  K const* keys_;
  std::size_t n_;
  int threads_;
  std::size_t cache_;
  std::size_t group_bytes_;
  std::vector<void const*> values_;  ///< per accumulator: its input column (nullptr: count)
};

}  // namespace

table hash_groupby(table_view const& input, size_type key_column,
                   std::vector<aggregation> const& aggregations,
                   hash_groupby_policy const& policy, std::vector<phase_time>* phases,
                   hash_groupby_path* path) {
  auto const plan = make_plan(input, aggregations, input.num_rows());
  return dispatch_key_type(input.column(key_column).type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    return hash_run<K>(input, key_column, plan, policy, phases).run(path);
  });
}

}  // namespace joinery::detail::cpu
