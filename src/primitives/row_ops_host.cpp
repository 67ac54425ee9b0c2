// The general key path's row steps on the host: OpenMP loops over host columns.
#include "core/parallel_shares.hpp"
#include "primitives/row_ops.hpp"

#include <omp.h>

#include <parallel/algorithm>

#include <algorithm>
#include <cstring>
#include <vector>

namespace joinery::detail::keys {

namespace {

/// Per-thread counts turned into each thread's first output position (static schedule, so a
/// second loop with the same bounds visits the same rows on the same thread).
std::vector<size_type> thread_offsets(std::vector<size_type> const& counts) {
  std::vector<size_type> first(counts.size() + 1, 0);
  for (std::size_t t = 0; t < counts.size(); ++t) { first[t + 1] = first[t] + counts[t]; }
  return first;
}

template <class T>
void fill_values(column& out, size_type n, T value) {
  auto* d = static_cast<T*>(out.data());
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < n; ++i) { d[i] = value; }
}

class host_row_ops final : public row_ops {
 public:
  [[nodiscard]] memory_space space() const override { return memory_space::host; }

  column_range scan_range(key_column const& c, size_type rows, bool nans_equal) override {
    column_range total;
    int const threads = omp_get_max_threads();
    std::vector<column_range> part(static_cast<std::size_t>(threads));
    for_each_share(rows, threads, [&](size_type begin, size_type end, int t) {
      column_range r;
      for (size_type i = begin; i < end; ++i) {
        if (!valid_at(c, i)) {
          r.has_null = true;
          continue;
        }
        if (!nans_equal && is_nan_at(c, i)) { continue; }
        auto const v = ordered_value(c, i);
        r.min = std::min(r.min, v);
        r.max = std::max(r.max, v);
      }
      part[static_cast<std::size_t>(t)] = r;
    });
    for (auto const& r : part) {
      total.min = std::min(total.min, r.min);
      total.max = std::max(total.max, r.max);
      total.has_null = total.has_null || r.has_null;
    }
    return total;
  }

  encoded_keys encode(key_layout const& k, size_type rows, type_id key_type) override {
    encoded_keys out;
    bool const may_skip = may_hold_unmatchable_rows(k);
    bool const wide = key_type == type_id::uint64;
    if (!may_skip) {
      out.keys = column(key_type, rows);
      write_keys(k, out.keys, nullptr, rows, wide);
      return out;
    }
    out.matchable = column(type_id::uint8, rows);
    auto* flag = out.matchable.data_as<std::uint8_t>();
    int const threads = omp_get_max_threads();
    std::vector<size_type> counts(static_cast<std::size_t>(threads), 0);
    for_each_share(rows, threads, [&](size_type begin, size_type end, int t) {
      size_type n = 0;
      for (size_type i = begin; i < end; ++i) {
        flag[i] = matchable(k, i) ? 1 : 0;
        n += flag[i];
      }
      counts[static_cast<std::size_t>(t)] = n;
    });
    auto const first = thread_offsets(counts);
    if (first.back() == rows) {
      out.matchable = column();
      out.keys = column(key_type, rows);
      write_keys(k, out.keys, nullptr, rows, wide);
      return out;
    }
    out.all_rows = false;
    out.row_ids = column(type_id::int64, first.back());
    auto* ids = out.row_ids.data_as<std::int64_t>();
    for_each_share(rows, threads, [&](size_type begin, size_type end, int t) {
      auto pos = first[static_cast<std::size_t>(t)];
      for (size_type i = begin; i < end; ++i) {
        if (flag[i] != 0) { ids[pos++] = i; }
      }
    });
    out.keys = column(key_type, first.back());
    write_keys(k, out.keys, ids, first.back(), wide);
    return out;
  }

  column remap(column_view const& ids, column_view const& subset) override {
    auto const n = ids.size();
    column out(type_id::int64, n);
    auto const* in = ids.data_as<std::int64_t>();
    auto const* s = subset.data_as<std::int64_t>();
    auto* o = out.data_as<std::int64_t>();
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) { o[i] = in[i] < 0 ? -1 : s[in[i]]; }
    return out;
  }

  void keep_equal_pairs(key_layout const& build, key_layout const& probe, column& build_rows,
                        column& probe_rows) override {
    auto const n = build_rows.size();
    auto* b = build_rows.data_as<std::int64_t>();
    auto* p = probe_rows.data_as<std::int64_t>();
    std::vector<std::uint8_t> keep(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) { keep[i] = keys_equal(build, b[i], probe, p[i]) ? 1 : 0; }
    size_type w = 0;
    for (size_type i = 0; i < n; ++i) {
      if (keep[i] != 0) {
        b[w] = b[i];
        p[w] = p[i];
        ++w;
      }
    }
    if (w == n) { return; }
    build_rows = shrink(build_rows, w);
    probe_rows = shrink(probe_rows, w);
  }

  column flags_of(column_view const& ids, size_type rows) override {
    column out(type_id::uint8, rows);
    auto* f = out.data_as<std::uint8_t>();
    std::memset(f, 0, static_cast<std::size_t>(rows));
    auto const* in = ids.data_as<std::int64_t>();
    auto const n = ids.size();
    // Racing stores of the same value 1 to a byte: benign, but atomic for the memory model.
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) {
      if (in[i] >= 0) {
#pragma omp atomic write
        f[in[i]] = 1;
      }
    }
    return out;
  }

  column select(column_view const& flags, std::uint8_t value) override {
    auto const rows = flags.size();
    auto const* f = flags.data_as<std::uint8_t>();
    int const threads = omp_get_max_threads();
    std::vector<size_type> counts(static_cast<std::size_t>(threads), 0);
    for_each_share(rows, threads, [&](size_type begin, size_type end, int t) {
      size_type n = 0;
      for (size_type i = begin; i < end; ++i) { n += f[i] == value ? 1 : 0; }
      counts[static_cast<std::size_t>(t)] = n;
    });
    auto const first = thread_offsets(counts);
    column out(type_id::int64, first.back());
    auto* o = out.data_as<std::int64_t>();
    for_each_share(rows, threads, [&](size_type begin, size_type end, int t) {
      auto pos = first[static_cast<std::size_t>(t)];
      for (size_type i = begin; i < end; ++i) {
        if (f[i] == value) { o[pos++] = i; }
      }
    });
    return out;
  }

  column concat(column_view const& a, column_view const& b) override {
    column out(type_id::int64, a.size() + b.size());
    auto* o = out.data_as<std::int64_t>();
    if (!a.empty()) { std::memcpy(o, a.data(), static_cast<std::size_t>(a.size()) * 8); }
    if (!b.empty()) { std::memcpy(o + a.size(), b.data(), static_cast<std::size_t>(b.size()) * 8); }
    return out;
  }

  column constant(size_type rows, std::int64_t value) override {
    column out(type_id::int64, rows);
    fill_values<std::int64_t>(out, rows, value);
    return out;
  }

  column gather(column_view const& a, column_view const& ids_a, column_view const& b,
                column_view const& ids_b) override {
    auto const n = ids_a.size();
    bool const two = ids_b.size() == n && !b.empty();
    column out(a.type(), n);
    auto const* ia = ids_a.data_as<std::int64_t>();
    auto const* ib = two ? ids_b.data_as<std::int64_t>() : nullptr;
    std::vector<std::uint8_t> valid(static_cast<std::size_t>(n));
    size_type nulls = 0;
    dispatch_type(a.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto const* sa = static_cast<T const*>(a.data());
      auto const* sb = static_cast<T const*>(b.data());
      auto* d = static_cast<T*>(out.data());
#pragma omp parallel for schedule(static) reduction(+ : nulls)
      for (size_type i = 0; i < n; ++i) {
        auto const ra = ia[i];
        if (ra >= 0 && a.is_valid(ra)) {
          d[i] = sa[ra];
          valid[i] = 1;
        } else if (two && ib[i] >= 0 && b.is_valid(ib[i])) {
          d[i] = sb[ib[i]];
          valid[i] = 1;
        } else {
          d[i] = T{};
          valid[i] = 0;
          ++nulls;
        }
      }
    });
    if (nulls > 0) {
      auto* mask = out.make_nullable();
      auto const bytes = static_cast<size_type>(null_mask_bytes(n));
#pragma omp parallel for schedule(static)
      for (size_type byte = 0; byte < bytes; ++byte) {
        std::uint8_t m = 0;
        for (size_type bit = 0; bit < 8 && byte * 8 + bit < n; ++bit) {
          m = static_cast<std::uint8_t>(m | (valid[byte * 8 + bit] << bit));
        }
        mask[byte] = m;
      }
      out.set_null_count(nulls);
    }
    return out;
  }

  std::uint64_t gathered_checksum(column_view const& a, column_view const& ids_a,
                                  column_view const& b, column_view const& ids_b) override {
    auto const n = ids_a.size();
    bool const two = ids_b.size() == n && !b.empty();
    auto const ka = key_column_of(a);
    auto const kb = two ? key_column_of(b) : key_column{};
    auto const* ia = ids_a.data_as<std::int64_t>();
    auto const* ib = two ? ids_b.data_as<std::int64_t>() : nullptr;
    std::uint64_t sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
    for (size_type i = 0; i < n; ++i) { sum += coalesced_bits(ka, ia, kb, ib, i); }
    return sum;
  }

  column fill_nulls(column_view const& c, type_id out_type, std::uint64_t fill_bits) override {
    auto const n = c.size();
    column out(out_type, n);
    auto const k = key_column_of(c);
    with_unsigned_of_width(size_of(out_type), [&](auto tag) {
      using U = typename decltype(tag)::type;
      auto* d = static_cast<U*>(out.data());
#pragma omp parallel for schedule(static)
      for (size_type i = 0; i < n; ++i) {
        d[i] = static_cast<U>(valid_at(k, i) ? load_bits(k, i) : fill_bits);
      }
    });
    return out;
  }

  column validity_as_int32(column_view const& c) override {
    auto const n = c.size();
    column out(type_id::int32, n);
    auto const k = key_column_of(c);
    auto* d = out.data_as<std::int32_t>();
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) { d[i] = valid_at(k, i) ? 1 : 0; }
    return out;
  }

  column dense_codes(key_column const& c, size_type rows, column& dictionary) override {
    std::vector<std::uint64_t> values;
    values.reserve(static_cast<std::size_t>(rows));
    for (size_type i = 0; i < rows; ++i) {
      if (valid_at(c, i)) { values.push_back(ordered_value(c, i)); }
    }
    __gnu_parallel::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    auto const distinct = static_cast<size_type>(values.size());
    dictionary = column(type_id::uint64, distinct);
    if (distinct > 0) {
      std::memcpy(dictionary.data(), values.data(), values.size() * sizeof(std::uint64_t));
    }
    bool const wide = distinct >= (size_type{1} << 32);
    column out(wide ? type_id::uint64 : type_id::uint32, rows);
    with_unsigned_of_width(wide ? 8 : 4, [&](auto tag) {
      using U = typename decltype(tag)::type;
      auto* d = static_cast<U*>(out.data());
#pragma omp parallel for schedule(static)
      for (size_type i = 0; i < rows; ++i) {
        d[i] = static_cast<U>(
          valid_at(c, i) ? std::lower_bound(values.begin(), values.end(), ordered_value(c, i)) -
                             values.begin()
                         : distinct);
      }
    });
    return out;
  }

  column negate(column_view const& keys) override {
    auto const n = keys.size();
    column out(type_id::uint64, n);
    auto* d = out.data_as<std::uint64_t>();
    bool const wide = keys.type() == type_id::uint64;
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) {
      d[i] = std::uint64_t{0} - (wide ? keys.data_as<std::uint64_t>()[i]
                                      : std::uint64_t{keys.data_as<std::uint32_t>()[i]});
    }
    return out;
  }

  column narrow(column_view const& ids) override {
    column out(type_id::int32, ids.size());
    auto const* in = ids.data_as<std::int64_t>();
    auto* o = out.data_as<std::int32_t>();
    auto const n = ids.size();
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) { o[i] = static_cast<std::int32_t>(in[i]); }
    return out;
  }

  void synchronize() override {}

 private:
  static void write_keys(key_layout const& k, column& keys, std::int64_t const* ids, size_type n,
                         bool wide) {
    if (wide) {
      auto* d = keys.data_as<std::uint64_t>();
#pragma omp parallel for schedule(static)
      for (size_type i = 0; i < n; ++i) { d[i] = encode_key(k, ids ? ids[i] : i); }
    } else {
      auto* d = keys.data_as<std::uint32_t>();
#pragma omp parallel for schedule(static)
      for (size_type i = 0; i < n; ++i) {
        d[i] = static_cast<std::uint32_t>(encode_key(k, ids ? ids[i] : i));
      }
    }
  }

  static column shrink(column const& c, size_type rows) {
    column out(type_id::int64, rows);
    if (rows > 0) {
      std::memcpy(out.data(), c.view().data(), static_cast<std::size_t>(rows) * 8);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<row_ops> make_host_row_ops() { return std::make_unique<host_row_ops>(); }

#ifndef JOINERY_HAS_CUDA
std::unique_ptr<row_ops> make_device_row_ops(stream_ref) {
  JOINERY_FAIL("the general key path on the GPU needs joinery built with CUDA");
}
#endif

}  // namespace joinery::detail::keys
