// The general key path: encode the keys of each side into one integer column, run a join
// algorithm on those, and derive the requested kind and output form from its row ids.
#include "join/general/general_join.hpp"

#include "core/backend_check.hpp"
#include "core/wall_clock.hpp"
#include "primitives/row_ops.hpp"

#include <joinery/primitives/checksum.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

namespace joinery::detail {

namespace {

using detail::clock_type;
using detail::seconds_since;

bool is_left_kind(join_kind k) {
  return k == join_kind::inner || k == join_kind::left_semi || k == join_kind::left_anti ||
         k == join_kind::left_outer;
}
bool has_build_rows(join_kind k) { return k != join_kind::left_semi && k != join_kind::left_anti; }
bool has_probe_rows(join_kind k) {
  return k != join_kind::right_semi && k != join_kind::right_anti;
}

bool valid_index(table_view const& t, size_type c) { return c >= 0 && c < t.num_columns(); }

void check_index(table_view const& t, size_type c, char const* side, char const* what) {
  JOINERY_EXPECTS(valid_index(t, c), std::string(side) + " " + what + " column " +
                                       std::to_string(c) + " does not exist (the " + side +
                                       " table has " + std::to_string(t.num_columns()) +
                                       " columns)");
}

void check_request(table_view const& build, std::vector<size_type> const& build_keys,
                   table_view const& probe, std::vector<size_type> const& probe_keys,
                   join_options const& options) {
  JOINERY_EXPECTS(!build_keys.empty() && build_keys.size() == probe_keys.size(),
                  "a join needs the same number of key columns on both sides (at least one), got " +
                    std::to_string(build_keys.size()) + " build and " +
                    std::to_string(probe_keys.size()) + " probe key columns");
  JOINERY_EXPECTS(build_keys.size() <= static_cast<std::size_t>(keys::max_key_columns),
                  "a join takes at most " + std::to_string(keys::max_key_columns) +
                    " key columns, got " + std::to_string(build_keys.size()));
  for (std::size_t i = 0; i < build_keys.size(); ++i) {
    check_index(build, build_keys[i], "build", "key");
    check_index(probe, probe_keys[i], "probe", "key");
    auto const bt = build.column(build_keys[i]).type();
    auto const pt = probe.column(probe_keys[i]).type();
    JOINERY_EXPECTS(bt == pt, "mismatched key types in key column pair " + std::to_string(i) +
                                ": build key is " + std::string(to_string(bt)) +
                                ", probe key is " + std::string(to_string(pt)) +
                                "; both keys of a pair must have the same type");
  }
  for (auto c : options.build_payloads) { check_index(build, c, "build", "payload"); }
  for (auto c : options.probe_payloads) { check_index(probe, c, "probe", "payload"); }
  JOINERY_EXPECTS(options.pred.kind == predicate::kind_type::equal,
                  "the band predicate takes one key column of int32, int64, uint32 or uint64 "
                  "without NULLs and an inner or left join kind");
  if (options.output == output_form::index) {
    check_index_type(options.index_type, build.num_rows(), probe.num_rows());
  }
}

backend resolve_backend(join_options const& options) {
  if (options.backend != backend::automatic) { return options.backend; }
  bool const gpu = built_with_cuda() && device_count() > 0 &&
                   (options.algorithm == join_algorithm::automatic ||
                    join_supported(backend::gpu, options.algorithm, join_kind::inner,
                                   predicate::kind_type::equal));
  return gpu ? backend::gpu : backend::cpu;
}

/// The checksum of a gathered result column, floats summed as their bits. The gathers store 0
/// under every NULL, so the values alone give the sum over the valid ones.
std::uint64_t column_checksum(column const& c, stream_ref stream) {
  auto const v = c.view();
  auto type = v.type();
  if (is_floating(type)) { type = type == type_id::float32 ? type_id::uint32 : type_id::uint64; }
  return checksum(column_view(type, v.data(), v.size(), v.space()), stream);
}

/// The table or aggregate form of a left kind straight from the algorithm, on packed keys that
/// every row has: the probe side carries its key columns as payloads (and, for the aggregate
/// form, the packed key negated, so that the checksum of the packed key cancels out and the
/// checksum is that of the key columns).
join_result packed_key_join(keys::readable_columns const& b, keys::readable_columns const& p, keys::encoded_keys& eb,
                            keys::encoded_keys& ep, std::vector<size_type> const& probe_keys,
                            join_options const& options, backend be, keys::row_ops& ops,
                            stream_ref stream, memory_resource_ref mr) {
  std::vector<column_view> build{eb.keys.view()};
  std::vector<column_view> probe{ep.keys.view()};
  join_options eo = options;
  eo.backend = be;  // where the keys were encoded
  eo.build_payloads.clear();
  eo.probe_payloads.clear();
  for (auto c : options.build_payloads) {
    eo.build_payloads.push_back(static_cast<size_type>(build.size()));
    build.push_back(b.at(c));
  }
  for (auto c : probe_keys) {
    eo.probe_payloads.push_back(static_cast<size_type>(probe.size()));
    probe.push_back(p.at(c));
  }
  for (auto c : options.probe_payloads) {
    eo.probe_payloads.push_back(static_cast<size_type>(probe.size()));
    probe.push_back(p.at(c));
  }
  column negated;
  if (options.output == output_form::aggregate) {
    negated = ops.negate(ep.keys.view());
    eo.probe_payloads.push_back(static_cast<size_type>(probe.size()));
    probe.push_back(negated.view());
  }
  auto r = join(table_view(std::move(build)), 0, table_view(std::move(probe)), 0, eo, stream, mr);
  if (options.output == output_form::table) {
    // [packed key, build payloads, probe keys, probe payloads] -> [keys, build, probe payloads]
    auto cols = r.columns.release();
    bool const with_build = options.kind != join_kind::left_semi &&
                            options.kind != join_kind::left_anti;
    auto const nb = with_build ? options.build_payloads.size() : std::size_t{0};
    auto const nk = probe_keys.size();
    std::vector<column> out;
    for (std::size_t i = 0; i < nk; ++i) { out.push_back(std::move(cols[1 + nb + i])); }
    for (std::size_t i = 0; i < nb; ++i) { out.push_back(std::move(cols[1 + i])); }
    for (std::size_t i = 1 + nb + nk; i < cols.size(); ++i) { out.push_back(std::move(cols[i])); }
    r.aggregate.checksum = 0;
    for (auto const& c : out) { r.aggregate.checksum += column_checksum(c, stream); }
    r.columns = table(std::move(out));
  }
  return r;
}

}  // namespace

bool needs_general_path(table_view const& build, std::vector<size_type> const& build_keys,
                        table_view const& probe, std::vector<size_type> const& probe_keys,
                        join_options const& options) {
  if (build_keys.size() != 1 || probe_keys.size() != 1 || !is_left_kind(options.kind)) {
    return true;
  }
  if (!valid_index(build, build_keys[0]) || !valid_index(probe, probe_keys[0])) {
    return false;  // the one-key path reports it
  }
  for (auto const* k : {&build.column(build_keys[0]), &probe.column(probe_keys[0])}) {
    if (!is_key_type(k->type()) || k->null_count() > 0) { return true; }
  }
  if (options.output == output_form::index) { return false; }
  auto const payload_needs = [](table_view const& t, std::vector<size_type> const& cols) {
    return std::any_of(cols.begin(), cols.end(), [&](size_type c) {
      return valid_index(t, c) && (is_floating(t.column(c).type()) || t.column(c).null_count() > 0);
    });
  };
  return payload_needs(build, options.build_payloads) ||
         payload_needs(probe, options.probe_payloads);
}

join_result general_join(table_view const& build, std::vector<size_type> const& build_keys,
                         table_view const& probe, std::vector<size_type> const& probe_keys,
                         join_options const& options, stream_ref stream, memory_resource_ref mr) {
  scoped_range range("joinery::join (general keys)");
  auto const t0 = clock_type::now();
  check_request(build, build_keys, probe, probe_keys, options);
  auto const kind = options.kind;
  auto const be = resolve_backend(options);
  bool const materialize = options.output != output_form::index;

  // The row operations run with the join: on the GPU (host columns copied there once, as the
  // algorithms' own inputs are) or on the host.
  auto used_build = build_keys;
  auto used_probe = probe_keys;
  if (materialize) {
    used_build.insert(used_build.end(), options.build_payloads.begin(),
                      options.build_payloads.end());
    used_probe.insert(used_probe.end(), options.probe_payloads.begin(),
                      options.probe_payloads.end());
  }
  auto const on_device_memory = [](table_view const& t, std::vector<size_type> const& cols) {
    return std::any_of(cols.begin(), cols.end(), [&](size_type c) {
      return t.column(c).space() == memory_space::device;
    });
  };
  bool const on_device = be == backend::gpu;
  if (on_device) {
    expect_gpu_backend_available();
  }
  // Host-resident inputs without a resource get host results, as from the one-key path.
  if (mr == nullptr && on_device && !on_device_memory(build, used_build) &&
      !on_device_memory(probe, used_probe)) {
    mr = host_resource();
  }
  auto ops = on_device ? keys::make_device_row_ops(stream) : keys::make_host_row_ops();
  auto const b = keys::make_readable(build, used_build, ops->space(), stream);
  auto const p = keys::make_readable(probe, used_probe, ops->space(), stream);
  auto const B = build.num_rows();
  auto const P = probe.num_rows();

  keys::key_layout lb;
  keys::key_layout lp;
  lb.count = lp.count = static_cast<int>(build_keys.size());
  lb.nulls_equal = lp.nulls_equal = options.nulls == null_equality::equal;
  lb.nans_equal = lp.nans_equal = options.nans_equal;
  for (int i = 0; i < lb.count; ++i) {
    lb.columns[i] = keys::key_column_of(b.at(build_keys[static_cast<std::size_t>(i)]));
    lp.columns[i] = keys::key_column_of(p.at(probe_keys[static_cast<std::size_t>(i)]));
  }
  auto const key_bits = keys::plan_key_fields(*ops, {{&lb, B}, {&lp, P}});
  auto const key_type = key_bits <= 32 ? type_id::uint32 : type_id::uint64;
  auto eb = ops->encode(lb, B, key_type);
  auto ep = ops->encode(lp, P, key_type);
  ops->synchronize();
  auto const encode_seconds = seconds_since(t0);

  bool const exact = lb.packed;
  // Packed keys, a left kind, every row matchable and plain integer payloads: the algorithm
  // makes the table or aggregate itself, the key columns riding along as probe payloads.
  auto const plain = [](keys::readable_columns const& side, std::vector<size_type> const& cols) {
    return std::all_of(cols.begin(), cols.end(), [&](size_type c) {
      return side.at(c).null_count() == 0 && !is_floating(side.at(c).type());
    });
  };
  if (exact && is_left_kind(kind) && eb.all_rows && ep.all_rows && materialize &&
      plain(b, options.build_payloads) && plain(p, options.probe_payloads) &&
      plain(p, probe_keys)) {
    auto result = packed_key_join(b, p, eb, ep, probe_keys, options, be, *ops, stream, mr);
    result.stats.phases.insert(result.stats.phases.begin(), {"encode keys", encode_seconds});
    result.stats.seconds = seconds_since(t0);
    return result;
  }
  auto engine_kind = join_kind::inner;
  if (exact && is_left_kind(kind)) { engine_kind = kind; }
  if (exact && kind == join_kind::full_outer) { engine_kind = join_kind::left_outer; }
  join_options eo = options;
  eo.kind = engine_kind;
  eo.output = output_form::index;
  eo.index_type = type_id::int64;
  eo.build_payloads.clear();
  eo.probe_payloads.clear();
  eo.backend = be;
  auto engine = join(table_view({eb.keys.view()}), 0, table_view({ep.keys.view()}), 0, eo, stream,
                     nullptr);
  auto const t_assemble = clock_type::now();

  column br = std::move(engine.build_rows);
  column pr = std::move(engine.probe_rows);
  if (has_build_rows(engine_kind) && !eb.all_rows) { br = ops->remap(br, eb.row_ids); }
  if (!ep.all_rows) { pr = ops->remap(pr, ep.row_ids); }
  if (!exact) { ops->keep_equal_pairs(lb, lp, br, pr); }
  auto const unmatchable_probe = [&] {
    return ep.all_rows ? ops->constant(0, 0) : ops->select(ep.matchable, 0);
  };
  auto const with_lone_rows = [&](column& rows, column& other, column&& lone, bool lone_in_rows) {
    auto const n = lone.size();
    if (lone_in_rows) {
      rows = ops->concat(rows, lone);
      other = ops->concat(other, ops->constant(n, -1));
    } else {
      rows = ops->concat(rows, ops->constant(n, -1));
      other = ops->concat(other, lone);
    }
  };

  switch (kind) {
    case join_kind::inner: break;
    case join_kind::left_semi:
      if (!exact) { pr = ops->select(ops->flags_of(pr, P), 1); }
      break;
    case join_kind::left_anti:
      pr = exact ? ops->concat(pr, unmatchable_probe()) : ops->select(ops->flags_of(pr, P), 0);
      break;
    case join_kind::left_outer:
    case join_kind::full_outer: {
      // br gets -1 for the probe rows without a match: unmatchable ones, and (hashed) the rest.
      auto lone = exact ? unmatchable_probe() : ops->select(ops->flags_of(pr, P), 0);
      with_lone_rows(pr, br, std::move(lone), true);
      if (kind == join_kind::full_outer) {
        with_lone_rows(br, pr, ops->select(ops->flags_of(br, B), 0), true);
      }
      break;
    }
    case join_kind::right_semi: br = ops->select(ops->flags_of(br, B), 1); break;
    case join_kind::right_anti: br = ops->select(ops->flags_of(br, B), 0); break;
    case join_kind::right_outer:
      with_lone_rows(br, pr, ops->select(ops->flags_of(br, B), 0), true);
      break;
  }

  join_result result;
  result.form = options.output;
  bool const build_side = has_build_rows(kind);
  bool const probe_side = has_probe_rows(kind);
  result.aggregate.count = static_cast<std::uint64_t>(probe_side ? pr.size() : br.size());
  // The output columns in order: keys (probe values, else build values), build payloads, probe
  // payloads; f(source, its row ids, fallback source, its row ids).
  column_view const none;
  auto const for_each_output_column = [&](auto&& f) {
    for (std::size_t i = 0; i < build_keys.size(); ++i) {
      auto const& bk = b.at(build_keys[i]);
      auto const& pk = p.at(probe_keys[i]);
      if (!probe_side) {
        f(bk, br.view(), none, none);
      } else {
        f(pk, pr.view(), build_side ? bk : none, build_side ? br.view() : none);
      }
    }
    if (build_side) {
      for (auto c : options.build_payloads) { f(b.at(c), br.view(), none, none); }
    }
    if (probe_side) {
      for (auto c : options.probe_payloads) { f(p.at(c), pr.view(), none, none); }
    }
  };
  switch (options.output) {
    case output_form::index:
      if (options.index_type == type_id::int32) {
        if (build_side) { br = ops->narrow(br); }
        if (probe_side) { pr = ops->narrow(pr); }
      }
      if (build_side) { result.build_rows = keys::moved_to(std::move(br), mr, stream); }
      if (probe_side) { result.probe_rows = keys::moved_to(std::move(pr), mr, stream); }
      break;
    case output_form::aggregate:
      // Summed where the values are, nothing written.
      for_each_output_column([&](auto const& a, auto const& ia, auto const& fb, auto const& ib) {
        result.aggregate.checksum += ops->gathered_checksum(a, ia, fb, ib);
      });
      break;
    case output_form::table: {
      std::vector<column> cols;
      for_each_output_column([&](auto const& a, auto const& ia, auto const& fb, auto const& ib) {
        cols.push_back(ops->gather(a, ia, fb, ib));
        result.aggregate.checksum += column_checksum(cols.back(), stream);
      });
      for (auto& c : cols) { c = keys::moved_to(std::move(c), mr, stream); }
      result.columns = table(std::move(cols));
      break;
    }
  }
  ops->synchronize();

  result.stats = std::move(engine.stats);
  result.stats.phases.insert(result.stats.phases.begin(), {"encode keys", encode_seconds});
  result.stats.phases.push_back({"assemble result", seconds_since(t_assemble)});
  result.stats.seconds = seconds_since(t0);
  return result;
}

}  // namespace joinery::detail
