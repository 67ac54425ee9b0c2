// Workload generators: primary keys (a shuffled dense range, optionally partly unmatched),
// foreign keys (uniform or Zipf over a domain), hot keys, random payloads. Every value is a pure
// function of (seed, column, row) -- see random.hpp -- and each column is one parallel loop.
#include <joinery/gen.hpp>

#include "gen/random.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace joinery::gen {

namespace {

using i128 = __int128;

// Stream ids: one per independent use of randomness.
enum : std::uint64_t {
  key_stream = 0,
  key_perm_stream = 1,
  hot_perm_stream = 2,
  payload_stream_base = 16,
};

std::string to_string_i128(i128 v) {
  if (v == 0) { return "0"; }
  bool const negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : v;
  std::string s;
  while (u != 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return negative ? "-" + s : s;
}

struct key_range {
  i128 lo;
  i128 hi;
};

key_range range_of(type_id t) {
  switch (t) {
    case type_id::int32: return {INT32_MIN, INT32_MAX};
    case type_id::int64: return {INT64_MIN, INT64_MAX};
    case type_id::uint32: return {0, UINT32_MAX};
    default: return {0, static_cast<i128>(UINT64_MAX)};
  }
}

// round(fraction * rows), clamped to [0, rows] without overflowing near 2^63.
std::uint64_t count_of(double fraction, size_type rows) {
  double const c = std::round(fraction * static_cast<double>(rows));
  if (c <= 0) { return 0; }
  if (c >= static_cast<double>(rows)) { return static_cast<std::uint64_t>(rows); }
  return static_cast<std::uint64_t>(c);
}

bool is_fraction(double x) { return x >= 0.0 && x <= 1.0; }  // false for NaN

// What validation derives from the spec.
struct plan {
  std::uint64_t domain = 0;     // foreign: the key domain size
  std::uint64_t n_replace = 0;  // primary: keys moved above the domain
  std::uint64_t n_hot = 0;      // rows carrying the hot key
};

plan validate(relation_spec const& spec) {
  JOINERY_EXPECTS(spec.rows >= 0,
                  "gen: rows must not be negative, got " + std::to_string(spec.rows));
  JOINERY_EXPECTS(is_key_type(spec.key_type),
                  "gen: the key type must be int32, int64, uint32 or uint64, got " +
                    std::string(to_string(spec.key_type)));
  JOINERY_EXPECTS(is_fraction(spec.match_ratio),
                  "gen: match_ratio must lie in [0, 1], got " + std::to_string(spec.match_ratio));
  JOINERY_EXPECTS(is_fraction(spec.hot_key_fraction),
                  "gen: hot_key_fraction must lie in [0, 1], got " +
                    std::to_string(spec.hot_key_fraction));
  JOINERY_EXPECTS(std::isfinite(spec.zipf) && spec.zipf >= 0.0,
                  "gen: zipf must be a finite exponent >= 0 (0 for uniform), got " +
                    std::to_string(spec.zipf));
  JOINERY_EXPECTS(spec.domain >= 0,
                  "gen: domain must not be negative, got " + std::to_string(spec.domain));
  for (std::size_t j = 0; j < spec.payload_types.size(); ++j) {
    JOINERY_EXPECTS(!is_floating(spec.payload_types[j]),
                    "gen: payload column " + std::to_string(j) +
                      " must be a 1/2/4/8-byte integer type, got " +
                      std::string(to_string(spec.payload_types[j])));
  }

  plan p;
  auto const rows = spec.rows;
  p.n_hot = count_of(spec.hot_key_fraction, rows);
  i128 const offset = spec.key_offset;
  i128 hi = offset;  // the largest key the relation can hold
  if (spec.kind == key_kind::primary) {
    // Silently ignoring these would hand back a different workload than asked for.
    JOINERY_EXPECTS(spec.zipf == 0.0,
                    "gen: zipf applies to foreign relations only; a primary relation holds "
                    "every key once");
    JOINERY_EXPECTS(spec.domain == 0 || spec.domain == rows,
                    "gen: a primary relation's domain is its row count (" + std::to_string(rows) +
                      "), got domain " + std::to_string(spec.domain));
    p.n_replace = static_cast<std::uint64_t>(rows) - count_of(spec.match_ratio, rows);
    // Matched keys are below offset + rows, replaced ones at offset + rows + perm (< n_replace).
    hi = offset + rows - 1 + static_cast<i128>(p.n_replace);
  } else {
    JOINERY_EXPECTS(spec.match_ratio == 1.0,
                    "gen: match_ratio applies to primary relations only; for a foreign relation "
                    "choose the domain instead");
    p.domain = static_cast<std::uint64_t>(spec.domain == 0 ? rows : spec.domain);
    JOINERY_EXPECTS(rows == 0 || p.domain > 0, "gen: a foreign relation with rows needs a domain");
    if (p.domain > 0) { hi = offset + static_cast<i128>(p.domain) - 1; }
  }
  auto const r = range_of(spec.key_type);
  // The offset itself is checked even for empty relations (it is always a key otherwise).
  JOINERY_EXPECTS(offset >= r.lo && offset <= r.hi,
                  "gen: key_offset " + to_string_i128(offset) + " does not fit the key type " +
                    std::string(to_string(spec.key_type)) + " [" + to_string_i128(r.lo) + ", " +
                    to_string_i128(r.hi) + "]");
  JOINERY_EXPECTS(rows == 0 || hi <= r.hi,
                  "gen: keys span [" + to_string_i128(offset) + ", " + to_string_i128(hi) +
                    "], which does not fit the key type " + std::string(to_string(spec.key_type)) +
                    " [" + to_string_i128(r.lo) + ", " + to_string_i128(r.hi) + "]");
  return p;
}

template <class T>
void fill_keys(T* out, relation_spec const& spec, plan const& p) {
  auto const rows = spec.rows;
  auto const n = static_cast<std::uint64_t>(rows);
  // Keys are formed modulo 2^64 and narrowed: validation proved the true value fits T.
  auto const offset = static_cast<std::uint64_t>(spec.key_offset);
  // Hot rows: an exact count, those whose image under an independent bijection is < n_hot.
  detail::feistel_permutation const hot_perm(n, detail::stream_key(spec.seed, hot_perm_stream));
  std::uint64_t const n_hot = p.n_hot;
  auto const hot = [&](std::uint64_t i) { return n_hot != 0 && hot_perm(i) < n_hot; };

  if (spec.kind == key_kind::primary) {
    detail::feistel_permutation const perm(n, detail::stream_key(spec.seed, key_perm_stream));
    std::uint64_t const n_replace = p.n_replace;
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < rows; ++i) {
      auto const u = static_cast<std::uint64_t>(i);
      std::uint64_t v = perm(u);
      if (v < n_replace) { v += n; }  // unique, and outside [offset, offset + rows)
      if (hot(u)) { v = 0; }
      out[i] = static_cast<T>(offset + v);
    }
    return;
  }

  auto const key = detail::stream_key(spec.seed, key_stream);
  std::uint64_t const domain = p.domain;
  if (spec.zipf == 0.0) {
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < rows; ++i) {
      auto const u = static_cast<std::uint64_t>(i);
      std::uint64_t v = detail::bounded(detail::counter_random(key, u), domain);
      if (hot(u)) { v = 0; }
      out[i] = static_cast<T>(offset + v);
    }
    return;
  }

  detail::zipf_sampler const zipf(domain, spec.zipf);
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < rows; ++i) {
    auto const u = static_cast<std::uint64_t>(i);
    detail::row_random rng(key, u);
    std::uint64_t v = zipf(rng) - 1;  // rank 1 is the key offset
    if (hot(u)) { v = 0; }
    out[i] = static_cast<T>(offset + v);
  }
}

template <class T>
void fill_payload(T* out, size_type rows, std::uint64_t key) {
  // Uniform bits over the whole type: truncating a uniform 64-bit value.
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < rows; ++i) {
    out[i] = static_cast<T>(detail::counter_random(key, static_cast<std::uint64_t>(i)));
  }
}

}  // namespace

table generate(relation_spec const& spec) {
  plan const p = validate(spec);
  std::vector<joinery::column> columns;
  columns.reserve(spec.payload_types.size() + 1);

  columns.emplace_back(spec.key_type, spec.rows);
  dispatch_key_type(spec.key_type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_keys(columns.back().data_as<T>(), spec, p);
  });

  for (std::size_t j = 0; j < spec.payload_types.size(); ++j) {
    auto const t = spec.payload_types[j];
    columns.emplace_back(t, spec.rows);
    auto const key = detail::stream_key(spec.seed, payload_stream_base + j);
    dispatch_type(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>) {
        fill_payload(columns.back().data_as<T>(), spec.rows, key);
      }
    });
  }
  return table(std::move(columns));
}

std::vector<std::string> column_names(relation_spec const& spec) {
  std::vector<std::string> names;
  names.reserve(spec.payload_types.size() + 1);
  names.emplace_back("key");
  for (std::size_t j = 0; j < spec.payload_types.size(); ++j) {
    std::string name = "p";  // appended, not "p" + ...: GCC 12 warns falsely (-Wrestrict)
    name += std::to_string(j);
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace joinery::gen
