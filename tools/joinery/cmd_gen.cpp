// joinery gen: write a generated relation to CSV or a directory of .npy columns.
#include "cli.hpp"

#include <joinery/gen.hpp>
#include <joinery/io.hpp>

#include <iostream>
#include <memory>

namespace joinery::cli {

namespace {
struct gen_args {
  std::string kind = "primary";
  std::string rows;
  std::string domain = "0";
  double zipf = 0;
  double match_ratio = 1;
  double hot_key = 0;
  std::string key_type = "int32";
  std::int64_t key_offset = 1;
  int payloads = 0;
  std::string payload_type = "int32";
  std::uint64_t seed = 42;
  output_args output;
};

void run_gen(gen_args const& a) {
  a.output.check();
  gen::relation_spec s;
  if (a.kind == "primary") {
    s.kind = gen::key_kind::primary;
  } else if (a.kind == "foreign") {
    s.kind = gen::key_kind::foreign;
  } else {
    throw input_error("unknown --kind '" + a.kind + "'; known: primary, foreign");
  }
  s.rows = parse_size(a.rows, "--rows");
  s.domain = parse_size(a.domain, "--domain");
  s.zipf = a.zipf;
  s.match_ratio = a.match_ratio;
  s.hot_key_fraction = a.hot_key;
  s.key_type = type_from_string(a.key_type);
  s.key_offset = a.key_offset;
  JOINERY_EXPECTS(a.payloads >= 0 && a.payloads <= 16, "--payloads must be between 0 and 16");
  s.payload_types.assign(static_cast<std::size_t>(a.payloads), type_from_string(a.payload_type));
  s.seed = a.seed;
  auto const t = gen::generate(s);
  a.output.write(gen::column_names(s), t.view());
  std::cerr << "wrote " << s.rows << " rows to " << a.output.path << "\n";
}
}  // namespace

void add_gen(CLI::App& app) {
  auto args = std::make_shared<gen_args>();
  auto* c = app.add_subcommand("gen", "generate a relation (primary or foreign keys + payloads)");
  c->add_option("--kind", args->kind, "primary (shuffled dense range) or foreign (drawn keys)");
  c->add_option("--rows", args->rows, "number of rows (e.g. 1000000 or 2^20)")->required();
  c->add_option("--domain", args->domain, "foreign: keys drawn from this many values (0: rows)");
  c->add_option("--zipf", args->zipf, "foreign: Zipf exponent (0 = uniform)");
  c->add_option("--match-ratio", args->match_ratio, "primary: fraction of keys that can match");
  c->add_option("--hot-key", args->hot_key, "fraction of rows set to one hot key");
  c->add_option("--key-type", args->key_type, "int32, int64, uint32 or uint64");
  c->add_option("--key-offset", args->key_offset, "smallest key of the domain");
  c->add_option("--payloads", args->payloads, "number of payload columns (0..16)");
  c->add_option("--payload-type", args->payload_type, "payload type (int8..uint64)");
  c->add_option("--seed", args->seed, "random seed");
  add_output_options(c, args->output, true, "");
  c->callback([args] { run_gen(*args); });
}

}  // namespace joinery::cli
