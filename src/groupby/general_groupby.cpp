// The general key path of the group-by: pack the keys, make the values NULL-free, run a group-by
// algorithm on those, and decode its groups into key columns and SQL's aggregates.
#include "groupby/general_groupby.hpp"

#include "core/backend_check.hpp"
#include "core/wall_clock.hpp"
#include "primitives/row_ops.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <tuple>

namespace joinery::detail {

namespace {

using detail::clock_type;
using detail::seconds_since;

bool valid_index(table_view const& t, size_type c) { return c >= 0 && c < t.num_columns(); }

bool narrow_integer(type_id t) { return size_of(t) < 4 && !is_floating(t); }

/// The type the algorithms aggregate a column of type t as: 1-/2-byte integers widened to 4.
type_id value_type_for(type_id t) {
  if (!narrow_integer(t)) { return t; }
  return is_signed(t) ? type_id::int32 : type_id::uint32;
}

/// The bits of the identity of min (the type's largest value) or max (its lowest) in type t.
std::uint64_t identity_bits(aggregation_kind k, type_id t) {
  bool const min = k == aggregation_kind::min;
  switch (t) {
    case type_id::float32: return min ? 0x7f800000ULL : 0xff800000ULL;
    case type_id::float64: return min ? 0x7ff0000000000000ULL : 0xfff0000000000000ULL;
    default: break;
  }
  auto const bits = 8 * size_of(t);
  auto const all = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
  if (!is_signed(t)) { return min ? all : 0; }
  auto const sign = 1ULL << (bits - 1);
  return min ? all ^ sign : sign;
}

/// How one requested aggregate comes out of the algorithm's aggregates.
struct output_plan {
  aggregation request;
  type_id input = type_id::int64;
  int value = -1;       ///< the algorithm's aggregate giving the value (count, sum, min, ...)
  int valid_count = -1;  ///< the count of valid values, where NULLs must be found
};

column host_copy(column_view const& c) {
  return host_accessible(c.space()) ? column::copy_of(c) : column::copy_of(c, host_resource());
}

/// Clears the validity of every group whose count of valid values is 0.
void null_where_empty(column& out, std::int64_t const* valid_count) {
  auto const n = out.size();
  size_type nulls = 0;
  for (size_type i = 0; i < n; ++i) { nulls += valid_count[i] == 0 ? 1 : 0; }
  if (nulls == 0) { return; }
  auto* mask = out.make_nullable();
  for (size_type i = 0; i < n; ++i) {
    if (valid_count[i] == 0) { mask[i >> 3] &= static_cast<std::uint8_t>(~(1U << (i & 7))); }
  }
  out.set_null_count(nulls);
}

/// The key column i of every group, decoded from the packed codes: the code plus the field's
/// minimum is the ordered value, or (a ranked column) the index of it in `dictionary`, whose
/// size is the rank of NULL.
column decode_key(keys::key_layout const& k, keys::key_column const& original, int i, type_id type,
                  column_view const& codes, bool ranked, column const& dictionary) {
  auto const n = codes.size();
  column out(type, n);
  auto const& f = k.fields[i];
  auto const mask_bits = f.bits >= 64 ? ~0ULL : (1ULL << f.bits) - 1;
  bool const wide = codes.type() == type_id::uint64;
  std::vector<std::uint8_t> is_null(static_cast<std::size_t>(n), 0);
  size_type nulls = 0;
  keys::with_unsigned_of_width(size_of(type), [&](auto tag) {
    using U = typename decltype(tag)::type;
    auto* d = static_cast<U*>(out.data());
    for (size_type g = 0; g < n; ++g) {
      std::uint64_t const packed = wide ? codes.data_as<std::uint64_t>()[g]
                                        : codes.data_as<std::uint32_t>()[g];
      auto const code = f.shift >= 64 ? 0 : (packed >> f.shift) & mask_bits;
      bool null = f.null_coded && code == f.null_code;
      auto ordered = code + f.min;
      if (ranked) {
        null = static_cast<size_type>(ordered) == dictionary.size();
        ordered = null ? 0 : dictionary.view().data_as<std::uint64_t>()[ordered];
      }
      if (null) {
        d[g] = 0;
        is_null[static_cast<std::size_t>(g)] = 1;
        ++nulls;
      } else {
        d[g] = static_cast<U>(keys::value_bits_of(original, ordered));
      }
    }
  });
  if (nulls > 0) {
    auto* m = out.make_nullable();
    for (size_type g = 0; g < n; ++g) {
      if (is_null[static_cast<std::size_t>(g)] != 0) {
        m[g >> 3] &= static_cast<std::uint8_t>(~(1U << (g & 7)));
      }
    }
    out.set_null_count(nulls);
  }
  return out;
}

/// min / max computed over a widened type, narrowed back to the input's.
column narrow_to(column const& c, type_id type) {
  if (c.type() == type) { return column::copy_of(c.view()); }
  auto const n = c.size();
  column out(type, n);
  keys::with_unsigned_of_width(size_of(type), [&](auto tag) {
    using U = typename decltype(tag)::type;
    auto const* s = static_cast<std::uint32_t const*>(c.view().data());
    auto* d = static_cast<U*>(out.data());
    for (size_type i = 0; i < n; ++i) { d[i] = static_cast<U>(s[i]); }
  });
  return out;
}

void check_request(table_view const& input, std::vector<size_type> const& keys,
                   std::vector<aggregation> const& aggs) {
  JOINERY_EXPECTS(!keys.empty() && keys.size() <= static_cast<std::size_t>(keys::max_key_columns),
                  "a group-by takes 1 to " + std::to_string(keys::max_key_columns) +
                    " key columns, got " + std::to_string(keys.size()));
  for (auto k : keys) {
    JOINERY_EXPECTS(valid_index(input, k), "group-by key column " + std::to_string(k) +
                                             " does not exist (the table has " +
                                             std::to_string(input.num_columns()) + " columns)");
  }
  for (auto const& a : aggs) {
    if (a.kind == aggregation_kind::count) { continue; }
    JOINERY_EXPECTS(valid_index(input, a.column),
                    std::string(to_string(a.kind)) + " over column " + std::to_string(a.column) +
                      ", which does not exist (the table has " +
                      std::to_string(input.num_columns()) + " columns)");
  }
}

}  // namespace

bool needs_general_groupby(table_view const& input, std::vector<size_type> const& key_columns,
                           std::vector<aggregation> const& aggregations) {
  if (key_columns.size() != 1) { return true; }
  if (!valid_index(input, key_columns[0])) { return false; }  // the one-key path reports it
  auto const& key = input.column(key_columns[0]);
  if (!is_key_type(key.type()) || key.null_count() > 0) { return true; }
  return std::any_of(aggregations.begin(), aggregations.end(), [&](aggregation const& a) {
    if (a.kind == aggregation_kind::count) { return false; }
    if (a.kind == aggregation_kind::count_valid) { return true; }
    return valid_index(input, a.column) && (input.column(a.column).null_count() > 0 ||
                                            narrow_integer(input.column(a.column).type()));
  });
}

groupby_result general_groupby(table_view const& input, std::vector<size_type> const& key_columns,
                               std::vector<aggregation> const& aggregations,
                               groupby_options const& options, stream_ref stream,
                               memory_resource_ref mr) {
  scoped_range range("joinery::groupby (general keys)");
  auto const t0 = clock_type::now();
  check_request(input, key_columns, aggregations);
  auto be = options.backend;
  if (be == backend::automatic) {
    be = device_count() > 0 && !groupby_algorithms_on(backend::gpu).empty() ? backend::gpu
                                                                             : backend::cpu;
  }
  bool const on_device = be == backend::gpu;
  if (on_device) {
    expect_gpu_backend_available();
  }
  // Results land where the keys live unless a resource is given (the one-key rule).
  if (mr == nullptr) {
    bool const device_keys = std::any_of(key_columns.begin(), key_columns.end(), [&](size_type k) {
      return input.column(k).space() == memory_space::device;
    });
    mr = on_device && device_keys ? device_resource() : host_resource();
  }

  auto ops = on_device ? keys::make_device_row_ops(stream) : keys::make_host_row_ops();
  // The columns read, where the operations can read them.
  std::vector<size_type> used = key_columns;
  for (auto const& a : aggregations) {
    if (a.kind != aggregation_kind::count) { used.push_back(a.column); }
  }
  auto const readable_input = keys::make_readable(input, used, ops->space(), stream);
  auto const readable = [&](size_type c) { return readable_input.at(c); };
  auto const rows = input.num_rows();

  keys::key_layout layout;
  layout.count = static_cast<int>(key_columns.size());
  layout.nulls_equal = true;  // one group for NULL, one for NaN
  layout.nans_equal = true;
  for (int i = 0; i < layout.count; ++i) {
    layout.columns[i] = keys::key_column_of(readable(key_columns[static_cast<std::size_t>(i)]));
  }
  auto const original = layout;
  auto bits = keys::plan_key_fields(*ops, {{&layout, rows}});
  // Value ranges too wide to pack side by side (a float64 key beside another, two full-range
  // int64 keys): each column is replaced by the rank of its value among the column's distinct
  // values (NULL: the last rank), whose widths add up to what the data holds.
  std::vector<column> dense;
  std::vector<column> dictionaries(static_cast<std::size_t>(layout.count));
  if (bits > 64) {
    for (int i = 0; i < layout.count; ++i) {
      auto& dict = dictionaries[static_cast<std::size_t>(i)];
      dense.push_back(ops->dense_codes(original.columns[i], rows, dict));
      layout.columns[i] = keys::key_column_of(dense.back().view());
    }
    bits = keys::plan_key_fields(*ops, {{&layout, rows}});
  }
  JOINERY_EXPECTS(bits <= 64, "the group-by's key columns hold more distinct values together "
                              "than 64 bits of ranks can tell apart (" + std::to_string(bits) +
                                " bits)");
  auto const key_type = bits <= 32 ? type_id::uint32 : type_id::uint64;
  auto encoded = ops->encode(layout, rows, key_type);

  // The algorithm's inputs: the packed key, then each value column as it needs it.
  std::vector<column> prepared;
  std::vector<column_view> inputs{encoded.keys.view()};
  std::map<std::tuple<size_type, std::uint64_t, int>, size_type> prepared_at;
  auto const value_input = [&](size_type c, std::uint64_t fill, bool validity) -> size_type {
    auto const key = std::make_tuple(c, fill, validity ? 1 : 0);
    if (auto it = prepared_at.find(key); it != prepared_at.end()) { return it->second; }
    auto const& v = readable(c);
    if (validity) {
      prepared.push_back(ops->validity_as_int32(v));
    } else if (v.null_count() > 0 || narrow_integer(v.type())) {
      prepared.push_back(ops->fill_nulls(v, value_type_for(v.type()), fill));
    } else {
      inputs.push_back(v);
      return prepared_at[key] = static_cast<size_type>(inputs.size() - 1);
    }
    inputs.push_back(prepared.back().view());
    return prepared_at[key] = static_cast<size_type>(inputs.size() - 1);
  };
  std::vector<aggregation> engine_aggs;
  auto const engine_agg = [&](aggregation a) {
    auto const same = std::find_if(engine_aggs.begin(), engine_aggs.end(), [&](auto const& e) {
      return e.kind == a.kind && (a.kind == aggregation_kind::count || e.column == a.column);
    });
    if (same != engine_aggs.end()) { return static_cast<int>(same - engine_aggs.begin()); }
    engine_aggs.push_back(a);
    return static_cast<int>(engine_aggs.size() - 1);
  };
  std::vector<output_plan> plan;
  for (auto const& a : aggregations) {
    output_plan o{a};
    bool const nullable = a.kind != aggregation_kind::count && input.column(a.column).null_count() > 0;
    if (a.kind != aggregation_kind::count) { o.input = input.column(a.column).type(); }
    auto const valid_count = [&] {
      return engine_agg({aggregation_kind::sum, value_input(a.column, 0, true)});
    };
    switch (a.kind) {
      case aggregation_kind::count_distinct:
        JOINERY_FAIL("count_distinct reached the general key path (composed_groupby runs it)");
      case aggregation_kind::count: o.value = engine_agg({aggregation_kind::count, -1}); break;
      case aggregation_kind::count_valid:
        o.value = nullable ? valid_count() : engine_agg({aggregation_kind::count, -1});
        break;
      case aggregation_kind::sum:
        o.value = engine_agg({aggregation_kind::sum, value_input(a.column, 0, false)});
        if (nullable) { o.valid_count = valid_count(); }
        break;
      case aggregation_kind::min:
      case aggregation_kind::max:
        o.value = engine_agg(
          {a.kind, value_input(a.column, identity_bits(a.kind, value_type_for(o.input)), false)});
        if (nullable) { o.valid_count = valid_count(); }
        break;
      case aggregation_kind::avg:
        if (nullable) {
          o.value = engine_agg({aggregation_kind::sum, value_input(a.column, 0, false)});
          o.valid_count = valid_count();
        } else {
          o.value = engine_agg({aggregation_kind::avg, value_input(a.column, 0, false)});
        }
        break;
    }
    plan.push_back(o);
  }
  ops->synchronize();
  auto const encode_seconds = seconds_since(t0);

  groupby_options eo = options;
  eo.backend = be;
  auto engine = groupby(table_view(std::move(inputs)), 0, engine_aggs, eo, stream, nullptr);
  auto const t_decode = clock_type::now();

  // Decoded on the host (one row per group), then placed where the result belongs.
  std::vector<column> host;
  for (auto const& c : engine.columns.columns()) { host.push_back(host_copy(c.view())); }
  std::vector<column> out;
  bool const ranked = !dense.empty();
  if (ranked) {
    for (auto& d : dictionaries) { d = host_copy(d.view()); }
  }
  for (int i = 0; i < layout.count; ++i) {
    out.push_back(decode_key(layout, original.columns[i], i,
                             input.column(key_columns[static_cast<std::size_t>(i)]).type(),
                             host.front().view(), ranked,
                             dictionaries[static_cast<std::size_t>(i)]));
  }
  for (auto const& o : plan) {
    auto const& value = host[static_cast<std::size_t>(o.value + 1)];
    auto const* valid = o.valid_count < 0 ? nullptr
                        : host[static_cast<std::size_t>(o.valid_count + 1)].view().data_as<std::int64_t>();
    column c;
    if (o.request.kind == aggregation_kind::avg && valid != nullptr) {
      c = column(type_id::float64, value.size());
      auto* d = c.data_as<double>();
      for (size_type g = 0; g < value.size(); ++g) {
        double const sum = is_floating(o.input)   ? value.view().data_as<double>()[g]
                           : is_signed(o.input) ? static_cast<double>(value.view().data_as<std::int64_t>()[g])
                                                : static_cast<double>(value.view().data_as<std::uint64_t>()[g]);
        d[g] = valid[g] == 0 ? 0.0 : sum / static_cast<double>(valid[g]);
      }
    } else if (o.request.kind == aggregation_kind::min || o.request.kind == aggregation_kind::max) {
      c = narrow_to(value, o.input);
    } else {
      c = column::copy_of(value.view());
    }
    if (valid != nullptr) { null_where_empty(c, valid); }
    out.push_back(std::move(c));
  }
  groupby_result result;
  for (auto& c : out) {
    c = keys::moved_to(std::move(c), mr, stream);
  }
  result.columns = table(std::move(out));
  result.stats = std::move(engine.stats);
  result.stats.phases.insert(result.stats.phases.begin(), {"encode keys", encode_seconds});
  result.stats.phases.push_back({"decode groups", seconds_since(t_decode)});
  result.stats.seconds = seconds_since(t0);
  return result;
}

}  // namespace joinery::detail
