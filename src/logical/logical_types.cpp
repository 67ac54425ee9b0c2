#include "logical/logical_types.hpp"

#include "core/transfer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>

namespace joinery::detail::logical {

namespace {

using i128 = __int128;

std::string type_name(column_view const& c) {
  std::string s(to_string(c.type()));
  if (is_decimal(c.type())) {
    s += "(" + std::to_string(c.decimal().precision) + "," + std::to_string(c.decimal().scale) +
         ")";
  }
  return s;
}

bool any_logical(table_view const& t, std::vector<size_type> const& columns) {
  for (auto c : columns) {
    if (c >= 0 && c < t.num_columns() && is_logical(t.column(c).type())) { return true; }
  }
  return false;
}

/// The high and the low half of each value of an 8- or 16-byte column, as two columns in its
/// memory space: int32 / uint32 halves of a decimal64, int64 / uint64 halves of a decimal128
/// (value = high * 2^(half bits) + low).
struct halves {
  column high;
  column low;
};

halves split_halves(column_view const& c, stream_ref stream) {
  auto const width = size_of(c.type());
  auto const half = width / 2;
  auto const n = c.size();
  auto* mr = resource_for(c.space());
  halves h{column(half == 8 ? type_id::int64 : type_id::int32, n, mr, stream),
           column(half == 8 ? type_id::uint64 : type_id::uint32, n, mr, stream)};
  auto const rows = static_cast<std::size_t>(n);
  if (rows > 0) {  // little-endian: the low half first
    copy_strided(h.low.data(), half, c.data(), width, half, rows, c.space(), stream);
    copy_strided(h.high.data(), half, static_cast<char const*>(c.data()) + half, width, half,
                 rows, c.space(), stream);
  }
  return h;
}

/// A view of a half, with the whole column's validity.
column_view half_view(column const& h, column_view const& whole) {
  return column_view(h.type(), h.view().data(), h.size(), h.space(), whole.null_mask(),
                     whole.null_count());
}

/// A decimal128 column from result columns holding its int64 high and uint64 low halves.
column join_halves(column& high, column& low, decimal_format decimal, stream_ref stream) {
  auto const n = high.size();
  column out(type_id::decimal128, n, high.resource(), stream);
  auto const rows = static_cast<std::size_t>(n);
  if (rows > 0) {
    copy_strided(out.data(), 16, low.data(), 8, 8, rows, high.space(), stream);
    copy_strided(static_cast<char*>(out.data()) + 8, 16, high.data(), 8, 8, rows, high.space(),
                 stream);
  }
  auto const hv = high.view();
  if (hv.nullable()) {
    copy_bytes(out.make_nullable(), out.space(), hv.null_mask(), hv.space(), null_mask_bytes(n),
               stream);
    out.set_null_count(hv.null_count());
  }
  out.set_type(type_id::decimal128, decimal);
  return out;
}

/// A column's type as the algorithms see it: its storage, decimal128 split in two.
struct storage_table {
  std::vector<column> owned;  // halves of decimal128 columns
  std::vector<column_view> columns;
  std::map<size_type, std::pair<size_type, size_type>> halves_at;  // decimal128 -> high, low

  storage_table(table_view const& t) {
    for (auto const& c : t) {
      columns.push_back(is_logical(c.type()) && c.type() != type_id::decimal128
                          ? c.with_type(storage_type(c.type()))
                          : c);
    }
  }
  /// Appends `c`'s columns as the algorithms see them to `out`; `whole` the column itself.
  void expand(table_view const& t, size_type c, std::vector<size_type>& out, stream_ref stream) {
    auto const& v = t.column(c);
    if (v.type() != type_id::decimal128) {
      out.push_back(c);
      return;
    }
    auto it = halves_at.find(c);
    if (it == halves_at.end()) {
      auto h = split_halves(v, stream);
      columns.push_back(half_view(h.high, v));
      columns.push_back(half_view(h.low, v));
      owned.push_back(std::move(h.high));
      owned.push_back(std::move(h.low));
      auto const at = static_cast<size_type>(columns.size());
      it = halves_at.emplace(c, std::pair{at - 2, at - 1}).first;
    }
    out.push_back(it->second.first);
    out.push_back(it->second.second);
  }
  [[nodiscard]] table_view view() const { return table_view(columns); }
};

/// What a result column becomes: its type (and format), from one column or two halves.
struct result_type {
  type_id type = type_id::int64;
  decimal_format decimal{};
};

std::vector<column> restore(std::vector<column> in, std::vector<result_type> const& types,
                            stream_ref stream) {
  std::vector<column> out;
  std::size_t j = 0;
  for (auto const& t : types) {
    JOINERY_EXPECTS(j < in.size(), "internal: a result has fewer columns than its types");
    if (t.type == type_id::decimal128) {
      out.push_back(join_halves(in[j], in[j + 1], t.decimal, stream));
      j += 2;
      continue;
    }
    if (is_logical(t.type)) { in[j].set_type(t.type, t.decimal); }
    out.push_back(std::move(in[j++]));
  }
  return out;
}

void restore_result(join_result& r, std::vector<result_type> const& types, stream_ref stream) {
  if (r.form != output_form::table || r.columns.num_columns() == 0) { return; }
  r.columns = table(restore(r.columns.release(), types, stream));
}

}  // namespace

bool join_has_logical(table_view const& build, std::vector<size_type> const& build_keys,
                      table_view const& probe, std::vector<size_type> const& probe_keys,
                      join_options const& options) {
  if (any_logical(build, build_keys) || any_logical(probe, probe_keys)) { return true; }
  return options.output != output_form::index &&
         (any_logical(build, options.build_payloads) || any_logical(probe, options.probe_payloads));
}

namespace {

/// `t` with each host decimal64 key that is paired with a decimal128 key of the same scale
/// widened to decimal128 (into `owned`): Arrow's decimal128 of at most 18 digits is read as
/// decimal64, and may meet a wider one.
table_view widen_decimal_keys(table_view const& t, std::vector<size_type> const& keys,
                              table_view const& other, std::vector<size_type> const& other_keys,
                              std::vector<column>& owned) {
  std::vector<column_view> cols(t.begin(), t.end());
  for (std::size_t i = 0; i < keys.size() && i < other_keys.size(); ++i) {
    auto const& v = t.column(keys[i]);
    auto const& o = other.column(other_keys[i]);
    if (v.type() != type_id::decimal64 || o.type() != type_id::decimal128 ||
        v.decimal().scale != o.decimal().scale || !host_accessible(v.space())) {
      continue;
    }
    column wide(type_id::decimal128, v.size());
    auto const* in = static_cast<std::int64_t const*>(v.data());
    auto* out = static_cast<unsigned char*>(wide.data());
    for (size_type r = 0; r < v.size(); ++r) {
      auto const x = static_cast<i128>(in[r]);
      std::memcpy(out + r * 16, &x, 16);
    }
    if (v.nullable()) {
      std::memcpy(wide.make_nullable(), v.null_mask(), null_mask_bytes(v.size()));
      wide.set_null_count(v.null_count());
    }
    wide.set_type(type_id::decimal128, v.decimal());
    owned.push_back(std::move(wide));
    cols[static_cast<std::size_t>(keys[i])] = owned.back().view();
  }
  return table_view(std::move(cols));
}

}  // namespace

join_result logical_join(table_view const& build_in, std::vector<size_type> const& build_keys,
                         table_view const& probe_in, std::vector<size_type> const& probe_keys,
                         join_options const& options, join_batch_sink const* sink,
                         stream_ref stream, memory_resource_ref mr) {
  JOINERY_EXPECTS(build_keys.size() == probe_keys.size(),
                  "the build and probe sides need the same number of key columns");
  for (auto const& [t, cols] :
       {std::pair{&build_in, &build_keys}, std::pair{&probe_in, &probe_keys},
        std::pair{&build_in, &options.build_payloads},
        std::pair{&probe_in, &options.probe_payloads}}) {
    for (auto c : *cols) {
      JOINERY_EXPECTS(c >= 0 && c < t->num_columns(),
                      "column " + std::to_string(c) + " does not exist (the table has " +
                        std::to_string(t->num_columns()) + " columns)");
    }
  }
  std::vector<column> widened;
  widened.reserve(2 * build_keys.size());  // views into it stay valid
  auto const build = widen_decimal_keys(build_in, build_keys, probe_in, probe_keys, widened);
  auto const probe = widen_decimal_keys(probe_in, probe_keys, build_in, build_keys, widened);
  std::vector<result_type> types;
  for (std::size_t i = 0; i < build_keys.size(); ++i) {
    auto const& b = build.column(build_keys[i]);
    auto const& p = probe.column(probe_keys[i]);
    bool const same = b.type() == p.type() &&
                      (!is_decimal(b.type()) || b.decimal().scale == p.decimal().scale);
    JOINERY_EXPECTS(same || (!is_logical(b.type()) && !is_logical(p.type())),
                    "mismatched key types: build key " + std::to_string(i) + " is " +
                      type_name(b) + ", probe key " + std::to_string(i) + " is " + type_name(p) +
                      "; a pair of key columns must have the same type (decimals the same "
                      "scale)");
    // A key column holds either side's values (outer and right kinds): the wider precision.
    auto decimal = p.decimal();
    decimal.precision = std::max(decimal.precision, b.decimal().precision);
    types.push_back({p.type(), decimal});
  }
  bool const carries_build =
    options.kind != join_kind::left_semi && options.kind != join_kind::left_anti;
  bool const carries_probe =
    options.kind != join_kind::right_semi && options.kind != join_kind::right_anti;
  if (carries_build) {
    for (auto c : options.build_payloads) {
      types.push_back({build.column(c).type(), build.column(c).decimal()});
    }
  }
  if (carries_probe) {
    for (auto c : options.probe_payloads) {
      types.push_back({probe.column(c).type(), probe.column(c).decimal()});
    }
  }

  storage_table b(build);
  storage_table p(probe);
  std::vector<size_type> bk;
  std::vector<size_type> pk;
  for (auto c : build_keys) { b.expand(build, c, bk, stream); }
  for (auto c : probe_keys) { p.expand(probe, c, pk, stream); }
  auto o = options;
  o.build_payloads.clear();
  o.probe_payloads.clear();
  if (options.output != output_form::index) {
    for (auto c : options.build_payloads) { b.expand(build, c, o.build_payloads, stream); }
    for (auto c : options.probe_payloads) { p.expand(probe, c, o.probe_payloads, stream); }
  }
  if (sink == nullptr) {
    auto r = join(b.view(), bk, p.view(), pk, o, stream, mr);
    restore_result(r, types, stream);
    return r;
  }
  join_batch_sink const restoring = [&](join_result&& batch) {
    restore_result(batch, types, stream);
    (*sink)(std::move(batch));
  };
  return join_batches(b.view(), bk, p.view(), pk, o, restoring, stream, mr);
}

bool groupby_has_logical(table_view const& input, std::vector<size_type> const& keys,
                         std::vector<aggregation> const& aggregations) {
  if (any_logical(input, keys)) { return true; }
  for (auto const& a : aggregations) {
    if (a.kind != aggregation_kind::count && any_logical(input, {a.column})) { return true; }
  }
  return false;
}

namespace {

/// How a requested aggregate comes out of the storage group-by's result columns.
enum class finish : std::uint8_t { none, retype, decimal_sum, decimal_avg };

struct aggregate_plan {
  finish how = finish::none;
  result_type type{};
  int scale = 0;  // decimal_avg: divide by 10^scale
};

void check_logical_aggregate(aggregation_kind k, type_id t, std::string const& name) {
  if (k == aggregation_kind::count || k == aggregation_kind::count_valid ||
      k == aggregation_kind::count_distinct || !is_logical(t)) {
    return;
  }
  bool const ok = t == type_id::bool8 || t == type_id::decimal64 ||
                  ((t == type_id::date32 || is_timestamp(t)) &&
                   (k == aggregation_kind::min || k == aggregation_kind::max));
  JOINERY_EXPECTS(ok, std::string(to_string(k)) + " of a " + name +
                        " column is not supported; " +
                        (t == type_id::decimal128
                           ? "decimal128 values take count and count_valid (decimal64 values "
                             "every aggregate)"
                           : "dates and timestamps take count, count_valid, min and max"));
}

/// The exact sums (value = high * 2^32 + low) and the value counts of the groups, on the host.
struct decimal_sums {
  column high;   // int64
  column low;    // uint64
};

i128 exact_sum(std::int64_t high, std::uint64_t low) {
  return static_cast<i128>(high) * (static_cast<i128>(1) << 32) + static_cast<i128>(low);
}

/// `out` (host) in the space of `like`.
column in_space_of(column out, column const& like, stream_ref stream) {
  if (host_accessible(like.space())) { return out; }
  return column::copy_of(out.view(), like.resource(), stream);
}

/// decimal128 sums from the int64 sums of the high halves and the uint64 sums of the low ones.
column combine_decimal_sums(column const& high, column const& low, decimal_format decimal,
                            stream_ref stream) {
  auto const hh = column::copy_of(high.view(), host_resource(), stream);
  auto const lh = column::copy_of(low.view(), host_resource(), stream);
  auto const n = hh.size();
  column out(type_id::decimal128, n);
  auto const* hi = hh.view().data_as<std::int64_t>();
  auto const* lo = lh.view().data_as<std::uint64_t>();
  auto* o = static_cast<unsigned char*>(out.data());
  for (size_type i = 0; i < n; ++i) {
    auto const v = exact_sum(hi[i], lo[i]);
    std::memcpy(o + i * 16, &v, 16);
  }
  auto const hv = hh.view();
  if (hv.nullable()) {
    std::memcpy(out.make_nullable(), hv.null_mask(), null_mask_bytes(n));
    out.set_null_count(hv.null_count());
  }
  out.set_type(type_id::decimal128, decimal);
  return in_space_of(std::move(out), high, stream);
}

/// float64 averages of decimal values: the exact sum over the count, scaled by 10^-scale.
column decimal_averages(column const& high, column const& low, column const& count, int scale,
                        stream_ref stream) {
  auto const hh = column::copy_of(high.view(), host_resource(), stream);
  auto const lh = column::copy_of(low.view(), host_resource(), stream);
  auto const ch = column::copy_of(count.view(), host_resource(), stream);
  auto const n = hh.size();
  column out(type_id::float64, n);
  auto const* hi = hh.view().data_as<std::int64_t>();
  auto const* lo = lh.view().data_as<std::uint64_t>();
  auto const* cnt = ch.view().data_as<std::int64_t>();
  auto* o = out.data_as<double>();
  auto const divisor = std::pow(10.0, scale);
  size_type nulls = 0;
  for (size_type i = 0; i < n; ++i) {
    o[i] = cnt[i] == 0 ? 0.0
                       : static_cast<double>(exact_sum(hi[i], lo[i])) /
                           static_cast<double>(cnt[i]) / divisor;
    nulls += cnt[i] == 0 ? 1 : 0;
  }
  if (nulls > 0) {  // a group without values has a NULL average
    auto* mask = out.make_nullable();
    for (size_type i = 0; i < n; ++i) {
      if (cnt[i] == 0) { mask[i >> 3] = static_cast<std::uint8_t>(mask[i >> 3] & ~(1U << (i & 7))); }
    }
    out.set_null_count(nulls);
  }
  return in_space_of(std::move(out), high, stream);
}

}  // namespace

type_id logical_result_type(aggregation_kind k, type_id input) {
  check_logical_aggregate(k, input, std::string(to_string(input)));
  switch (k) {
    case aggregation_kind::count:
    case aggregation_kind::count_valid:
    case aggregation_kind::count_distinct: return type_id::int64;
    case aggregation_kind::avg: return type_id::float64;
    case aggregation_kind::sum:
      return input == type_id::decimal64 ? type_id::decimal128 : type_id::int64;
    case aggregation_kind::min:
    case aggregation_kind::max: return input;
  }
  JOINERY_FAIL("unknown aggregation");
}

groupby_result logical_groupby(table_view const& input, std::vector<size_type> const& keys,
                               std::vector<aggregation> const& aggregations,
                               groupby_options const& options, stream_ref stream,
                               memory_resource_ref mr) {
  for (auto c : keys) {
    JOINERY_EXPECTS(c >= 0 && c < input.num_columns(),
                    "key column " + std::to_string(c) + " does not exist (the input has " +
                      std::to_string(input.num_columns()) + " columns)");
  }
  for (auto const& a : aggregations) {
    if (a.kind == aggregation_kind::count) { continue; }
    JOINERY_EXPECTS(a.column >= 0 && a.column < input.num_columns(),
                    "aggregated column " + std::to_string(a.column) +
                      " does not exist (the input has " + std::to_string(input.num_columns()) +
                      " columns)");
    check_logical_aggregate(a.kind, input.column(a.column).type(),
                            type_name(input.column(a.column)));
  }
  storage_table s(input);
  std::vector<size_type> storage_keys;
  std::vector<result_type> key_types;
  for (auto c : keys) {
    s.expand(input, c, storage_keys, stream);
    key_types.push_back({input.column(c).type(), input.column(c).decimal()});
  }
  std::vector<aggregation> storage_aggs;
  std::vector<aggregate_plan> plans;
  std::vector<column> owned;  // the 32-bit halves of summed decimal64 columns
  for (auto const& a : aggregations) {
    if (a.kind == aggregation_kind::count) {
      storage_aggs.push_back(a);
      plans.push_back({});
      continue;
    }
    auto const& v = input.column(a.column);
    auto const t = v.type();
    aggregate_plan plan{finish::none, {logical_result_type(a.kind, t), v.decimal()}, 0};
    if (t == type_id::decimal128) {  // count_valid: any half has the validity
      std::vector<size_type> halves;
      s.expand(input, a.column, halves, stream);
      storage_aggs.push_back({a.kind, halves[0]});
    } else if (t == type_id::decimal64 &&
               (a.kind == aggregation_kind::sum || a.kind == aggregation_kind::avg)) {
      // Exact sums from the sums of the 32-bit halves (int64 sums would wrap).
      auto h = split_halves(v, stream);
      auto const at = static_cast<size_type>(s.columns.size());
      s.columns.push_back(half_view(h.high, v));
      s.columns.push_back(half_view(h.low, v));
      owned.push_back(std::move(h.high));
      owned.push_back(std::move(h.low));
      storage_aggs.push_back({aggregation_kind::sum, at});
      storage_aggs.push_back({aggregation_kind::sum, at + 1});
      if (a.kind == aggregation_kind::sum) {
        plan.how = finish::decimal_sum;
        plan.type.decimal = {38, v.decimal().scale};
      } else {
        storage_aggs.push_back({aggregation_kind::count_valid, a.column});
        plan.how = finish::decimal_avg;
        plan.scale = v.decimal().scale;
      }
    } else {
      storage_aggs.push_back(a);
      if (is_logical(t) && a.kind != aggregation_kind::count_valid &&
          a.kind != aggregation_kind::avg) {
        plan.how = finish::retype;
      }
    }
    plans.push_back(plan);
  }

  auto r = groupby(s.view(), storage_keys, storage_aggs, options, stream, mr);
  auto cols = r.columns.release();
  std::vector<column> key_cols(std::make_move_iterator(cols.begin()),
                               std::make_move_iterator(cols.begin() +
                                                       static_cast<std::ptrdiff_t>(storage_keys.size())));
  auto out = restore(std::move(key_cols), key_types, stream);
  auto j = storage_keys.size();
  for (auto const& plan : plans) {
    switch (plan.how) {
      case finish::none: out.push_back(std::move(cols[j++])); break;
      case finish::retype:
        cols[j].set_type(plan.type.type, plan.type.decimal);
        out.push_back(std::move(cols[j++]));
        break;
      case finish::decimal_sum:
        out.push_back(combine_decimal_sums(cols[j], cols[j + 1], plan.type.decimal, stream));
        j += 2;
        break;
      case finish::decimal_avg:
        out.push_back(decimal_averages(cols[j], cols[j + 1], cols[j + 2], plan.scale, stream));
        j += 3;
        break;
    }
  }
  r.columns = table(std::move(out));
  return r;
}

}  // namespace joinery::detail::logical
