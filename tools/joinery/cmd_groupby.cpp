// joinery groupby: grouped aggregation of one file.
#include "cli.hpp"

#include <joinery/groupby.hpp>
#include <joinery/io.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

namespace joinery::cli {

namespace {
struct groupby_args {
  std::string input, key, aggs;
  std::string algorithm = "automatic";
  std::string backend = "auto";
  std::string devices;
  std::string exchange = "automatic";
  std::string device_budget;
  std::string null_literal;
  output_args output;
  bool sort = false;
  bool summary = false;
  std::string sum_overflow = "wrap";
};

/// One item of --agg: "count", or "KIND:COLUMN" (blanks around either part are dropped).
struct agg_item {
  aggregation_kind kind;
  std::string column;  // empty for count
};

std::vector<agg_item> parse_aggs(std::string const& list) {
  std::vector<agg_item> out;
  for (auto const& item : split(list)) {
    auto const colon = item.find(':');
    auto const kind_name = trim(item.substr(0, colon));
    auto const kind = aggregation_kind_from_string(kind_name);
    if (kind == aggregation_kind::count) {
      JOINERY_EXPECTS(colon == std::string::npos, "count takes no column: write 'count'");
      out.push_back({kind, {}});
      continue;
    }
    auto const column = colon == std::string::npos ? std::string() : trim(item.substr(colon + 1));
    JOINERY_EXPECTS(!column.empty(), "aggregate '" + item + "' needs a column, e.g. sum:price");
    out.push_back({kind, column});
  }
  JOINERY_EXPECTS(!out.empty(), "--agg names no aggregate (e.g. --agg sum:v,count)");
  return out;
}

void run_groupby(groupby_args const& a) {
  auto const items = parse_aggs(a.aggs);
  a.output.check();
  // Only the keys and the aggregated columns are read.
  auto const key_names = split(a.key);
  JOINERY_EXPECTS(!key_names.empty(), "--key names no column (e.g. --key k or --key a,b)");
  auto wanted = key_names;
  for (auto const& it : items) {
    if (!it.column.empty() && std::find(wanted.begin(), wanted.end(), it.column) == wanted.end()) {
      wanted.push_back(it.column);
    }
  }
  io::csv_options csv;
  csv.null_literal = a.null_literal;
  auto const in = io::read_table(a.input, wanted, csv);
  std::vector<size_type> keys;
  for (auto const& n : key_names) { keys.push_back(in.column_index(n)); }
  std::vector<aggregation> aggs;
  std::vector<std::string> names = key_names;
  for (auto const& it : items) {
    if (it.kind == aggregation_kind::count) {
      aggs.push_back({it.kind, -1});
      names.emplace_back("count");
    } else {
      aggs.push_back({it.kind, in.column_index(it.column)});
      names.push_back(std::string(to_string(it.kind)) + "_" + it.column);
    }
  }
  groupby_options o;
  o.algorithm = groupby_algorithm_from_string(a.algorithm);
  o.backend = backend_from_string(a.backend);
  o.sort_by_key = a.sort;
  o.sum_overflow = overflow_policy_from_string(a.sum_overflow);
  if (!a.devices.empty()) { o.devices = parse_devices(a.devices, "--devices"); }
  o.exchange = exchange_method_from_string(a.exchange);
  if (!a.device_budget.empty()) {
    o.device_memory_budget = parse_bytes(a.device_budget, "--device-budget");
  }
  auto const r = groupby(in.view(), keys, aggs, o);
  if (a.output.given()) {
    a.output.write(names, r.columns.view());
  } else if (!a.summary) {
    print_csv(std::cout, names, r.columns.view());
  }
  if (a.summary) {
    nlohmann::json j;
    j["rows"] = r.num_groups();
    j["checksum"] = table_checksum(r.columns.view());  // integer columns (avg is not summed)
    j["algorithm"] = std::string(to_string(r.stats.algorithm));
    j["backend"] = std::string(to_string(r.stats.backend));
    j["seconds"] = r.stats.seconds;
    std::cout << j.dump() << "\n";
  }
}
}  // namespace

void add_groupby(CLI::App& app) {
  auto args = std::make_shared<groupby_args>();
  auto* c = app.add_subcommand("groupby", "group one relation by key columns and aggregate");
  c->add_option("--input", args->input, "CSV file or .npy directory")->required();
  c->add_option("--key", args->key,
                "key column(s): K or A,B,... (a NULL key is a group, as in SQL)")
    ->required();
  c->add_option("--agg", args->aggs,
                "aggregates, comma separated: sum:COL, min:COL, max:COL, avg:COL, "
                "count_valid:COL (non-NULL values), count_distinct:COL (distinct non-NULL "
                "values), count (rows); NULL values are skipped")
    ->required();
  c->add_option("--algorithm", args->algorithm,
                "automatic, global_hash, hash, sort, sort_transformed, sort_dictionary, "
                "partition, partition_transformed, multi_gpu, streamed");
  c->add_option("--backend", args->backend, "auto, cpu or gpu");
  c->add_option("--devices", args->devices,
                "multi_gpu: the GPUs, one rank each, e.g. 0,1,2,3 or all (the default); a GPU "
                "may repeat (several ranks on one GPU)");
  c->add_option("--exchange", args->exchange,
                "multi_gpu: how partial groups move between GPUs: automatic, peer_copy or nccl");
  c->add_option("--null", args->null_literal,
                "CSV input: a field reading this text (unquoted) is NULL, as an empty one is");
  c->add_option("--device-budget", args->device_budget,
                "GPU backend: the most device memory the group-by may use, e.g. 8GiB (default: "
                "the free memory); automatic streams host data that would not fit it");
  c->add_flag("--sort", args->sort, "order the groups by the key columns (NULLs last)");
  c->add_option("--sum-overflow", args->sum_overflow,
                "sums of 64-bit integers past their type's range: wrap (the default, modulo "
                "2^64) or error (fail, writing nothing)");
  add_output_options(c, args->output, false, "; without it and --summary, CSV to stdout");
  c->add_flag("--summary", args->summary,
              "print one JSON object: rows, checksum, algorithm, backend, seconds");
  c->callback([args] { run_groupby(*args); });
}

}  // namespace joinery::cli
