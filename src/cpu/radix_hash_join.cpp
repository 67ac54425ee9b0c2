// Radix-partitioned hash join (after Kim et al. 2009 and Balkesen et al. 2013, "PRO"): both
// relations are cut into cache-sized partitions by the top bits of a key hash, in one or two
// passes (parallel histogram, prefix sum, scatter through software write-combining buffers that
// leave a cache line at a time), then each build partition gets a bucket-chaining table (bucket
// heads + a "next" array over the partition) that its probe partition is run against.
// Skew: an oversized pass-1 partition is partitioned again by all threads together; an oversized
// final partition gets its table built once (in parallel) and its probe side split into chunks
// that different threads probe.
#include "cpu/radix_hash_join.hpp"

#include "cpu/aligned_array.hpp"

#include "core/hash.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace joinery::detail::cpu {

namespace {

constexpr std::size_t line_bytes = 64;

/// Reads a cache size like "1024K" from sysfs for cpu0's cache of `level` (data or unified).
std::size_t sysfs_cache_bytes(int level) {
  for (int i = 0; i < 16; ++i) {
    std::string const dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream lv(dir + "level");
    if (!lv) { break; }
    int l = 0;
    lv >> l;
    std::string type;
    std::ifstream(dir + "type") >> type;
    if (l != level || type == "Instruction") { continue; }
    std::string size;
    std::ifstream(dir + "size") >> size;
    if (size.empty()) { continue; }
    std::size_t bytes = std::strtoull(size.c_str(), nullptr, 10);
    char const unit = size.back();
    if (unit == 'K') { bytes <<= 10; }
    if (unit == 'M') { bytes <<= 20; }
    return bytes;
  }
  return 0;
}

std::size_t sysconf_bytes(int name) {
  long const v = ::sysconf(name);
  return v > 0 ? static_cast<std::size_t>(v) : 0;
}

/// What is partitioned: the key and a payload, the row id (32-bit while both sides have < 2^32
/// rows, halving the traffic of 4-byte keys) or, for the aggregate output, the row's checksum
/// value, carried like a payload column so that no match needs a lookup by row id afterwards.
template <class Key, class Payload>
struct tuple {
  Key key;
  Payload payload;
};

/// How a sink's matches are produced from tuples. Row ids: emit build and probe row ids.
template <class Sink, class Row>
struct carry_rows {
  using payload = Row;
  explicit carry_rows(std::vector<Sink> const&) {}
  [[nodiscard]] static payload load(int /*relation*/, size_type i) { return static_cast<Row>(i); }
  template <class Tuple, class Visit>
  static void emit(join_kind kind, Tuple const& p, Tuple const* build, std::int64_t count,
                   Visit const& visit_local, Sink& out) {
    emit_matches(
      kind, static_cast<std::int64_t>(p.payload), count,
      [&](auto&& f) {
        visit_local([&](size_type j) { f(static_cast<std::int64_t>(build[j].payload)); });
      },
      out);
  }
};

/// The aggregate sink: tuples carry the rows' checksum values; emit_matches runs against a sink
/// that reads them from the (cache-resident) partitions instead of the row-id-indexed arrays.
template <class Row>
struct carry_sums {
  using payload = std::uint64_t;
  std::uint64_t const* sums[2];
  explicit carry_sums(std::vector<checksum_sink> const& sinks)
      : sums{sinks.front().build_sum, sinks.front().probe_sum} {}
  [[nodiscard]] payload load(int relation, size_type i) const {
    return sums[relation] != nullptr ? sums[relation][i] : 0;
  }
  /// "Row ids" here are indices into the build partition; -1 is the outer join's missing row.
  template <class Tuple>
  struct partition_sink {
    checksum_sink& out;
    Tuple const* build;
    std::uint64_t probe_sum;
    void add(std::int64_t b, std::int64_t /*probe*/) {
      ++out.count;
      out.sum += probe_sum + (b >= 0 ? build[b].payload : 0);
    }
    void add_probe(std::int64_t /*probe*/) {
      ++out.count;
      out.sum += probe_sum;
    }
  };
  template <class Tuple, class Visit>
  static void emit(join_kind kind, Tuple const& p, Tuple const* build, std::int64_t count,
                   Visit const& visit_local, checksum_sink& out) {
    partition_sink<Tuple> ps{out, build, p.payload};
    // The probe row id is not carried; partition_sink takes the probe's sum from `p` instead.
    emit_matches(
      kind, 0, count,
      [&](auto&& f) { visit_local([&](size_type j) { f(static_cast<std::int64_t>(j)); }); }, ps);
  }
};

template <class Sink, class Row>
struct carry_for {
  using type = carry_rows<Sink, Row>;
};
template <class Row>
struct carry_for<checksum_sink, Row> {
  using type = carry_sums<Row>;
};

template <class Key>
inline std::uint64_t hash_key(Key k) noexcept {
  // A full avalanche: partitions take the top bits, tables the bottom bits, and keys that differ
  // only in high bits (or only in low ones) still spread.
  return mix64(static_cast<std::uint64_t>(k));
}

/// Partition number of a hash: `bits` bits ending `consumed` bits below the top.
struct radix_fn {
  int shift = 0;
  std::uint64_t mask = 0;
  radix_fn(int consumed, int bits)
      : shift(bits == 0 ? 0 : 64 - consumed - bits),
        mask((std::uint64_t{1} << bits) - 1) {}
  [[nodiscard]] std::size_t operator()(std::uint64_t h) const noexcept {
    return static_cast<std::size_t>((h >> shift) & mask);
  }
  [[nodiscard]] std::size_t fanout() const noexcept { return static_cast<std::size_t>(mask) + 1; }
};

/// One partition's software write-combining buffer: a cache line of tuples.
template <class Tuple>
struct alignas(line_bytes) wc_line {
  static constexpr size_type tuples = line_bytes / sizeof(Tuple);
  static_assert(line_bytes % sizeof(Tuple) == 0, "tuples must tile a cache line");
  Tuple t[tuples];
};

/// Writes a full line; `dst` is line-aligned.
template <class Tuple>
inline void store_line(Tuple* dst, wc_line<Tuple> const& src, bool non_temporal) {
#if defined(__SSE2__)
  if (non_temporal) {
    auto const* s = reinterpret_cast<__m128i const*>(src.t);
    auto* d = reinterpret_cast<__m128i*>(dst);
    _mm_stream_si128(d + 0, _mm_load_si128(s + 0));
    _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
    _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
    _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
    return;
  }
#endif
  (void)non_temporal;
  std::memcpy(static_cast<void*>(dst), src.t, line_bytes);
}

/// Per-thread partitioning state, sized for the largest fanout.
template <class Tuple>
struct partition_scratch {
  explicit partition_scratch(std::size_t fanout)
      : lines(fanout), cursor(new size_type[fanout]), begin(new size_type[fanout]),
        hist(new size_type[fanout]) {}
  aligned_array<wc_line<Tuple>> lines;
  std::unique_ptr<size_type[]> cursor;  // next absolute output position per partition
  std::unique_ptr<size_type[]> begin;   // first position this thread owns per partition
  std::unique_ptr<size_type[]> hist;
};

template <class Get>
void histogram(Get const& get, size_type b, size_type e, radix_fn radix, size_type* hist) {
  std::fill(hist, hist + radix.fanout(), size_type{0});
  for (size_type i = b; i < e; ++i) { ++hist[radix(hash_key(get(i).key))]; }
}

/// Scatters get(i), i in [b, e), to dst[cursor[p]++] through the write-combining lines: a line
/// that fills leaves with one (streaming) store when this thread owns all of it; the lines at the
/// ends of its range, shared with neighbouring ranges, are copied tuple by tuple.
template <class Tuple, class Get>
void scatter(Get const& get, size_type b, size_type e, radix_fn radix, Tuple* dst,
             partition_scratch<Tuple>& s, bool non_temporal) {
  constexpr size_type per_line = wc_line<Tuple>::tuples;
  auto* const lines = s.lines.get();
  auto* const cursor = s.cursor.get();
  auto const* const begin = s.begin.get();
  for (size_type i = b; i < e; ++i) {
    Tuple const t = get(i);
    auto const p = radix(hash_key(t.key));
    size_type const pos = cursor[p]++;
    size_type const slot = pos & (per_line - 1);
    lines[p].t[slot] = t;
    if (slot == per_line - 1) {
      size_type const line = pos - slot;
      if (line >= begin[p]) {
        store_line(dst + line, lines[p], non_temporal);
      } else {
        for (size_type j = begin[p] - line; j < per_line; ++j) { dst[line + j] = lines[p].t[j]; }
      }
    }
  }
  for (std::size_t p = 0; p < radix.fanout(); ++p) {
    size_type const line = cursor[p] & ~(per_line - 1);
    for (size_type j = std::max(line, begin[p]); j < cursor[p]; ++j) {
      dst[j] = lines[p].t[j - line];
    }
  }
#if defined(__SSE2__)
  // Streaming stores are weakly ordered: drain them before other threads read the output.
  if (non_temporal) { _mm_sfence(); }
#endif
}

/// Partitions get(i), i < n, into dst[base, base + n) with all threads of the enclosing parallel
/// region, each taking one slice. `hist` (threads x fanout) is shared; `starts[p]` receives the
/// absolute start of partition p. Ends with a barrier.
template <class Tuple, class Get>
void partition_together(Get const& get, size_type n, size_type base, radix_fn radix, Tuple* dst,
                        size_type* starts, size_type* hist, partition_scratch<Tuple>& s,
                        bool non_temporal) {
  auto const t = static_cast<size_type>(omp_get_thread_num());
  auto const threads = static_cast<size_type>(omp_get_num_threads());
  auto const fanout = radix.fanout();
  size_type const b = n / threads * t + std::min(t, n % threads);
  size_type const e = b + n / threads + (t < n % threads ? 1 : 0);
  histogram(get, b, e, radix, hist + t * fanout);
#pragma omp barrier
  size_type running = base;
  for (std::size_t p = 0; p < fanout; ++p) {
    size_type before = 0, total = 0;
    for (size_type u = 0; u < threads; ++u) {
      auto const c = hist[u * fanout + p];
      total += c;
      before += u < t ? c : 0;
    }
    if (t == 0) { starts[p] = running; }
    s.cursor[p] = s.begin[p] = running + before;
    running += total;
  }
  scatter(get, b, e, radix, dst, s, non_temporal);
#pragma omp barrier
}

/// Partitions get(i), i < n, into dst[base, base + n) on the calling thread alone.
template <class Tuple, class Get>
void partition_alone(Get const& get, size_type n, size_type base, radix_fn radix, Tuple* dst,
                     size_type* starts, partition_scratch<Tuple>& s, bool non_temporal) {
  histogram(get, 0, n, radix, s.hist.get());
  size_type running = base;
  for (std::size_t p = 0; p < radix.fanout(); ++p) {
    starts[p] = s.cursor[p] = s.begin[p] = running;
    running += s.hist[p];
  }
  scatter(get, 0, n, radix, dst, s, non_temporal);
}

/// Bucket-chaining table over one build partition: heads[h] and next[j] hold 1 + a tuple's index
/// in the partition (0 ends a chain).
template <class Tuple, class Row>
struct chain_table {
  Tuple const* build = nullptr;
  Row const* heads = nullptr;
  Row const* next = nullptr;
  std::uint64_t mask = 0;
};

template <class Tuple, class Row>
void build_chains(Tuple const* r, size_type n, Row* heads, Row* next, std::uint64_t mask) {
  std::fill(heads, heads + mask + 1, Row{0});
  for (size_type j = 0; j < n; ++j) {
    auto const h = hash_key(r[j].key) & mask;
    next[j] = heads[h];
    heads[h] = static_cast<Row>(j + 1);
  }
}

/// Probes s[0, n) against `t`, one emit per probe row with its full match count.
template <class Carry, class Tuple, class Row, class Sink>
void probe_chains(join_kind kind, chain_table<Tuple, Row> const& t, Tuple const* s, size_type n,
                  Sink& out) {
  // Semi and anti joins only ask whether a row matches: stop at the first match, so a build key
  // repeated m times does not cost m steps per probe row (the count passed is then 1).
  bool const first_only = kind == join_kind::left_semi || kind == join_kind::left_anti;
  for (size_type i = 0; i < n; ++i) {
    auto const k = s[i].key;
    Row first = 0;
    std::int64_t count = 0;
    for (Row j = t.heads[hash_key(k) & t.mask]; j != 0; j = t.next[j - 1]) {
      if (t.build[j - 1].key == k) {
        if (count++ == 0) {
          first = j;
          if (first_only) { break; }
        }
      }
    }
    Carry::emit(
      kind, s[i], t.build, count,
      [&](auto&& f) {
        if (count == 1) {
          f(static_cast<size_type>(first - 1));
          return;
        }
        for (Row j = first; j != 0; j = t.next[j - 1]) {
          if (t.build[j - 1].key == k) { f(static_cast<size_type>(j - 1)); }
        }
      },
      out);
  }
}

template <class Carry, class Tuple, class Sink>
void emit_unmatched(join_kind kind, Tuple const* s, size_type n, Sink& out) {
  if (kind == join_kind::inner || kind == join_kind::left_semi) { return; }
  for (size_type i = 0; i < n; ++i) {
    Carry::emit(kind, s[i], s, 0, [](auto&&) {}, out);
  }
}

/// One relation partitioned: tuples in partition order and where each final partition starts.
template <class Tuple>
struct partitioned {
  aligned_array<Tuple> tuples;
  std::vector<size_type> starts;  // fanout + 1
  [[nodiscard]] size_type size(std::size_t p) const { return starts[p + 1] - starts[p]; }
};

/// Both relations partitioned with bits {b1, b2}: pass 1 over the key arrays with all threads,
/// pass 2 per pass-1 partition (oversized ones by all threads together).
template <class Tuple, class Key, class Carry>
std::pair<partitioned<Tuple>, partitioned<Tuple>> partition_both(
  join_input<Key> const& in, Carry const& carry, radix_bits bits, bool const non_temporal[2],
  radix_join_policy const& policy, radix_join_stats& stats) {
  using tuple_t = Tuple;
  auto const threads = static_cast<std::size_t>(omp_get_max_threads());
  radix_fn const radix1(0, bits.pass1), radix2(bits.pass1, bits.pass2);
  std::size_t const max_fanout = std::max(radix1.fanout(), radix2.fanout());
  Key const* keys[2] = {in.build, in.probe};
  size_type const rows[2] = {in.build_rows, in.probe_rows};

  partitioned<tuple_t> once[2];
  for (int r = 0; r < 2; ++r) {
    once[r].tuples = aligned_array<tuple_t>(static_cast<std::size_t>(rows[r]));
    once[r].starts.assign(radix1.fanout() + 1, rows[r]);
  }
  std::vector<size_type> hist(threads * max_fanout);
#pragma omp parallel
  {
    partition_scratch<tuple_t> s(max_fanout);
    for (int r = 0; r < 2; ++r) {
      Key const* k = keys[r];
      auto const get = [k, r, &carry](size_type i) { return tuple_t{k[i], carry.load(r, i)}; };
      partition_together(get, rows[r], 0, radix1, once[r].tuples.get(), once[r].starts.data(),
                         hist.data(), s, non_temporal[r]);
    }
  }
  if (bits.pass2 == 0) { return {std::move(once[0]), std::move(once[1])}; }

  partitioned<tuple_t> twice[2];
  struct job {
    int rel;
    std::size_t part;
  };
  std::vector<job> together, alone;
  for (int r = 0; r < 2; ++r) {
    twice[r].tuples = aligned_array<tuple_t>(static_cast<std::size_t>(rows[r]));
    twice[r].starts.assign(radix1.fanout() * radix2.fanout() + 1, rows[r]);
    auto const big = std::max(
      static_cast<size_type>(static_cast<double>(rows[r]) / (threads * policy.split_share)),
      policy.split_min_rows);
    for (std::size_t p = 0; p < radix1.fanout(); ++p) {
      (threads > 1 && once[r].size(p) > big ? together : alone).push_back({r, p});
    }
  }
  stats.split_pass2_partitions = together.size();
  auto const jobs_alone = static_cast<std::int64_t>(alone.size());
#pragma omp parallel
  {
    partition_scratch<tuple_t> s(max_fanout);
    auto run = [&](job const& j, bool all_threads) {
      auto const base = once[j.rel].starts[j.part];
      tuple_t const* src = once[j.rel].tuples.get() + base;
      auto const get = [src](size_type i) { return src[i]; };
      auto* starts = twice[j.rel].starts.data() + j.part * radix2.fanout();
      bool const nt = non_temporal[j.rel];
      if (all_threads) {
        partition_together(get, once[j.rel].size(j.part), base, radix2,
                           twice[j.rel].tuples.get(), starts, hist.data(), s, nt);
      } else {
        partition_alone(get, once[j.rel].size(j.part), base, radix2, twice[j.rel].tuples.get(),
                        starts, s, nt);
      }
    };
    for (auto const& j : together) { run(j, true); }
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t i = 0; i < jobs_alone; ++i) {
      run(alone[static_cast<std::size_t>(i)], false);
    }
  }
  return {std::move(twice[0]), std::move(twice[1])};
}

template <class Carry, class Row, class Tuple, class Key, class Sink>
void join_partitions(join_input<Key> const& in, partitioned<Tuple> const& r,
                     partitioned<Tuple> const& s, std::vector<Sink>& sinks,
                     radix_join_policy const& policy, radix_join_stats& stats) {
  using tuple_t = Tuple;
  auto const threads = static_cast<std::size_t>(omp_get_max_threads());
  std::size_t const parts = r.starts.size() - 1;
  auto const all_rows = static_cast<double>(in.build_rows + in.probe_rows);
  auto const big = std::max(static_cast<size_type>(all_rows / (threads * policy.split_share)),
                            policy.split_min_rows);
  auto const chunk = std::max<size_type>(policy.probe_chunk_rows, 1);
  bool const unmatched_silent = in.kind == join_kind::inner || in.kind == join_kind::left_semi;

  // A task probes s-range [s_begin, s_end) of partition `part`; `shared` >= 0 names a table
  // built beforehand by all threads, otherwise the task builds its own in thread scratch.
  struct task {
    std::size_t part;
    size_type s_begin, s_end;
    std::int64_t shared;
  };
  struct shared_table {
    std::size_t part;
    std::uint64_t mask;
    aligned_array<Row> heads, next;
  };
  std::vector<task> tasks;
  std::vector<shared_table> tables;
  std::vector<task> small;
  size_type max_small_build = 0;
  for (std::size_t p = 0; p < parts; ++p) {
    auto const nr = r.size(p), ns = s.size(p);
    if (ns == 0 || (nr == 0 && unmatched_silent)) { continue; }
    if (threads > 1 && nr + ns > big) {
      std::int64_t shared = -1;  // an empty build side needs no table
      if (nr > 0) {
        auto const mask = std::bit_ceil(static_cast<std::uint64_t>(nr)) - 1;
        tables.push_back(
          {p, mask, aligned_array<Row>(mask + 1), aligned_array<Row>(static_cast<std::size_t>(nr))});
        shared = static_cast<std::int64_t>(tables.size() - 1);
      }
      for (size_type b = s.starts[p]; b < s.starts[p + 1]; b += chunk) {
        tasks.push_back({p, b, std::min(b + chunk, s.starts[p + 1]), shared});
      }
    } else {
      small.push_back({p, s.starts[p], s.starts[p + 1], -1});
      max_small_build = std::max(max_small_build, nr);
    }
  }
  stats.split_join_partitions = tables.size();
  stats.probe_chunks = tasks.size();
  tasks.insert(tasks.end(), small.begin(), small.end());
  auto const ntasks = static_cast<std::int64_t>(tasks.size());

#pragma omp parallel
  {
    // Shared tables: zero the heads, then insert with an atomic push onto each bucket's chain.
    for (auto& tb : tables) {
      auto const nb = static_cast<std::int64_t>(tb.mask + 1);
      auto* heads = tb.heads.get();
#pragma omp for schedule(static) nowait
      for (std::int64_t h = 0; h < nb; ++h) { heads[h] = 0; }
    }
#pragma omp barrier
    for (auto& tb : tables) {
      auto const nr = static_cast<std::int64_t>(r.size(tb.part));
      tuple_t const* build = r.tuples.get() + r.starts[tb.part];
      auto* heads = tb.heads.get();
      auto* next = tb.next.get();
      auto const mask = tb.mask;
#pragma omp for schedule(static) nowait
      for (std::int64_t j = 0; j < nr; ++j) {
        auto const h = hash_key(build[j].key) & mask;
        next[j] = std::atomic_ref<Row>(heads[h]).exchange(static_cast<Row>(j + 1),
                                                          std::memory_order_relaxed);
      }
    }
#pragma omp barrier

    auto& out = sinks[static_cast<std::size_t>(omp_get_thread_num())];
    std::uint64_t const scratch_buckets =
      std::bit_ceil(static_cast<std::uint64_t>(std::max<size_type>(max_small_build, 1)));
    std::vector<Row> heads(scratch_buckets), next(static_cast<std::size_t>(max_small_build));
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t i = 0; i < ntasks; ++i) {
      auto const& tk = tasks[static_cast<std::size_t>(i)];
      tuple_t const* probe = s.tuples.get() + tk.s_begin;
      auto const ns = tk.s_end - tk.s_begin;
      tuple_t const* build = r.tuples.get() + r.starts[tk.part];
      chain_table<tuple_t, Row> t;
      t.build = build;
      if (tk.shared >= 0) {
        auto const& tb = tables[static_cast<std::size_t>(tk.shared)];
        t.heads = tb.heads.get();
        t.next = tb.next.get();
        t.mask = tb.mask;
      } else {
        auto const nr = r.size(tk.part);
        if (nr == 0) {
          emit_unmatched<Carry>(in.kind, probe, ns, out);
          continue;
        }
        t.mask = std::bit_ceil(static_cast<std::uint64_t>(nr)) - 1;
        build_chains(build, nr, heads.data(), next.data(), t.mask);
        t.heads = heads.data();
        t.next = next.data();
      }
      probe_chains<Carry>(in.kind, t, probe, ns, out);
    }
  }
}

template <class Key, class Row, class Sink>
void radix_join(join_input<Key> const& in, std::vector<Sink>& sinks,
                radix_join_policy const& policy, radix_join_stats& stats) {
  using carry_t = typename carry_for<Sink, Row>::type;
  using tuple_t = tuple<Key, typename carry_t::payload>;
  static_assert(line_bytes % sizeof(tuple_t) == 0);
  carry_t const carry(sinks);
  stats.tuple_bytes = sizeof(tuple_t);
  radix_bits bits;
  if (policy.bits_pass1 == radix_join_policy::automatic) {
    auto const l2 = l2_cache_bytes();
    bits = choose_radix_bits(in.build_rows, sizeof(tuple_t) + 2 * sizeof(Row),
                             l2 != 0 ? l2 : policy.fallback_l2_bytes, policy);
  } else {
    bits.pass1 = policy.bits_pass1;
    bits.pass2 = policy.bits_pass2 == radix_join_policy::automatic ? 0 : policy.bits_pass2;
  }
  JOINERY_EXPECTS(bits.pass1 >= 0 && bits.pass1 <= 16 && bits.pass2 >= 0 && bits.pass2 <= 16,
                  "radix join: bits per pass must lie in [0, 16]");
  stats.bits_pass1 = bits.pass1;
  stats.bits_pass2 = bits.pass2;

  auto const llc = llc_cache_bytes() != 0 ? llc_cache_bytes() : policy.fallback_llc_bytes;
  bool const nt[2] = {
    policy.non_temporal == radix_join_policy::automatic
      ? static_cast<std::size_t>(in.build_rows) * sizeof(tuple_t) > llc
      : policy.non_temporal != 0,
    policy.non_temporal == radix_join_policy::automatic
      ? static_cast<std::size_t>(in.probe_rows) * sizeof(tuple_t) > llc
      : policy.non_temporal != 0};
  stats.non_temporal = nt[0] || nt[1];

  auto parts = [&] {
    phase_timer t(in.phases, "partition");
    return partition_both<tuple_t>(in, carry, bits, nt, policy, stats);
  }();
  phase_timer t(in.phases, "build_probe");
  join_partitions<carry_t, Row>(in, parts.first, parts.second, sinks, policy, stats);
}

}  // namespace

std::size_t l2_cache_bytes() {
  static std::size_t const bytes = [] {
    auto b = sysfs_cache_bytes(2);
#if defined(_SC_LEVEL2_CACHE_SIZE)
    if (b == 0) { b = sysconf_bytes(_SC_LEVEL2_CACHE_SIZE); }
#endif
    return b;
  }();
  return bytes;
}

std::size_t llc_cache_bytes() {
  static std::size_t const bytes = [] {
    auto b = sysfs_cache_bytes(3);
#if defined(_SC_LEVEL3_CACHE_SIZE)
    if (b == 0) { b = sysconf_bytes(_SC_LEVEL3_CACHE_SIZE); }
#endif
    return b != 0 ? b : l2_cache_bytes();
  }();
  return bytes;
}

radix_bits choose_radix_bits(size_type build_rows, std::size_t bytes_per_build_tuple,
                             std::size_t l2_bytes, radix_join_policy const& policy) {
  auto const budget = std::max(static_cast<double>(l2_bytes) * policy.l2_fill, 1.0);
  auto const need = static_cast<double>(build_rows) * static_cast<double>(bytes_per_build_tuple);
  int total = 0;
  while (total < 2 * policy.max_bits_per_pass &&
         need / static_cast<double>(1ULL << total) > budget) {
    ++total;
  }
  if (total <= policy.max_bits_per_pass) { return {total, 0}; }
  // Two passes, the first taking the odd bit: its fanout sees the whole relation's TLB pressure
  // once, the second runs inside cache-resident partitions.
  return {(total + 1) / 2, total / 2};
}

template <class Key, class Sink>
void radix_hash_join_with(join_input<Key> const& in, std::vector<Sink>& sinks,
                          radix_join_policy const& policy, radix_join_stats* stats) {
  radix_join_stats local;
  auto& st = stats != nullptr ? *stats : local;
  st = {};
  if (in.probe_rows == 0) { return; }
  if (in.build_rows == 0) {
    phase_timer t(in.phases, "build_probe");
    if (in.kind == join_kind::inner || in.kind == join_kind::left_semi) { return; }
    emit_all_unmatched(in, sinks);
    return;
  }
  constexpr auto narrow = size_type{1} << 32;
  if (!policy.wide_row_ids && in.build_rows < narrow && in.probe_rows < narrow) {
    radix_join<Key, std::uint32_t>(in, sinks, policy, st);
  } else {
    radix_join<Key, std::uint64_t>(in, sinks, policy, st);
  }
}

template <class Key, class Sink>
void radix_hash_join(join_input<Key> const& in, std::vector<Sink>& sinks) {
  radix_hash_join_with(in, sinks, radix_join_policy{});
}

JOINERY_CPU_JOIN_INSTANTIATE(radix_hash_join)

#define JOINERY_RADIX_INSTANTIATE_KEY(key)                                                    \
  template void radix_hash_join_with(join_input<key> const&, std::vector<list_sink>&,         \
                                     radix_join_policy const&, radix_join_stats*);            \
  template void radix_hash_join_with(join_input<key> const&, std::vector<checksum_sink>&,     \
                                     radix_join_policy const&, radix_join_stats*);
JOINERY_RADIX_INSTANTIATE_KEY(std::int32_t)
JOINERY_RADIX_INSTANTIATE_KEY(std::int64_t)
JOINERY_RADIX_INSTANTIATE_KEY(std::uint32_t)
JOINERY_RADIX_INSTANTIATE_KEY(std::uint64_t)
#undef JOINERY_RADIX_INSTANTIATE_KEY

}  // namespace joinery::detail::cpu
