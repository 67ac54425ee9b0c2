// joinery join: join two files on a key and write or summarise the result.
#include "cli.hpp"

#include <joinery/distributed.hpp>
#include <joinery/io.hpp>
#include <joinery/join.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

namespace joinery::cli {

namespace {
struct join_args {
  std::string build, probe, on, build_key, probe_key;
  std::string algorithm = "automatic";
  std::string backend = "auto";
  std::string kind = "inner";
  std::string strategy = "automatic";
  std::string writer = "direct";
  double load_factor = 0.5;
  std::string build_columns = "*", probe_columns = "*";
  std::optional<std::int64_t> band;
  std::string device_budget;
  std::string devices;
  std::string exchange = "automatic";
  std::optional<int> rank, world;
  std::string rendezvous;
  output_args output;
  bool summary = false;
  bool nulls_equal = false;
  bool nans_equal = false;
  std::string null_literal;
};

/// The columns of `file` the join needs: all of them for "*", else the keys and those listed.
io::named_table read_side(std::string const& file, std::vector<std::string> const& keys,
                          std::string const& list, io::csv_options const& csv) {
  if (list == "*") { return io::read_table(file, csv); }
  auto names = keys;
  for (auto const& n : split(list)) {
    if (std::find(names.begin(), names.end(), n) == names.end()) { names.push_back(n); }
  }
  return io::read_table(file, names, csv);
}

/// Column indices named in `list` ("*": every column but the keys).
std::vector<size_type> pick_columns(io::named_table const& t, std::vector<size_type> const& keys,
                                    std::string const& list) {
  std::vector<size_type> out;
  if (list == "*") {
    for (size_type i = 0; i < t.data.num_columns(); ++i) {
      if (std::find(keys.begin(), keys.end(), i) == keys.end()) { out.push_back(i); }
    }
    return out;
  }
  for (auto const& name : split(list)) { out.push_back(t.column_index(name)); }
  return out;
}

/// Rows [first, last) of a host table of fixed-width columns without NULLs,
/// without copies (a part of a distributed table).
table_view rows_of(table_view const& t, size_type first, size_type last) {
  std::vector<column_view> cols;
  for (auto const& c : t) {
    auto const* p = static_cast<unsigned char const*>(c.data());
    auto const width = static_cast<size_type>(size_of(c.type()));
    cols.emplace_back(c.type(), p == nullptr ? nullptr : p + first * width, last - first,
                      c.space());
  }
  return table_view(std::move(cols));
}

/// "out.csv" -> "out.rank1.csv", "dir" -> "dir.rank1": each rank's own output.
std::string rank_path(std::string const& path, int rank) {
  auto const slash = path.find_last_of('/');
  auto const dot = path.find_last_of('.');
  auto const tag = ".rank" + std::to_string(rank);
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == 0) {
    return path + tag;
  }
  return path.substr(0, dot) + tag + path.substr(dot);
}

/// This process as one rank of a group (--rank, --world, --rendezvous): it joins
/// its share of both files' rows with the group's distributed join and writes
/// its piece of the result to its own file; the summary gives the group's
/// totals.
void run_join_as_rank(join_args const& a, io::named_table const& build,
                      std::vector<size_type> const& bk, io::named_table const& probe,
                      std::vector<size_type> const& pk, join_options o,
                      std::vector<std::string> const& names, std::vector<type_id> const& types) {
  JOINERY_EXPECTS(a.world && a.rank && !a.rendezvous.empty(),
                  "one process per GPU needs --rank, --world and --rendezvous together");
  JOINERY_EXPECTS(a.summary || a.output.given(),
                  "a rank of a group writes its piece of the result with --output (each rank to "
                  "its own file) or prints the group's --summary; it does not print rows");
  JOINERY_EXPECTS(bk.size() == 1 && pk.size() == 1,
                  "one process per GPU joins on one key column a side");
  // Every rank reads the same files, so these refusals are the same on every rank.
  auto const expect_plain = [](io::named_table const& t, size_type c, bool key) {
    auto const view = t.view();
    auto const& col = view.column(c);
    auto const type = col.type();
    bool const integer = !is_floating(type) && !is_string(type) && !is_logical(type);
    JOINERY_EXPECTS((key ? is_key_type(type) : integer) && col.null_count() == 0,
                    "one process per GPU joins on int32, int64, uint32 or uint64 keys and carries "
                    "integer columns, without NULLs; column '" +
                      t.names[static_cast<std::size_t>(c)] + "' is " +
                      std::string(to_string(type)) + (col.null_count() > 0 ? " with NULLs" : ""));
  };
  expect_plain(build, bk.front(), true);
  expect_plain(probe, pk.front(), true);
  for (auto c : o.build_payloads) { expect_plain(build, c, false); }
  for (auto c : o.probe_payloads) { expect_plain(probe, c, false); }
  // Refusals that depend on this rank's own arguments and files reach every rank through the
  // agreement after joining: a rank that stopped before would leave the others waiting.
  std::string refusal;
  auto const refuse_unless = [&](auto&& check) {
    if (!refusal.empty()) { return; }
    try {
      check();
    } catch (std::exception const& e) { refusal = e.what(); }
  };
  refuse_unless([&] {
    JOINERY_EXPECTS(a.exchange == "automatic" || a.exchange == "nccl",
                    "a group of processes exchanges through NCCL; --exchange " + a.exchange +
                      " serves ranks of one process");
  });
  int device = *a.rank % std::max(1, device_count());
  refuse_unless([&] {
    if (a.devices.empty()) { return; }
    auto const d = parse_devices(a.devices, "--devices");
    JOINERY_EXPECTS(d.size() == 1, "with --rank, --devices names this rank's one GPU");
    JOINERY_EXPECTS(d.front() >= 0 && d.front() < device_count(),
                    "no GPU with id " + std::to_string(d.front()) + " (" +
                      std::to_string(device_count()) + " present)");
    device = d.front();
  });
  o.devices.clear();
  if (o.algorithm == join_algorithm::automatic) { o.algorithm = join_algorithm::multi_gpu_hash; }
  auto const group = rank_group::joined(*a.rank, *a.world, device, a.rendezvous);
  output_args out = a.output;
  if (out.given()) {
    out.path = rank_path(a.output.path, *a.rank);
    refuse_unless([&] { out.check(); });
  }
  group.agree(refusal);
  auto const share = [&](table_view const& t) {
    auto const n = t.num_rows();
    auto const first = n / *a.world * *a.rank + n % *a.world * *a.rank / *a.world;
    auto const r1 = *a.rank + 1;
    auto const last = n / *a.world * r1 + n % *a.world * r1 / *a.world;
    return rows_of(t, first, last);
  };
  distributed_table_view const b{{share(build.view())}};
  distributed_table_view const p{{share(probe.view())}};
  auto const r = join(group, b, bk.front(), p, pk.front(), o, host_resource());
  auto const& piece = r.parts.front();
  if (out.given()) {
    io::table_writer file(out.path, names, types,
                          out.overwrite ? io::existing_output::replace
                                        : io::existing_output::refuse);
    file.append(piece.columns.view());
    file.finish();
  }
  if (a.summary) {
    nlohmann::json j;
    j["rank"] = *a.rank;
    j["world"] = *a.world;
    j["rows"] = r.aggregate.count;
    j["checksum"] = r.aggregate.checksum;
    j["rank_rows"] = piece.aggregate.count;
    j["algorithm"] = std::string(to_string(r.stats.algorithm));
    j["backend"] = std::string(to_string(r.stats.backend));
    j["seconds"] = r.stats.seconds;
    for (auto const& ph : r.stats.phases) { j["phases"][ph.name] = ph.seconds; }
    std::cout << j.dump() << "\n";
  }
}

void run_join(join_args const& a) {
  JOINERY_EXPECTS(!a.on.empty() || (!a.build_key.empty() && !a.probe_key.empty()),
                  "name the key with --on KEY, or with --build-key A --probe-key B");
  JOINERY_EXPECTS(a.on.empty() || (a.build_key.empty() && a.probe_key.empty()),
                  "use either --on or --build-key/--probe-key, not both");
  JOINERY_EXPECTS(!a.band || *a.band >= 0,
                  "--band " + std::to_string(a.band.value_or(0)) +
                    " is negative; the band predicate build.key <= probe.key <= build.key + D "
                    "needs D >= 0");
  bool const as_rank = a.rank || a.world || !a.rendezvous.empty();
  if (!as_rank) { a.output.check(); }  // a rank checks its own file
  auto const budget = a.device_budget.empty() ? std::size_t{0}
                                              : parse_bytes(a.device_budget, "--device-budget");
  auto const build_keys = split(a.on.empty() ? a.build_key : a.on);
  auto const probe_keys = split(a.on.empty() ? a.probe_key : a.on);
  JOINERY_EXPECTS(build_keys.size() == probe_keys.size(),
                  "--build-key names " + std::to_string(build_keys.size()) +
                    " columns and --probe-key " + std::to_string(probe_keys.size()) +
                    "; they pair up, so give both the same number");
  io::csv_options csv;
  csv.null_literal = a.null_literal;
  auto const build = read_side(a.build, build_keys, a.build_columns, csv);
  auto const probe = read_side(a.probe, probe_keys, a.probe_columns, csv);
  std::vector<size_type> bk;
  std::vector<size_type> pk;
  for (auto const& n : build_keys) { bk.push_back(build.column_index(n)); }
  for (auto const& n : probe_keys) { pk.push_back(probe.column_index(n)); }

  join_options o;
  o.algorithm = join_algorithm_from_string(a.algorithm);
  o.backend = backend_from_string(a.backend);
  o.kind = join_kind_from_string(a.kind);
  o.strategy = materialization_from_string(a.strategy);
  o.writer = output_writer_from_string(a.writer);
  o.hash_load_factor = a.load_factor;
  o.device_memory_budget = budget;
  if (!a.devices.empty() && !as_rank) { o.devices = parse_devices(a.devices, "--devices"); }
  o.tuning.exchange = exchange_method_from_string(a.exchange);
  if (a.band) { o.pred = predicate::band(static_cast<std::uint64_t>(*a.band)); }
  o.nulls = a.nulls_equal ? null_equality::equal : null_equality::unequal;
  o.nans_equal = a.nans_equal;
  o.build_payloads = pick_columns(build, bk, a.build_columns);
  o.probe_payloads = pick_columns(probe, pk, a.probe_columns);
  bool const write = a.output.given() || !a.summary;
  // Only a summary: the aggregate form gives the same count and checksum without materializing.
  o.output = write ? output_form::table : output_form::aggregate;

  // Keys carry the probe side's names (the build side's where only build rows come out).
  bool const probe_only = o.kind == join_kind::left_semi || o.kind == join_kind::left_anti;
  bool const build_only = o.kind == join_kind::right_semi || o.kind == join_kind::right_anti;
  std::vector<std::string> names;
  std::vector<type_id> types;
  for (std::size_t i = 0; i < pk.size(); ++i) {
    auto const& side = build_only ? build : probe;
    auto const key = build_only ? bk[i] : pk[i];
    names.push_back(side.names[static_cast<std::size_t>(key)]);
    types.push_back(side.view().column(key).type());
  }
  if (!probe_only) {
    for (auto c : o.build_payloads) {
      names.push_back("build." + build.names[static_cast<std::size_t>(c)]);
      types.push_back(build.view().column(c).type());
    }
  }
  if (!build_only) {
    for (auto c : o.probe_payloads) {
      names.push_back("probe." + probe.names[static_cast<std::size_t>(c)]);
      types.push_back(probe.view().column(c).type());
    }
  }
  if (as_rank) {
    run_join_as_rank(a, build, bk, probe, pk, o, names, types);
    return;
  }

  join_result r;
  if (!write) {
    r = join(build.view(), bk, probe.view(), pk, o);
  } else {
    // The result goes out batch by batch (one per probe chunk of the streamed join), so that it
    // never has to exist in one piece; a file appears only once complete.
    std::optional<io::table_writer> file;
    if (a.output.given()) {
      file.emplace(a.output.path, names, types,
                   a.output.overwrite ? io::existing_output::replace : io::existing_output::refuse);
    }
    bool header = true;
    r = join_batches(build.view(), bk, probe.view(), pk, o, [&](join_result&& batch) {
      if (file) {
        file->append(batch.columns.view());
      } else {
        print_csv(std::cout, names, batch.columns.view(), header);
        header = false;
      }
    });
    if (file) {
      file->finish();
    } else if (header) {
      print_csv(std::cout, names, table_view{}, true);  // no batch: the header alone
    }
  }
  if (a.summary) {
    nlohmann::json j;
    j["rows"] = r.aggregate.count;
    j["checksum"] = r.aggregate.checksum;
    j["algorithm"] = std::string(to_string(r.stats.algorithm));
    j["backend"] = std::string(to_string(r.stats.backend));
    if (r.stats.strategy != materialization::automatic) {
      j["strategy"] = std::string(to_string(r.stats.strategy));
    }
    j["seconds"] = r.stats.seconds;
    for (auto const& p : r.stats.phases) { j["phases"][p.name] = p.seconds; }
    std::cout << j.dump() << "\n";
  }
}
}  // namespace

void add_join(CLI::App& app) {
  auto args = std::make_shared<join_args>();
  auto* c = app.add_subcommand("join", "join a build and a probe relation on one or several key columns");
  c->add_option("--build", args->build, "build side: CSV file or .npy directory")->required();
  c->add_option("--probe", args->probe, "probe side: CSV file or .npy directory")->required();
  c->add_option("--on", args->on, "key column(s), same names on both sides: KEY or A,B,...");
  c->add_option("--build-key", args->build_key, "key column(s) of the build side: A or A,B,...");
  c->add_option("--probe-key", args->probe_key,
                "key column(s) of the probe side, paired with --build-key's in order");
  c->add_option("--algorithm", args->algorithm,
                "automatic, nested_loop, indexed_nested_loop, sort_merge, radix_hash, "
                "no_partition_hash, streamed, multi_gpu_sort_merge, multi_gpu_hash");
  c->add_option("--backend", args->backend, "auto, cpu or gpu");
  c->add_option("--kind", args->kind,
                "inner, left_semi, left_anti, left_outer, right_semi, right_anti, right_outer or "
                "full_outer (left: the probe side, right: the build side)");
  c->add_flag("--nulls-equal", args->nulls_equal,
              "a NULL key matches a NULL key (default: SQL, a NULL key matches nothing)");
  c->add_flag("--nans-equal", args->nans_equal, "a NaN key matches a NaN key (default: no)");
  c->add_option("--strategy", args->strategy,
                "GPU table output: automatic, gfur or gftr (how sort_merge and radix_hash "
                "materialize payloads)");
  c->add_option("--load-factor", args->load_factor,
                "no_partition_hash: the most its hash table is filled, in (0, 1) (0.5)");
  c->add_option("--writer", args->writer,
                "GPU output: direct (output buffer first, the default) or three_phase (count, "
                "scan, write)");
  c->add_option("--band", args->band,
                "band predicate: build.key <= probe.key <= build.key + D (nested loops)");
  c->add_option("--device-budget", args->device_budget,
                "GPU backend: the most device memory the join may use, e.g. 8GiB (default: the "
                "free memory); automatic streams host data that would not fit it");
  c->add_option("--devices", args->devices,
                "multi_gpu_*: the GPUs, one rank each, e.g. 0,1,2,3 or all (the default); a GPU "
                "may repeat (several ranks on one GPU)");
  c->add_option("--exchange", args->exchange,
                "multi_gpu_*: how rows move between GPUs: automatic, peer_copy or nccl");
  c->add_option("--rank", args->rank,
                "one process per GPU: this process's rank in 0..W-1 (with --world and "
                "--rendezvous); it joins its share of the rows and writes its piece of the "
                "result to --output with .rankR before the extension");
  c->add_option("--world", args->world, "one process per GPU: how many processes (ranks)");
  c->add_option("--rendezvous", args->rendezvous,
                "one process per GPU: a file path every rank reaches, which must not exist; rank "
                "0 creates it for the others and removes it once all have joined");
  c->add_option("--null", args->null_literal,
                "CSV inputs: a field reading this text (unquoted) is NULL, as an empty one is");
  c->add_option("--build-columns", args->build_columns,
                "build columns to output, comma separated ('*': all but the key, '': none)");
  c->add_option("--probe-columns", args->probe_columns,
                "probe columns to output, comma separated ('*': all but the key, '': none)");
  add_output_options(c, args->output, false, "; without it and --summary, CSV to stdout");
  c->add_flag("--summary", args->summary,
              "print one JSON object: rows, checksum, algorithm, backend, seconds, phases");
  c->callback([args] { run_join(*args); });
}

}  // namespace joinery::cli
