// Host string operations: dictionary encoding, gathers and hashes (OpenMP).
#include "primitives/string_ops.hpp"

#include "core/hash.hpp"
#include "core/parallel_shares.hpp"

#include <omp.h>
#include <parallel/algorithm>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <string>

namespace joinery::detail::strings {

namespace {

constexpr std::int64_t int32_offset_max = std::numeric_limits<std::int32_t>::max();

/// Leaves elements uninitialised, so that a large scratch array is first touched (and its pages
/// faulted in) by the parallel loop that writes it rather than zeroed by one thread.
template <class T>
struct default_init_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = default_init_allocator<U>;
  };
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
/// A scratch array: every element must be written before it is read.
template <class T>
using scratch = std::vector<T, default_init_allocator<T>>;

/// Partitions of the distinct pass: enough for every thread to take several, each small enough
/// that its table stays in cache for typical inputs.
int partition_bits_for(size_type rows) {
  auto const per_partition = size_type{1} << 14;
  auto const wanted = std::max<size_type>(1, rows / per_partition);
  return std::clamp(static_cast<int>(std::bit_width(static_cast<std::uint64_t>(wanted))), 4, 12);
}

bool valid_at(std::uint8_t const* mask, size_type i) {
  return mask == nullptr || ((mask[i >> 3] >> (i & 7)) & 1u) != 0;
}

/// A copy of `src`'s mask (or none) into `out`.
void copy_mask(column_view const& src, column& out) {
  if (!src.nullable()) { return; }
  std::memcpy(out.make_nullable(), src.null_mask(), null_mask_bytes(src.size()));
  out.set_null_count(src.null_count());
}

void set_offset(column& c, size_type i, std::int64_t v) {
  if (c.type() == type_id::string) {
    static_cast<std::int32_t*>(c.data())[i] = static_cast<std::int32_t>(v);
  } else {
    static_cast<std::int64_t*>(c.data())[i] = v;
  }
}

/// A string column of `lengths.size() - 1` rows whose row i holds row_string(i), offsets from the
/// exclusive prefix sums in `lengths` (which it overwrites); `type` widened to large_string past
/// 2^31 - 1 characters.
/// Exclusive prefix sums of `v` in place (its last entry becomes the total), in one share per
/// thread: share sums, their scan, then each share's own scan.
std::int64_t exclusive_scan(scratch<std::int64_t>& v) {
  auto const n = static_cast<size_type>(v.size());
  int const shares = std::max(1, omp_get_max_threads());
  std::vector<std::int64_t> share_sum(static_cast<std::size_t>(shares) + 1, 0);
  for_each_share(n, shares, [&](size_type lo, size_type hi, int t) {
    std::int64_t sum = 0;
    for (auto i = lo; i < hi; ++i) { sum += v[static_cast<std::size_t>(i)]; }
    share_sum[static_cast<std::size_t>(t) + 1] = sum;
  });
  for (int t = 0; t < shares; ++t) {
    share_sum[static_cast<std::size_t>(t) + 1] += share_sum[static_cast<std::size_t>(t)];
  }
  for_each_share(n, shares, [&](size_type lo, size_type hi, int t) {
    std::int64_t at = share_sum[static_cast<std::size_t>(t)];
    for (auto i = lo; i < hi; ++i) {
      auto const x = v[static_cast<std::size_t>(i)];
      v[static_cast<std::size_t>(i)] = at;
      at += x;
    }
  });
  return share_sum.back();
}

/// Slots a partition's distinct-string table starts with (it doubles as strings are found).
constexpr std::size_t initial_slots = std::size_t{1} << 12;

/// Rows ahead whose characters a gather asks the memory system for (random reads overlap).
constexpr size_type prefetch_distance = 16;


template <class RowString>
column assemble(type_id type, scratch<std::int64_t>& lengths, RowString const& row_string) {
  auto const n = static_cast<size_type>(lengths.size()) - 1;
  auto const total = exclusive_scan(lengths);
  if (total > int32_offset_max) { type = type_id::large_string; }
  auto out = column::strings(type, n, static_cast<std::size_t>(total));
  char* chars = out.chars();
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i <= n; ++i) {
    set_offset(out, i, lengths[static_cast<std::size_t>(i)]);
    if (i < n) {
      auto const s = row_string(i);
      if (!s.empty()) { std::memcpy(chars + lengths[static_cast<std::size_t>(i)], s.data(), s.size()); }
    }
  }
  return out;
}

}  // namespace

std::uint64_t hash_bytes(std::string_view s) noexcept {
  std::uint64_t h = mix64(0x9e3779b97f4a7c15ULL ^ s.size());
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = mix64(h ^ w) + 0x9e3779b97f4a7c15ULL;
  }
  if (i < s.size()) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = mix64(h ^ w ^ 0xff);
  }
  return h;
}

void expect_host(column_view const& c, std::string_view what) {
  JOINERY_EXPECTS(host_accessible(c.space()),
                  std::string(what) + " is a string column in device memory; string columns "
                                      "are read on the host (pass host or pinned memory)");
}

namespace {

/// encode(), and with `probe` also the codes of probe's rows looked up in the dictionary (the
/// dictionary's size where absent); `with_values` false leaves `values` empty.
dictionary encode_rows(std::vector<column_view> const& columns, code_order order_wanted,
                       column_view const* probe, column* probe_codes, bool with_values) {
  // Every valid row of every column, numbered through the columns one after the other.
  std::vector<size_type> first_row(columns.size() + 1, 0);
  for (std::size_t c = 0; c < columns.size(); ++c) {
    JOINERY_EXPECTS(is_string(columns[c].type()), "dictionary encoding needs string columns");
    expect_host(columns[c], "a key");
    first_row[c + 1] = first_row[c] + columns[c].size();
  }
  auto const rows = first_row.back();
  auto const column_of = [&](size_type g) {
    return static_cast<std::size_t>(
      std::upper_bound(first_row.begin(), first_row.end(), g) - first_row.begin() - 1);
  };
  auto const string_of = [&](size_type g) {
    auto const c = column_of(g);
    return columns[c].string_at(g - first_row[c]);
  };

  scratch<std::uint64_t> hash(static_cast<std::size_t>(rows));
  for (std::size_t c = 0; c < columns.size(); ++c) {
    auto const& col = columns[c];
    auto const base = first_row[c];
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < col.size(); ++i) {
      hash[static_cast<std::size_t>(base + i)] = hash_bytes(col.string_at(i));
    }
  }
  auto const valid = [&](size_type g) {
    auto const c = column_of(g);
    return valid_at(columns[c].null_count() > 0 ? columns[c].null_mask() : nullptr,
                    g - first_row[c]);
  };

  // Partition the valid rows by the hash's top bits (a counting pass per thread's range, then a
  // scatter), so that each partition's distinct strings are found by one thread alone.
  int const bits = partition_bits_for(rows);
  auto const parts = std::size_t{1} << bits;
  auto const part_of = [&](size_type g) {
    return static_cast<std::size_t>(hash[static_cast<std::size_t>(g)] >> (64 - bits));
  };
  int const threads = std::max(1, omp_get_max_threads());
  std::vector<std::vector<size_type>> counts(static_cast<std::size_t>(threads),
                                             std::vector<size_type>(parts + 1, 0));
  for_each_share(rows, threads, [&](size_type lo, size_type hi, int t) {
    auto& cnt = counts[static_cast<std::size_t>(t)];
    for (size_type g = lo; g < hi; ++g) {
      if (valid(g)) { ++cnt[part_of(g)]; }
    }
  });
  std::vector<size_type> part_start(parts + 1, 0);
  {
    size_type at = 0;
    for (std::size_t p = 0; p < parts; ++p) {
      part_start[p] = at;
      for (int t = 0; t < threads; ++t) {
        auto const n = counts[static_cast<std::size_t>(t)][p];
        counts[static_cast<std::size_t>(t)][p] = at;
        at += n;
      }
    }
    part_start[parts] = at;
  }
  // A row and its hash, so that the distinct pass reads the hashes in order.
  struct row_ref {
    size_type row;
    std::uint64_t hash;
  };
  scratch<row_ref> refs(static_cast<std::size_t>(part_start[parts]));
  for_each_share(rows, threads, [&](size_type lo, size_type hi, int t) {
    auto& cursor = counts[static_cast<std::size_t>(t)];
    for (size_type g = lo; g < hi; ++g) {
      if (valid(g)) {
        refs[static_cast<std::size_t>(cursor[part_of(g)]++)] = {g, hash[static_cast<std::size_t>(g)]};
      }
    }
  });
  scratch<std::uint64_t>().swap(hash);
  // The random reads of a row's offset, then of its characters, asked for ahead of its turn.
  auto const prefetch_row = [&](std::size_t k, std::size_t end) {
    auto const ahead = static_cast<std::size_t>(prefetch_distance);
    if (k + 2 * ahead < end) {
      auto const g = refs[k + 2 * ahead].row;
      auto const c = column_of(g);
      __builtin_prefetch(static_cast<char const*>(columns[c].data()) +
                         (g - first_row[c]) * static_cast<size_type>(size_of(columns[c].type())));
    }
    if (k + ahead < end) {
      __builtin_prefetch(string_of(refs[k + ahead].row).data());
    }
  };

  // Distinct strings per partition (open addressing over the partition's rows); local ids in
  // `local` per ref, the first row of each distinct string in `distinct`.
  scratch<std::uint32_t> local(refs.size());
  std::vector<std::vector<size_type>> distinct(parts);
  std::vector<std::vector<std::uint32_t>> tables(parts);       // kept for probe's lookups
  std::vector<std::vector<std::uint64_t>> distinct_hash(parts);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t p = 0; p < parts; ++p) {
    auto const lo = part_start[p], hi = part_start[p + 1];
    if (lo == hi) { continue; }
    // The table grows with the distinct strings found (kept at most half full), not with the
    // partition's rows: a few keys over billions of rows keep a small table.
    auto& table = tables[p];
    table.assign(std::min<std::size_t>(std::bit_ceil(static_cast<std::uint64_t>(2 * (hi - lo))),
                                       initial_slots),
                 ~std::uint32_t{0});  // local id, or empty
    auto& mine = distinct[p];
    auto& mine_hash = distinct_hash[p];
    auto grow = [&] {
      table.assign(table.size() * 2, ~std::uint32_t{0});
      auto const mask = table.size() - 1;
      for (std::size_t e = 0; e < mine_hash.size(); ++e) {
        auto slot = mine_hash[e] & mask;
        while (table[slot] != ~std::uint32_t{0}) { slot = (slot + 1) & mask; }
        table[slot] = static_cast<std::uint32_t>(e);
      }
    };
    for (auto k = lo; k < hi; ++k) {
      prefetch_row(static_cast<std::size_t>(k), static_cast<std::size_t>(hi));
      auto const [g, h] = refs[static_cast<std::size_t>(k)];
      auto const s = string_of(g);
      auto const mask = table.size() - 1;
      for (auto slot = h & mask;; slot = (slot + 1) & mask) {
        auto& e = table[slot];
        if (e == ~std::uint32_t{0}) {
          e = static_cast<std::uint32_t>(mine.size());
          mine.push_back(g);
          mine_hash.push_back(h);
          local[static_cast<std::size_t>(k)] = e;
          if (2 * mine.size() > table.size()) { grow(); }
          break;
        }
        if (mine_hash[e] == h && string_of(mine[e]) == s) {
          local[static_cast<std::size_t>(k)] = e;
          break;
        }
      }
    }
  }

  // Ranks of the distinct strings in byte order.
  std::vector<size_type> part_base(parts + 1, 0);
  for (std::size_t p = 0; p < parts; ++p) {
    part_base[p + 1] = part_base[p] + static_cast<size_type>(distinct[p].size());
  }
  auto const count = part_base[parts];
  JOINERY_EXPECTS(count <= static_cast<size_type>(std::numeric_limits<std::uint32_t>::max()),
                  "string keys with " + std::to_string(count) +
                    " distinct values do not fit 32-bit dictionary codes");
  scratch<size_type> first_of(static_cast<std::size_t>(count));  // distinct id -> a row
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t p = 0; p < parts; ++p) {
    std::copy(distinct[p].begin(), distinct[p].end(),
              first_of.begin() + static_cast<std::ptrdiff_t>(part_base[p]));
  }
  scratch<size_type> order(static_cast<std::size_t>(count));  // rank -> distinct id
#pragma omp parallel for schedule(static)
  for (size_type d = 0; d < count; ++d) { order[static_cast<std::size_t>(d)] = d; }
  if (order_wanted == code_order::byte_order) {
    __gnu_parallel::sort(order.begin(), order.end(), [&](size_type a, size_type b) {
      return string_of(first_of[static_cast<std::size_t>(a)]) <
             string_of(first_of[static_cast<std::size_t>(b)]);
    });
  }
  scratch<std::uint32_t> rank(static_cast<std::size_t>(count));
#pragma omp parallel for schedule(static)
  for (size_type r = 0; r < count; ++r) {
    rank[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])] =
      static_cast<std::uint32_t>(r);
  }

  dictionary out;
  for (auto const& col : columns) {
    out.codes.emplace_back(type_id::uint32, col.size());
    auto* codes = out.codes.back().data_as<std::uint32_t>();
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < col.size(); ++i) { codes[i] = 0; }  // NULL rows keep 0
    copy_mask(col, out.codes.back());
  }
  std::vector<std::uint32_t*> code_of(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    code_of[c] = out.codes[c].data_as<std::uint32_t>();
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t p = 0; p < parts; ++p) {
    for (auto k = part_start[p]; k < part_start[p + 1]; ++k) {
      auto const g = refs[static_cast<std::size_t>(k)].row;
      auto const c = column_of(g);
      code_of[c][g - first_row[c]] =
        rank[static_cast<std::size_t>(part_base[p] + local[static_cast<std::size_t>(k)])];
    }
  }

  if (probe != nullptr) {
    // Each probe row in order: its hash's partition table, then the string of the slot's
    // distinct value; the table slot of a row a few ahead is asked for early.
    auto const n = probe->size();
    *probe_codes = column(type_id::uint32, n);
    auto* codes = probe_codes->data_as<std::uint32_t>();
    scratch<std::uint64_t> probe_hash(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) {
      probe_hash[static_cast<std::size_t>(i)] = hash_bytes(probe->string_at(i));
    }
    // Each distinct string's hash, characters and length in one place: a probe row's match
    // costs a table slot, an entry and the characters, each asked for ahead of the row (the
    // slot 3 distances ahead, the entry 2, the characters 1).
    struct entry {
      std::uint64_t hash;
      char const* chars;
      std::size_t length;
    };
    scratch<entry> entries(static_cast<std::size_t>(count));
#pragma omp parallel for schedule(dynamic, 16)
    for (std::size_t p = 0; p < parts; ++p) {
      for (std::size_t e = 0; e < distinct[p].size(); ++e) {
        auto const str = string_of(distinct[p][e]);
        entries[static_cast<std::size_t>(part_base[p]) + e] = {distinct_hash[p][e], str.data(),
                                                               str.size()};
      }
    }
    auto const slot_of = [&](size_type i) -> std::uint32_t const* {
      auto const h = probe_hash[static_cast<std::size_t>(i)];
      auto const& t = tables[static_cast<std::size_t>(h >> (64 - bits))];
      return t.empty() ? nullptr : t.data() + (h & (t.size() - 1));
    };
    auto const entry_of = [&](size_type i) -> entry const* {
      auto const* slot = slot_of(i);
      if (slot == nullptr || *slot == ~std::uint32_t{0}) { return nullptr; }
      auto const p = static_cast<std::size_t>(probe_hash[static_cast<std::size_t>(i)] >> (64 - bits));
      return &entries[static_cast<std::size_t>(part_base[p]) + *slot];
    };
    auto const d = prefetch_distance;
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) {
      if (i + 3 * d < n) {
        if (auto const* slot = slot_of(i + 3 * d)) { __builtin_prefetch(slot); }
      }
      if (i + 2 * d < n) {
        if (auto const* e = entry_of(i + 2 * d)) { __builtin_prefetch(e); }
      }
      if (i + d < n) {
        if (auto const* e = entry_of(i + d)) { __builtin_prefetch(e->chars); }
      }
      auto code = static_cast<std::uint32_t>(count);
      if (probe->is_valid(i)) {
        auto const h = probe_hash[static_cast<std::size_t>(i)];
        auto const p = static_cast<std::size_t>(h >> (64 - bits));
        auto const& table = tables[p];
        if (!table.empty()) {
          auto const str = probe->string_at(i);
          auto const mask = table.size() - 1;
          for (auto slot = h & mask;; slot = (slot + 1) & mask) {
            auto const e = table[slot];
            if (e == ~std::uint32_t{0}) { break; }
            auto const& ent = entries[static_cast<std::size_t>(part_base[p]) + e];
            if (ent.hash == h && std::string_view(ent.chars, ent.length) == str) {
              code = rank[static_cast<std::size_t>(part_base[p] + e)];
              break;
            }
          }
        }
      }
      codes[i] = code;
    }
    copy_mask(*probe, *probe_codes);
  }
  if (!with_values) { return out; }

  auto const string_at_rank = [&](size_type r) {
    return string_of(first_of[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])]);
  };
  scratch<std::int64_t> lengths(static_cast<std::size_t>(count) + 1);
  lengths[static_cast<std::size_t>(count)] = 0;
#pragma omp parallel for schedule(static)
  for (size_type r = 0; r < count; ++r) {
    lengths[static_cast<std::size_t>(r)] =
      static_cast<std::int64_t>(string_at_rank(r).size());
  }
  bool const any_large = std::any_of(columns.begin(), columns.end(), [](auto const& c) {
    return c.type() == type_id::large_string;
  });
  out.values = assemble(any_large ? type_id::large_string : type_id::string, lengths,
                        string_at_rank);
  return out;
}

}  // namespace

dictionary encode(std::vector<column_view> const& columns, code_order order) {
  return encode_rows(columns, order, nullptr, nullptr, true);
}

looked_up encode_and_look_up(column_view const& build, column_view const& probe) {
  JOINERY_EXPECTS(is_string(probe.type()), "dictionary lookups need string columns");
  expect_host(probe, "a key");
  looked_up out;
  auto d = encode_rows({build}, code_order::any, &probe, &out.probe_codes, false);
  out.build_codes = std::move(d.codes[0]);
  return out;
}

namespace {

/// Row ids as int64 (-1 where `ids` is NULL or negative, or where `src` is NULL at the id);
/// nothing when `ids` is empty.
void rows_of(column_view const& src, column_view const& ids, scratch<std::int64_t>& row) {
  if (ids.size() == 0) {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < row.size(); ++i) { row[i] = -1; }
    return;
  }
  JOINERY_EXPECTS(host_accessible(ids.space()), "string gathers take host row ids");
  expect_host(src, "a gathered column");
  dispatch_type(ids.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      JOINERY_FAIL("string gathers take integer row ids");
    } else {
      auto const* in = static_cast<T const*>(ids.data());
      auto const* mask = ids.null_count() > 0 ? ids.null_mask() : nullptr;
      auto const* src_mask = src.null_count() > 0 ? src.null_mask() : nullptr;
      auto const n = ids.size();
#pragma omp parallel for schedule(static)
      for (size_type i = 0; i < n; ++i) {
        auto const r = valid_at(mask, i) ? static_cast<std::int64_t>(in[i]) : -1;
        row[static_cast<std::size_t>(i)] = r >= 0 && valid_at(src_mask, r) ? r : -1;
      }
    }
  });
}

}  // namespace

column coalesce(column_view const& a, column_view const& ids_a, column_view const& b,
                column_view const& ids_b) {
  auto const n = std::max(ids_a.size(), ids_b.size());
  JOINERY_EXPECTS((ids_a.size() == 0 || ids_a.size() == n) && (ids_b.size() == 0 || ids_b.size() == n),
                  "a string coalesce takes row ids of one length");
  scratch<std::int64_t> row_a(static_cast<std::size_t>(n)), row_b;
  rows_of(a, ids_a, row_a);
  if (ids_b.size() > 0) {
    row_b.resize(static_cast<std::size_t>(n));
    rows_of(b, ids_b, row_b);
  }
  // Per row: the source (0: a, 1: b, -1: NULL) and its offset there, then its length; the
  // random reads of the offsets and then of the characters are asked for a few rows ahead.
  scratch<std::int8_t> from(static_cast<std::size_t>(n));
  scratch<std::int64_t> begin(static_cast<std::size_t>(n));
  scratch<std::int64_t> lengths(static_cast<std::size_t>(n) + 1);
  lengths[static_cast<std::size_t>(n)] = 0;
  auto const source_row = [&](size_type i) -> std::pair<int, std::int64_t> {
    auto const ra = row_a[static_cast<std::size_t>(i)];
    if (ra >= 0) { return {0, ra}; }
    if (!row_b.empty() && row_b[static_cast<std::size_t>(i)] >= 0) {
      return {1, row_b[static_cast<std::size_t>(i)]};
    }
    return {-1, -1};
  };
  column_view const* sources[2] = {&a, &b};
  size_type nulls = 0;
#pragma omp parallel for schedule(static) reduction(+ : nulls)
  for (size_type i = 0; i < n; ++i) {
    if (i + prefetch_distance < n) {
      auto const [s, r] = source_row(i + prefetch_distance);
      if (s >= 0) {
        __builtin_prefetch(static_cast<char const*>(sources[s]->data()) +
                           r * static_cast<std::int64_t>(size_of(sources[s]->type())));
      }
    }
    auto const [s, r] = source_row(i);
    if (s < 0) {
      from[static_cast<std::size_t>(i)] = -1;
      begin[static_cast<std::size_t>(i)] = 0;
      lengths[static_cast<std::size_t>(i)] = 0;
      ++nulls;
      continue;
    }
    auto const& src = *sources[s];
    from[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(s);
    begin[static_cast<std::size_t>(i)] = src.offset(r);
    lengths[static_cast<std::size_t>(i)] = src.offset(r + 1) - begin[static_cast<std::size_t>(i)];
  }
  bool const large = a.type() == type_id::large_string ||
                     (ids_b.size() > 0 && b.type() == type_id::large_string);
  auto out = assemble(large ? type_id::large_string : type_id::string, lengths, [&](size_type i) {
    if (i + prefetch_distance < n && from[static_cast<std::size_t>(i + prefetch_distance)] >= 0) {
      __builtin_prefetch(sources[from[static_cast<std::size_t>(i + prefetch_distance)]]->chars() +
                         begin[static_cast<std::size_t>(i + prefetch_distance)]);
    }
    auto const s = from[static_cast<std::size_t>(i)];
    return s < 0 ? std::string_view{}
                 : std::string_view(sources[s]->chars() + begin[static_cast<std::size_t>(i)],
                                    static_cast<std::size_t>(
                                      lengths[static_cast<std::size_t>(i) + 1] -
                                      lengths[static_cast<std::size_t>(i)]));
  });
  if (nulls > 0) {
    auto* mask = out.make_nullable();
#pragma omp parallel for schedule(static)
    for (size_type byte = 0; byte < static_cast<size_type>(null_mask_bytes(n)); ++byte) {
      std::uint8_t bits = 0;
      for (size_type i = byte * 8; i < std::min(n, byte * 8 + 8); ++i) {
        if (from[static_cast<std::size_t>(i)] >= 0) { bits |= static_cast<std::uint8_t>(1u << (i & 7)); }
      }
      mask[byte] = bits;
    }
    out.set_null_count(nulls);
  }
  return out;
}

column gather(column_view const& src, column_view const& ids) {
  expect_host(src, "a gathered column");
  return coalesce(src, ids, column_view(), column_view());
}

column hashes(column_view const& src) {
  expect_host(src, "a hashed column");
  column out(type_id::uint64, src.size());
  auto* h = out.data_as<std::uint64_t>();
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < src.size(); ++i) {
    h[i] = src.is_valid(i) ? hash_bytes(src.string_at(i)) : 0;
  }
  copy_mask(src, out);
  return out;
}

column row_ordinals(column_view const& src) {
  column out(type_id::int64, src.size());
  auto* o = out.data_as<std::int64_t>();
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < src.size(); ++i) { o[i] = i; }
  copy_mask(src, out);
  return out;
}

std::uint64_t checksum(column_view const& src) {
  expect_host(src, "a string column");
  std::uint64_t sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
  for (size_type i = 0; i < src.size(); ++i) {
    if (src.is_valid(i)) { sum += hash_bytes(src.string_at(i)); }
  }
  return sum;
}

}  // namespace joinery::detail::strings
