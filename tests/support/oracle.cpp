#include "support/oracle.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <parallel/algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>
#include <unordered_map>

namespace joinery::test {

namespace {

/// Value of row i of a host column in checksum form, or nullopt when null.
std::optional<std::uint64_t> value_at(column_view const& c, size_type i) {
  if (!c.is_valid(i)) { return std::nullopt; }
  return dispatch_type(c.type(), [&](auto tag) -> std::uint64_t {
    using T = typename decltype(tag)::type;
    T const v = static_cast<T const*>(c.data())[i];
    if constexpr (std::is_floating_point_v<T>) {
      double const d = static_cast<double>(v);
      std::uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof(bits));
      return bits;
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    } else {
      return static_cast<std::uint64_t>(v);
    }
  });
}

double double_at(column_view const& c, size_type i) {
  return dispatch_type(c.type(), [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    return static_cast<double>(static_cast<T const*>(c.data())[i]);
  });
}

/// Key of row i as a signed/unsigned-aware 128-bit integer (exact for every key type).
__int128 key_at(column_view const& c, size_type i) {
  return dispatch_type(c.type(), [&](auto tag) -> __int128 {
    using T = typename decltype(tag)::type;
    return static_cast<__int128>(static_cast<T const*>(c.data())[i]);
  });
}

std::string to_text(row const& r) {
  std::ostringstream os;
  os << "(";
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (i) { os << ", "; }
    if (r[i]) {
      os << static_cast<std::int64_t>(*r[i]);
    } else {
      os << "null";
    }
  }
  os << ")";
  return os.str();
}

std::optional<std::uint64_t> row_id(std::int64_t r) {
  return static_cast<std::uint64_t>(r);
}

}  // namespace

rows oracle_join_index(table_view const& build, size_type build_key, table_view const& probe,
                       size_type probe_key, join_kind kind, predicate pred) {
  auto const bk = build.column(build_key);
  auto const pk = probe.column(probe_key);
  // Candidate build rows of a probe key: a map from key to rows, scanned over the band's range.
  std::map<__int128, std::vector<std::int64_t>> by_key;
  for (size_type i = 0; i < bk.size(); ++i) { by_key[key_at(bk, i)].push_back(i); }
  __int128 const width = pred.kind == predicate::kind_type::band
                           ? static_cast<__int128>(pred.band_width)
                           : 0;
  rows out;
  for (size_type p = 0; p < pk.size(); ++p) {
    auto const k = key_at(pk, p);
    // build.key <= k <= build.key + width  <=>  k - width <= build.key <= k
    std::vector<std::int64_t> matches;
    for (auto it = by_key.lower_bound(k - width); it != by_key.end() && it->first <= k; ++it) {
      matches.insert(matches.end(), it->second.begin(), it->second.end());
    }
    switch (kind) {
      case join_kind::inner:
        for (auto b : matches) { out.push_back({row_id(b), row_id(p)}); }
        break;
      case join_kind::left_outer:
        if (matches.empty()) { out.push_back({row_id(-1), row_id(p)}); }
        for (auto b : matches) { out.push_back({row_id(b), row_id(p)}); }
        break;
      case join_kind::left_semi:
        if (!matches.empty()) { out.push_back({row_id(p)}); }
        break;
      case join_kind::left_anti:
        if (matches.empty()) { out.push_back({row_id(p)}); }
        break;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

rows oracle_join_table(table_view const& build, size_type build_key, table_view const& probe,
                       size_type probe_key, join_options const& options) {
  auto const pairs =
    oracle_join_index(build, build_key, probe, probe_key, options.kind, options.pred);
  bool const probe_only =
    options.kind == join_kind::left_semi || options.kind == join_kind::left_anti;
  rows out;
  out.reserve(pairs.size());
  for (auto const& pr : pairs) {
    auto const p = static_cast<std::int64_t>(*pr.back());
    auto const b = probe_only ? -1 : static_cast<std::int64_t>(*pr.front());
    row r;
    r.push_back(value_at(probe.column(probe_key), p));
    if (!probe_only) {
      for (auto c : options.build_payloads) {
        r.push_back(b < 0 ? std::nullopt : value_at(build.column(c), b));
      }
    }
    for (auto c : options.probe_payloads) { r.push_back(value_at(probe.column(c), p)); }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end());
  return out;
}

join_aggregate aggregate_of(rows const& table_rows) {
  join_aggregate a;
  a.count = table_rows.size();
  for (auto const& r : table_rows) {
    for (auto const& v : r) { a.checksum += v.value_or(0); }
  }
  return a;
}

rows table_rows(table_view const& t) {
  auto const host = place(t, memory_space::host);
  auto const v = host.view();
  rows out(static_cast<std::size_t>(v.num_rows()));
  // In parallel: results of millions of rows are compared many times in the GPU suites.
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < v.num_rows(); ++i) {
    auto& row = out[static_cast<std::size_t>(i)];
    row.reserve(static_cast<std::size_t>(v.num_columns()));
    for (auto const& c : v) { row.push_back(value_at(c, i)); }
  }
  __gnu_parallel::sort(out.begin(), out.end());
  return out;
}

rows index_rows(join_result const& r, join_kind kind) {
  bool const probe_only = kind == join_kind::left_semi || kind == join_kind::left_anti;
  std::vector<column_view> cols;
  if (!probe_only) { cols.push_back(r.build_rows.view()); }
  cols.push_back(r.probe_rows.view());
  return table_rows(table_view(std::move(cols)));
}

std::vector<group_row> oracle_groupby(table_view const& input, size_type key_column,
                                      std::vector<aggregation> const& aggs) {
  auto const key = input.column(key_column);
  std::map<__int128, std::vector<size_type>> groups;
  for (size_type i = 0; i < key.size(); ++i) { groups[key_at(key, i)].push_back(i); }
  std::vector<group_row> out;
  for (auto const& [k, members] : groups) {
    group_row g;
    g.key = *value_at(key, members.front());
    for (auto const& a : aggs) {
      if (a.kind == aggregation_kind::count) {
        g.exact.push_back(members.size());
        continue;
      }
      auto const c = input.column(a.column);
      if (a.kind == aggregation_kind::count_valid) {
        g.exact.push_back(static_cast<std::uint64_t>(
          std::count_if(members.begin(), members.end(), [&](size_type i) { return c.is_valid(i); })));
        continue;
      }
      bool const fp = is_floating(c.type());
      switch (a.kind) {
        case aggregation_kind::sum:
          if (fp) {
            double s = 0;
            for (auto i : members) { s += double_at(c, i); }
            g.approx.push_back(s);
          } else {
            std::uint64_t s = 0;
            for (auto i : members) { s += *value_at(c, i); }
            g.exact.push_back(s);
          }
          break;
        case aggregation_kind::min:
        case aggregation_kind::max: {
          auto best = members.front();
          for (auto i : members) {
            bool const better = fp ? (a.kind == aggregation_kind::min ? double_at(c, i) < double_at(c, best)
                                                                       : double_at(c, i) > double_at(c, best))
                                   : (a.kind == aggregation_kind::min ? key_at(c, i) < key_at(c, best)
                                                                       : key_at(c, i) > key_at(c, best));
            if (better) { best = i; }
          }
          if (fp) {
            g.approx.push_back(double_at(c, best));
          } else {
            g.exact.push_back(*value_at(c, best));
          }
          break;
        }
        case aggregation_kind::avg: {
          long double s = 0;
          for (auto i : members) {
            s += fp ? static_cast<long double>(double_at(c, i)) : static_cast<long double>(key_at(c, i));
          }
          g.approx.push_back(static_cast<double>(s / static_cast<long double>(members.size())));
          break;
        }
        case aggregation_kind::count:
        case aggregation_kind::count_valid: break;
      }
    }
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(), [](auto const& a, auto const& b) { return a.key < b.key; });
  return out;
}

std::vector<group_row> groupby_rows(table_view const& result) {
  auto const host = place(result, memory_space::host);
  auto const v = host.view();
  std::vector<group_row> out(static_cast<std::size_t>(v.num_rows()));
  for (size_type i = 0; i < v.num_rows(); ++i) {
    auto& g = out[static_cast<std::size_t>(i)];
    g.key = *value_at(v.column(0), i);
    for (size_type c = 1; c < v.num_columns(); ++c) {
      if (is_floating(v.column(c).type())) {
        g.approx.push_back(double_at(v.column(c), i));
      } else {
        g.exact.push_back(*value_at(v.column(c), i));
      }
    }
  }
  std::sort(out.begin(), out.end(), [](auto const& a, auto const& b) { return a.key < b.key; });
  return out;
}

std::string diff_rows(rows const& expected, rows const& actual) {
  if (expected == actual) { return ""; }
  std::ostringstream os;
  os << "expected " << expected.size() << " rows, got " << actual.size() << "; ";
  auto const n = std::min(expected.size(), actual.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (expected[i] != actual[i]) {
      os << "first difference at sorted row " << i << ": expected " << to_text(expected[i])
         << ", got " << to_text(actual[i]);
      return os.str();
    }
  }
  os << "one is a prefix of the other";
  return os.str();
}

std::string diff_groups(std::vector<group_row> const& expected,
                        std::vector<group_row> const& actual) {
  std::ostringstream os;
  if (expected.size() != actual.size()) {
    os << "expected " << expected.size() << " groups, got " << actual.size();
    return os.str();
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    auto const& e = expected[i];
    auto const& a = actual[i];
    if (e.key != a.key || e.exact != a.exact || e.approx.size() != a.approx.size()) {
      os << "group " << i << " (key " << static_cast<std::int64_t>(e.key) << ") differs";
      return os.str();
    }
    for (std::size_t j = 0; j < e.approx.size(); ++j) {
      double const tol = 1e-7 * std::max(1.0, std::fabs(e.approx[j]));
      if (!(std::fabs(e.approx[j] - a.approx[j]) <= tol)) {
        os << "group " << i << " (key " << static_cast<std::int64_t>(e.key)
           << "): floating aggregate " << j << " expected " << e.approx[j] << ", got "
           << a.approx[j];
        return os.str();
      }
    }
  }
  return "";
}

table place(table_view const& t, memory_space space) {
  std::vector<column> cols;
  for (auto const& c : t) { cols.push_back(column::copy_of(c, resource_for(space))); }
  return table(std::move(cols));
}

void expect_every_form_matches_oracle(table_view const& build, table_view const& probe,
                                      table_view const& host_build, table_view const& host_probe,
                                      join_options o, std::optional<memory_space> index_space) {
  auto const expected_index =
    oracle_join_index(host_build, 0, host_probe, 0, o.kind, predicate::equal());
  auto const expected_table = oracle_join_table(host_build, 0, host_probe, 0, o);
  auto const expected_agg = aggregate_of(expected_table);

  o.output = output_form::index;
  for (auto ids : {type_id::int64, type_id::int32}) {
    for (auto writer : {output_writer::direct, output_writer::three_phase}) {
      if (ids == type_id::int32 && writer == output_writer::three_phase) { continue; }
      SCOPED_TRACE(std::string("index ") + std::string(to_string(ids)) + " " +
                   std::string(to_string(writer)));
      o.index_type = ids;
      o.writer = writer;
      auto const r = join(build, 0, probe, 0, o);
      if (o.algorithm != join_algorithm::automatic) { EXPECT_EQ(r.stats.algorithm, o.algorithm); }
      if (o.backend != backend::automatic) { EXPECT_EQ(r.stats.backend, o.backend); }
      EXPECT_EQ(r.probe_rows.type(), ids);
      if (index_space) { EXPECT_EQ(r.probe_rows.space(), *index_space); }
      EXPECT_EQ(diff_rows(expected_index, index_rows(r, o.kind)), "");
    }
  }
  o.index_type = type_id::int64;
  o.writer = output_writer::direct;

  o.output = output_form::table;
  auto const rt = join(build, 0, probe, 0, o);
  EXPECT_EQ(diff_rows(expected_table, table_rows(rt.columns.view())), "");
  EXPECT_EQ(rt.aggregate.count, expected_agg.count);
  EXPECT_EQ(rt.aggregate.checksum, expected_agg.checksum);

  o.output = output_form::aggregate;
  auto const ra = join(build, 0, probe, 0, o);
  EXPECT_EQ(ra.aggregate.count, expected_agg.count);
  EXPECT_EQ(ra.aggregate.checksum, expected_agg.checksum);
  EXPECT_EQ(ra.columns.num_columns(), 0);
}

void expect_groups_match_oracle(groupby_result const& r, table_view const& input,
                                std::vector<aggregation> const& aggs, bool sorted) {
  ASSERT_EQ(r.columns.num_columns(), static_cast<size_type>(aggs.size() + 1));
  for (std::size_t i = 0; i < aggs.size(); ++i) {
    auto const in_type = aggs[i].kind == aggregation_kind::count
                           ? type_id::int64
                           : input.column(aggs[i].column).type();
    EXPECT_EQ(r.columns.column(static_cast<size_type>(i + 1)).type(),
              aggregation_result_type(aggs[i].kind, in_type));
  }
  EXPECT_EQ(diff_groups(oracle_groupby(input, 0, aggs), groupby_rows(r.columns.view())), "");
  if (sorted) {
    auto const keys = place(table_view({r.columns.column(0).view()}), memory_space::host);
    dispatch_key_type(keys.column(0).type(), [&](auto tag) {
      using K = typename decltype(tag)::type;
      auto const v = keys.column(0).template to_vector<K>();
      EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    });
  }
}

}  // namespace joinery::test
