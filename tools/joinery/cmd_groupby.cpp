// joinery groupby: grouped aggregation of one file.
#include "cli.hpp"

#include <joinery/groupby.hpp>
#include <joinery/io.hpp>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace joinery::cli {

namespace {
struct groupby_args {
  std::string input, key, aggs;
  std::string algorithm = "automatic";
  std::string backend = "auto";
  std::string output;
  bool sort = false;
  bool summary = false;
};

void run_groupby(groupby_args const& a) {
  auto const in = io::read_table(a.input);
  auto const key = in.column_index(a.key);
  std::vector<aggregation> aggs;
  std::vector<std::string> names{a.key};
  for (auto const& item : split(a.aggs)) {
    auto const colon = item.find(':');
    auto const kind = aggregation_kind_from_string(item.substr(0, colon));
    if (kind == aggregation_kind::count) {
      JOINERY_EXPECTS(colon == std::string::npos, "count takes no column: write 'count'");
      aggs.push_back({kind, -1});
      names.emplace_back("count");
      continue;
    }
    JOINERY_EXPECTS(colon != std::string::npos,
                    "aggregate '" + item + "' needs a column, e.g. sum:price");
    auto const col = item.substr(colon + 1);
    aggs.push_back({kind, in.column_index(col)});
    names.push_back(item.substr(0, colon) + "_" + col);
  }
  JOINERY_EXPECTS(!aggs.empty(), "--agg names no aggregate (e.g. --agg sum:v,count)");
  groupby_options o;
  o.algorithm = groupby_algorithm_from_string(a.algorithm);
  o.backend = backend_from_string(a.backend);
  o.sort_by_key = a.sort;
  auto const r = groupby(in.view(), key, aggs, o);
  if (!a.output.empty()) {
    io::write_table(a.output, names, r.columns.view());
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
  auto* c = app.add_subcommand("groupby", "group one relation by a key and aggregate");
  c->add_option("--input", args->input, "CSV file or .npy directory")->required();
  c->add_option("--key", args->key, "key column")->required();
  c->add_option("--agg", args->aggs, "aggregates: sum:COL,min:COL,max:COL,avg:COL,count")
    ->required();
  c->add_option("--algorithm", args->algorithm,
                "automatic, global_hash, hash, sort, sort_transformed, sort_dictionary, "
                "partition, partition_transformed");
  c->add_option("--backend", args->backend, "auto, cpu or gpu");
  c->add_flag("--sort", args->sort, "order the groups by key");
  c->add_option("--output,-o", args->output, "result file (*.csv) or .npy directory");
  c->add_flag("--summary", args->summary,
              "print one JSON object: rows, checksum, algorithm, backend, seconds");
  c->callback([args] { run_groupby(*args); });
}

}  // namespace joinery::cli
