// Joins and group-bys over string columns, on the integer paths (string_keys.hpp).
#include "strings/string_keys.hpp"

#include "core/wall_clock.hpp"
#include "primitives/string_ops.hpp"

#include <joinery/primitives/checksum.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <utility>

namespace joinery::detail::strings {

namespace {

using detail::clock_type;
using detail::seconds_since;

/// Adds the string phases to an inner result's statistics, its seconds to the whole call's.
void add_string_phases(std::vector<phase_time>& phases, double& seconds, double encode,
                       double decode, clock_type::time_point t0) {
  phases.push_back({"strings: encode", encode});
  if (decode > 0) { phases.push_back({"strings: decode", decode}); }
  seconds = seconds_since(t0);
}

bool in_range(table_view const& t, size_type c) { return c >= 0 && c < t.num_columns(); }

bool string_at(table_view const& t, size_type c) {
  return in_range(t, c) && is_string(t.column(c).type());
}

void expect_host_results(memory_resource_ref mr, char const* what) {
  JOINERY_EXPECTS(mr == nullptr || host_accessible(mr->space()),
                  std::string(what) + " over string columns makes its result in host memory; "
                                      "pass no memory resource, or a host one");
}

/// A column readable on the host (a copy when it lives on the device).
column_view on_host(column const& c, std::vector<column>& keep) {
  if (host_accessible(c.space())) { return c.view(); }
  keep.push_back(column::copy_of(c.view()));
  return keep.back().view();
}

/// The checksum of a result column as join_aggregate defines it: integers sign-extended, floats
/// as their bits, strings as hash_bytes; NULLs add 0.
std::uint64_t result_checksum(column_view const& c) {
  if (is_string(c.type())) { return strings::checksum(c); }
  if (is_floating(c.type())) {
    auto const bits = c.type() == type_id::float32 ? type_id::uint32 : type_id::uint64;
    return joinery::checksum(column_view(bits, c.data(), c.size(), c.space(), c.null_mask(),
                                         c.null_count()));
  }
  return joinery::checksum(c);
}

/// How a payload reaches the integer join.
enum class carried : std::uint8_t { as_is, ordinal, hashed };

/// One side of the join as the integer join sees it: its columns with the stand-ins appended.
struct side {
  std::vector<column> owned;
  std::vector<column_view> views;
  std::vector<size_type> keys;
  std::vector<size_type> payloads;
  std::vector<carried> how;

  size_type append(column&& c) {
    owned.push_back(std::move(c));
    views.push_back(owned.back().view());
    return static_cast<size_type>(views.size()) - 1;
  }
};

/// int64 0..n-1 without a mask: which input row an output row came from.
column ordinals(size_type n) {
  column out(type_id::int64, n);
  auto* o = out.data_as<std::int64_t>();
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < n; ++i) { o[i] = i; }
  return out;
}

/// What turns an integer result batch back into the result over strings. String keys' codes
/// cannot be decoded (a probe string no build row holds has no code of its own), so each side
/// carries hidden payloads after its own: its row ordinal in the table form, its string keys'
/// hashes in the aggregate form; a key is then the probe side's value, or the build side's
/// where the probe side has none (the key columns' COALESCE).
struct decoder {
  table_view build, probe;
  std::vector<size_type> build_keys, probe_keys;
  std::vector<size_type> build_payloads, probe_payloads;
  std::vector<carried> build_how, probe_how;
  std::vector<bool> string_key;
  join_kind kind = join_kind::inner;
  bool hashed_keys = false;  ///< aggregate form: one hidden hash per string key a side

  [[nodiscard]] bool carries_build() const {
    return kind != join_kind::left_semi && kind != join_kind::left_anti;
  }
  [[nodiscard]] bool carries_probe() const {
    return kind != join_kind::right_semi && kind != join_kind::right_anti;
  }
  [[nodiscard]] std::size_t string_keys() const {
    return static_cast<std::size_t>(std::count(string_key.begin(), string_key.end(), true));
  }
  [[nodiscard]] std::size_t hidden() const {
    return string_keys() == 0 ? 0 : hashed_keys ? string_keys() : 1;
  }
  /// Where a side's hidden columns start in a result batch (-1: the side carries none).
  [[nodiscard]] std::pair<std::ptrdiff_t, std::ptrdiff_t> hidden_at() const {
    std::ptrdiff_t at = static_cast<std::ptrdiff_t>(string_key.size());
    std::ptrdiff_t bh = -1, ph = -1;
    if (carries_build()) {
      at += static_cast<std::ptrdiff_t>(build_payloads.size());
      if (hidden() > 0) { bh = at; }
      at += static_cast<std::ptrdiff_t>(hidden());
    }
    if (carries_probe()) {
      at += static_cast<std::ptrdiff_t>(probe_payloads.size());
      if (hidden() > 0) { ph = at; }
    }
    return {bh, ph};
  }

  /// Table form: [keys, build payloads, probe payloads] with ordinals decoded, hidden columns
  /// dropped.
  void finish(join_result& r) const {
    auto cols = r.columns.release();
    std::vector<column> keep;
    auto const [bh, ph] = hidden_at();
    column_view const none;
    auto const build_rows = bh >= 0 ? on_host(cols[static_cast<std::size_t>(bh)], keep) : none;
    auto const probe_rows = ph >= 0 ? on_host(cols[static_cast<std::size_t>(ph)], keep) : none;
    auto const nk = string_key.size();
    for (std::size_t i = 0; i < nk; ++i) {
      if (!string_key[i]) { continue; }
      cols[i] = ph >= 0 ? coalesce(probe.column(probe_keys[i]), probe_rows,
                                   bh >= 0 ? build.column(build_keys[i]) : none, build_rows)
                        : gather(build.column(build_keys[i]), build_rows);
    }
    std::vector<column> out;
    for (std::size_t i = 0; i < nk; ++i) { out.push_back(std::move(cols[i])); }
    std::size_t at = nk;
    auto decode_side = [&](table_view const& t, std::vector<size_type> const& payloads,
                           std::vector<carried> const& how) {
      for (std::size_t j = 0; j < payloads.size(); ++j, ++at) {
        out.push_back(how[j] == carried::ordinal
                        ? gather(t.column(payloads[j]), on_host(cols[at], keep))
                        : std::move(cols[at]));
      }
      at += hidden();
    };
    if (carries_build()) { decode_side(build, build_payloads, build_how); }
    if (carries_probe()) { decode_side(probe, probe_payloads, probe_how); }
    r.aggregate.checksum = 0;
    for (auto const& c : out) { r.aggregate.checksum += result_checksum(c.view()); }
    r.columns = table(std::move(out));
  }

  /// Checksum of a table-form batch whose string payloads were carried as hashes, without
  /// decoding it: a string key adds its probe hash, or its build hash where that is NULL.
  [[nodiscard]] std::uint64_t hashed_checksum(join_result const& r) const {
    std::uint64_t sum = 0;
    std::vector<column> keep;
    auto const& cols = r.columns;
    auto const [bh, ph] = hidden_at();
    auto const skip_from = [&](std::ptrdiff_t h, size_type i) {
      return h >= 0 && i >= h && i < h + static_cast<std::ptrdiff_t>(hidden());
    };
    std::size_t nth = 0;  // string keys seen
    for (size_type i = 0; i < cols.num_columns(); ++i) {
      if (skip_from(bh, i) || skip_from(ph, i)) { continue; }
      auto const k = static_cast<std::size_t>(i);
      if (k >= string_key.size() || !string_key[k]) {
        sum += result_checksum(on_host(cols.column(i), keep));
        continue;
      }
      column_view const none;
      auto const hb = bh >= 0 ? on_host(cols.column(static_cast<size_type>(bh + static_cast<std::ptrdiff_t>(nth))), keep) : none;
      auto const hp = ph >= 0 ? on_host(cols.column(static_cast<size_type>(ph + static_cast<std::ptrdiff_t>(nth))), keep) : none;
      ++nth;
      auto const rows = cols.num_rows();
      std::uint64_t s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
      for (size_type row = 0; row < rows; ++row) {
        if (hp.size() > 0 && hp.is_valid(row)) {
          s += hp.data_as<std::uint64_t>()[row];
        } else if (hb.size() > 0 && hb.is_valid(row)) {
          s += hb.data_as<std::uint64_t>()[row];
        }
      }
      sum += s;
    }
    return sum;
  }
};

}  // namespace

bool join_has_strings(table_view const& build, std::vector<size_type> const& build_keys,
                      table_view const& probe, std::vector<size_type> const& probe_keys,
                      join_options const& options) {
  for (auto c : build_keys) { if (string_at(build, c)) { return true; } }
  for (auto c : probe_keys) { if (string_at(probe, c)) { return true; } }
  if (options.output == output_form::index) { return false; }
  for (auto c : options.build_payloads) { if (string_at(build, c)) { return true; } }
  for (auto c : options.probe_payloads) { if (string_at(probe, c)) { return true; } }
  return false;
}

join_result string_join(table_view const& build, std::vector<size_type> const& build_keys,
                        table_view const& probe, std::vector<size_type> const& probe_keys,
                        join_options const& options, join_batch_sink const* sink,
                        stream_ref stream, memory_resource_ref mr) {
  JOINERY_EXPECTS(!build_keys.empty() && build_keys.size() == probe_keys.size(),
                  "a join needs the same number of key columns on both sides (at least one), got " +
                    std::to_string(build_keys.size()) + " build and " +
                    std::to_string(probe_keys.size()) + " probe key columns");
  expect_host_results(mr, "a join");
  auto const t0 = clock_type::now();
  side b, p;
  b.views = build.columns();
  p.views = probe.columns();
  decoder d;
  d.build = build;
  d.probe = probe;
  d.build_keys = build_keys;
  d.probe_keys = probe_keys;
  d.kind = options.kind;
  for (std::size_t i = 0; i < build_keys.size(); ++i) {
    bool const bs = string_at(build, build_keys[i]);
    bool const ps = string_at(probe, probe_keys[i]);
    d.string_key.push_back(bs);
    if (!bs && !ps) {
      b.keys.push_back(build_keys[i]);
      p.keys.push_back(probe_keys[i]);
      continue;
    }
    JOINERY_EXPECTS(bs && ps, "mismatched key types in key column pair " + std::to_string(i) +
                                ": build key is " +
                                std::string(in_range(build, build_keys[i]) ? to_string(build.column(build_keys[i]).type()) : "missing") +
                                ", probe key is " +
                                std::string(in_range(probe, probe_keys[i]) ? to_string(probe.column(probe_keys[i]).type()) : "missing") +
                                "; a string key joins a string key");
    auto codes = encode_and_look_up(build.column(build_keys[i]), probe.column(probe_keys[i]));
    b.keys.push_back(b.append(std::move(codes.build_codes)));
    p.keys.push_back(p.append(std::move(codes.probe_codes)));
  }
  bool const any_string_key = d.string_keys() > 0;
  // The aggregate form over string keys runs as the table form, batch by batch, so that a key's
  // checksum is its string's hash rather than its code.
  bool const aggregate_by_table = options.output == output_form::aggregate && any_string_key;
  d.hashed_keys = aggregate_by_table;
  auto const payload_form =
    options.output == output_form::aggregate ? carried::hashed : carried::ordinal;
  auto carry = [&](side& s, table_view const& t, std::vector<size_type> const& payloads,
                   std::vector<size_type> const& keys) {
    for (auto c : payloads) {
      if (!string_at(t, c) || options.output == output_form::index) {
        s.payloads.push_back(c);
        s.how.push_back(carried::as_is);
        continue;
      }
      auto const& col = t.column(c);
      expect_host(col, "a payload");
      s.payloads.push_back(s.append(payload_form == carried::hashed ? hashes(col)
                                                                    : row_ordinals(col)));
      s.how.push_back(payload_form);
    }
    if (options.output == output_form::index || !any_string_key) { return; }
    if (aggregate_by_table) {
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (d.string_key[i]) { s.payloads.push_back(s.append(hashes(t.column(keys[i])))); }
      }
    } else {
      s.payloads.push_back(s.append(ordinals(t.num_rows())));
    }
  };
  carry(b, build, options.build_payloads, build_keys);
  carry(p, probe, options.probe_payloads, probe_keys);
  d.build_payloads = options.build_payloads;
  d.probe_payloads = options.probe_payloads;
  d.build_how = b.how;
  d.probe_how = p.how;

  join_options o = options;
  o.build_payloads = b.payloads;
  o.probe_payloads = p.payloads;
  table_view const bt(b.views), pt(p.views);
  auto const encode_seconds = seconds_since(t0);

  if (aggregate_by_table) {
    o.output = output_form::table;
    join_aggregate total;
    auto r = join_batches(bt, b.keys, pt, p.keys, o, [&](join_result&& batch) {
      total.count += batch.aggregate.count;
      total.checksum += d.hashed_checksum(batch);
    }, stream, host_resource());
    join_result out;
    out.form = output_form::aggregate;
    out.aggregate = total;
    out.stats = r.stats;
    add_string_phases(out.stats.phases, out.stats.seconds, encode_seconds, 0, t0);
    return out;
  }
  if (sink != nullptr) {
    double decode_seconds = 0;
    std::uint64_t checksum = 0;  // of the decoded batches (the integer join's sums codes)
    auto r = options.output != output_form::table
               ? join_batches(bt, b.keys, pt, p.keys, o, *sink, stream, mr)
               : join_batches(bt, b.keys, pt, p.keys, o, [&](join_result&& batch) {
                   auto const t_decode = clock_type::now();
                   d.finish(batch);
                   checksum += batch.aggregate.checksum;
                   decode_seconds += seconds_since(t_decode);
                   (*sink)(std::move(batch));
                 }, stream, mr);
    if (options.output == output_form::table) { r.aggregate.checksum = checksum; }
    add_string_phases(r.stats.phases, r.stats.seconds, encode_seconds, decode_seconds, t0);
    return r;
  }
  auto r = join(bt, b.keys, pt, p.keys, o, stream, mr);
  auto const t_decode = clock_type::now();
  if (options.output == output_form::table) { d.finish(r); }
  add_string_phases(r.stats.phases, r.stats.seconds, encode_seconds,
                    options.output == output_form::table ? seconds_since(t_decode) : 0, t0);
  return r;
}

bool groupby_has_strings(table_view const& input, std::vector<size_type> const& keys,
                         std::vector<aggregation> const& aggregations) {
  for (auto c : keys) { if (string_at(input, c)) { return true; } }
  for (auto const& a : aggregations) {
    if (a.kind != aggregation_kind::count && string_at(input, a.column)) { return true; }
  }
  return false;
}

groupby_result string_groupby(table_view const& input, std::vector<size_type> const& keys,
                              std::vector<aggregation> const& aggregations,
                              groupby_options const& options, stream_ref stream,
                              memory_resource_ref mr) {
  expect_host_results(mr, "a group-by");
  auto const t0 = clock_type::now();
  side s;
  s.views = input.columns();
  std::vector<column> key_dictionaries(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!string_at(input, keys[i])) {
      s.keys.push_back(keys[i]);
      continue;
    }
    auto dict = encode({input.column(keys[i])},
                       options.sort_by_key ? code_order::byte_order : code_order::any);
    s.keys.push_back(s.append(std::move(dict.codes[0])));
    key_dictionaries[i] = std::move(dict.values);
  }
  // Aggregated string columns: one dictionary each, whose code order is string order, so that
  // MIN / MAX of the codes are those of the strings.
  std::map<size_type, std::pair<size_type, std::size_t>> encoded;  // column -> (codes, dictionary)
  std::vector<column> value_dictionaries;
  std::vector<aggregation> aggs = aggregations;
  std::vector<int> decoded_by(aggregations.size(), -1);
  for (std::size_t j = 0; j < aggs.size(); ++j) {
    auto& a = aggs[j];
    if (a.kind == aggregation_kind::count || !string_at(input, a.column)) { continue; }
    JOINERY_EXPECTS(a.kind == aggregation_kind::count_valid || a.kind == aggregation_kind::min ||
                      a.kind == aggregation_kind::max,
                    std::string(to_string(a.kind)) + " over column " + std::to_string(a.column) +
                      ", a string column; strings take count, count_valid, min and max");
    auto it = encoded.find(a.column);
    if (it == encoded.end()) {
      auto dict = encode({input.column(a.column)}, code_order::byte_order);
      auto const at = s.append(std::move(dict.codes[0]));
      value_dictionaries.push_back(std::move(dict.values));
      it = encoded.emplace(a.column, std::pair{at, value_dictionaries.size() - 1}).first;
    }
    if (a.kind != aggregation_kind::count_valid) {
      decoded_by[j] = static_cast<int>(it->second.second);
    }
    a.column = it->second.first;
  }
  auto const encode_seconds = seconds_since(t0);
  auto r = groupby(table_view(s.views), s.keys, aggs, options, stream, mr);
  auto const t_decode = clock_type::now();
  auto cols = r.columns.release();
  std::vector<column> keep;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (string_at(input, keys[i])) {
      cols[i] = gather(key_dictionaries[i].view(), on_host(cols[i], keep));
    }
  }
  for (std::size_t j = 0; j < aggs.size(); ++j) {
    if (decoded_by[j] < 0) { continue; }
    auto& c = cols[keys.size() + j];
    c = gather(value_dictionaries[static_cast<std::size_t>(decoded_by[j])].view(),
               on_host(c, keep));
  }
  r.columns = table(std::move(cols));
  add_string_phases(r.stats.phases, r.stats.seconds, encode_seconds, seconds_since(t_decode), t0);
  return r;
}

}  // namespace joinery::detail::strings
