// joinery bench: named experiments, warm-up, median of N runs, JSON lines out.
#include "bench_groupby_gpu.hpp"
#include "bench_multi_gpu.hpp"
#include "bench_keys.hpp"
#include "bench_out_of_core.hpp"
#include "bench_primitives.hpp"
#include "cli.hpp"
#include "timing.hpp"

#include <joinery/gen.hpp>
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>
#include <joinery/primitives/partition.hpp>

#include "join/materialize_model.hpp"  // parse_bandwidths: --device-bandwidths

#include <nlohmann/json.hpp>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#ifdef JOINERY_HAS_REVISION_HEADER
#include "joinery_revision.hpp"  // generated at every build (cmake/revision.cmake)
#endif
#ifndef JOINERY_GIT_REVISION_AT_BUILD
#define JOINERY_GIT_REVISION_AT_BUILD "unknown"
#endif

namespace joinery::cli {

namespace {

struct bench_args {
  std::string experiment;
  int runs = 5;
  int warmup = 1;
  std::string out;
  std::string backend = "auto";
  std::string algorithm = "automatic";
  std::string build_rows = "2^24";
  std::string probe_rows = "2^25";
  std::string key_type = "int32";
  double zipf = 0;
  bool spread_keys = false;
  double match_ratio = 1;
  int payloads = 1;
  std::string output_form = "aggregate";
  std::string strategy = "automatic";
  std::string index_type = "int64";
  std::string writer = "direct";
  double load_factor = 0.5;
  // The GPU joins' join_options::tuning (A/B runs; empty: the library's choice).
  std::string css_search;         // binary or sequential
  std::string radix_partition;    // automatic or cub
  std::string device_bandwidths;  // seven comma-separated numbers (parse_bandwidths)
  swwc_options swwc;  // primitives: --swwc-*, --hswwc-* (bench_primitives.hpp)
  std::string rows;  // empty: the experiment's default (2^24; primitives and gpu-groupby 2^28)
  std::string bits;  // primitives: digit widths, comma-separated (empty: 8..11)
  std::string groups = "2^10";
  std::string min_groups;  // gpu-groupby: the smallest g (empty: 1)
  std::string max_rows = "2^24";
  std::string groupby_tuning;  // gpu-groupby --tuning: KEY=VALUE,... (groupby_tuning)
  std::string shapes;          // gpu-groupby --shapes: aggregate shapes, comma separated
  std::string parts;           // out-of-core: sections to run
  std::uint64_t seed = 42;
};

/// --rows if given, else the experiment's default. (An explicit --rows equal to another
/// experiment's default used to be taken for "not given".)
/// The items of a comma-separated list, empty ones kept (so that "a,,b" and "a," can be refused).
std::vector<std::string> comma_items(std::string const& list) {
  std::vector<std::string> items;
  for (std::size_t at = 0; at <= list.size();) {
    auto const end = std::min(list.find(',', at), list.size());
    items.push_back(list.substr(at, end - at));
    at = end + 1;
  }
  return items;
}

std::int64_t rows_or(bench_args const& a, std::int64_t fallback) {
  return a.rows.empty() ? fallback : parse_size(a.rows, "--rows");
}

std::string run_command(char const* cmd) {
  std::string out;
  if (FILE* p = popen(cmd, "r")) {
    char buf[256];
    while (fgets(buf, sizeof(buf), p) != nullptr) { out += buf; }
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) { out.pop_back(); }
  return out;
}

std::string git_revision() {
  if (char const* env = std::getenv("JOINERY_GIT_REVISION")) { return env; }
  // The binary's own revision first: a lent GPU machine runs binaries built elsewhere, in a
  // copy of the tree whose git metadata may be older than the build.
  std::string const built = JOINERY_GIT_REVISION_AT_BUILD;
  if (built != "unknown") { return built; }
  return run_command("git rev-parse --short HEAD 2>/dev/null");
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto const p = line.find(':');
      return p == std::string::npos ? line : line.substr(p + 2);
    }
  }
  return "unknown CPU";
}

std::string today() {
  auto const t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::ostringstream os;
  os << std::put_time(&tm, "%Y-%m-%d");
  return os.str();
}

backend resolve_backend(std::string const& name, bool has_gpu_algorithms) {
  auto be = backend_from_string(name);
  if (be == backend::automatic) {
    be = (device_count() > 0 && has_gpu_algorithms) ? backend::gpu : backend::cpu;
  }
  return be;
}

table place(table_view const& t, backend be) {
  std::vector<column> cols;
  auto* mr = be == backend::gpu ? device_resource() : host_resource();
  for (auto const& c : t) { cols.push_back(column::copy_of(c, mr)); }
  return table(std::move(cols));
}

/// One measured configuration: warm-up, `runs` timed calls, medians of the total and phases.
class recorder {
 public:
  recorder(bench_args const& a, std::string experiment)
      : args_(a), experiment_(std::move(experiment)), revision_(git_revision()), date_(today()) {
    if (!a.out.empty()) {
      auto const parent = std::filesystem::path(a.out).parent_path();
      if (!parent.empty()) { std::filesystem::create_directories(parent); }
      // Checked now, opened at the first record: an experiment that refuses to run (no GPU, bad
      // options) leaves no empty file behind.
      bool const existed = std::filesystem::exists(a.out);
      file_.open(a.out, std::ios::app);
      if (!file_) { throw input_error("cannot open benchmark output " + a.out); }
      if (!existed) {
        file_.close();
        std::filesystem::remove(a.out);
      }
    }
  }

  /// `call` runs the operation once and returns its stats-derived JSON (phases, checksum, ...).
  nlohmann::json measure(nlohmann::json params, backend be, std::int64_t tuples,
                         std::function<nlohmann::json()> const& call) {
    JOINERY_EXPECTS(args_.runs >= 1, "--runs must be at least 1");
    stream_ref const stream = default_stream();
    nlohmann::json last;
    for (int i = 0; i < args_.warmup; ++i) {
      progress(params, "warm-up", i + 1, args_.warmup);
      last = call();
    }
    std::vector<double> times;
    std::map<std::string, std::vector<double>> phases;
    for (int i = 0; i < args_.runs; ++i) {
      progress(params, "run", i + 1, args_.runs);
      times.push_back(time_call(be == backend::gpu, stream, [&] { last = call(); }));
      for (auto const& [name, s] : last["phases"].items()) { phases[name].push_back(s.get<double>()); }
    }
    if (isatty(STDERR_FILENO)) { std::cerr << "\r\033[K"; }
    nlohmann::json j = params;
    j["experiment"] = experiment_;
    j["revision"] = revision_;
    j["date"] = date_;
    j["backend"] = std::string(to_string(be));
    j["device"] = be == backend::gpu ? get_device_info(0).name : cpu_model();
    j["host_cpu"] = cpu_model();
    j["threads"] = omp_get_max_threads();
    j["warmup"] = args_.warmup;
    j["runs"] = args_.runs;
    j["seconds"] = times;
    auto const med = median(times);
    j["median_s"] = med;
    j["min_s"] = *std::min_element(times.begin(), times.end());
    j["max_s"] = *std::max_element(times.begin(), times.end());
    j["tuples"] = tuples;
    j["throughput_gtuples_s"] = med > 0 ? static_cast<double>(tuples) / med / 1e9 : 0.0;
    nlohmann::json ph = nlohmann::json::object();
    for (auto const& [name, v] : phases) { ph[name] = median(v); }
    j["phase_median_s"] = ph;
    for (auto const& [k, v] : last.items()) {
      if (k != "phases") { j[k] = v; }
    }
    if (!args_.out.empty() && !file_.is_open()) {
      file_.open(args_.out, std::ios::app);
      if (!file_) { throw input_error("cannot open benchmark output " + args_.out); }
    }
    if (file_.is_open()) { file_ << j.dump() << "\n" << std::flush; }
    std::cout << experiment_ << " " << j["backend"].get<std::string>() << " "
              << j.value("algorithm", std::string("?")) << " " << params.dump() << ": median "
              << std::setprecision(4) << med * 1e3 << " ms, " << j["throughput_gtuples_s"].get<double>()
              << " G tuples/s (" << args_.runs << " runs, " << j["threads"].get<int>()
              << " host threads)";
    if (j.contains("strategy_used")) {
      std::cout << "; " << j["strategy_used"].get<std::string>() << " used, model: gfur "
                << j["predicted_gfur_ms"].get<double>() << " ms, gftr "
                << j["predicted_gftr_ms"].get<double>() << " ms of materialization";
    }
    std::cout << "\n";
    return j;
  }

 private:
  void progress(nlohmann::json const& params, char const* what, int i, int n) {
    if (!isatty(STDERR_FILENO)) { return; }
    std::cerr << "\r\033[K[bench " << experiment_ << "] " << params.dump() << " " << what << " "
              << i << "/" << n << std::flush;
  }

  bench_args const& args_;
  std::string experiment_;
  std::string revision_;
  std::string date_;
  std::ofstream file_;
};

nlohmann::json phases_json(std::vector<phase_time> const& phases) {
  nlohmann::json p = nlohmann::json::object();
  for (auto const& ph : phases) { p[ph.name] = ph.seconds; }
  return p;
}

struct join_point {
  std::int64_t build_rows, probe_rows;
  type_id key;
  double zipf, match_ratio;
  int payloads;
  output_form form;
  /// Many-to-many: both sides foreign keys over this many distinct keys (0: primary-foreign).
  std::int64_t mn_keys = 0;
  /// Table form: how the GPU's sorting joins materialize (GFUR, GFTR or the model's choice).
  materialization strategy = materialization::automatic;
  /// Index form: the row ids' type (int64, or int32 as libcudf's and the papers' joins write).
  type_id index_type = type_id::int64;
  /// GPU: the direct output buffer first (default) or the three phases from the start.
  output_writer writer = output_writer::direct;
  double load_factor = 0.5;  ///< no_partition_hash's table
  /// GPU: join_options::tuning (--css-search, --radix-partition, --device-bandwidths).
  join_tuning tuning{};
};

struct join_data {
  table build;
  table probe;
};

join_data make_join_data(join_point const& p, backend be, std::uint64_t seed) {
  gen::relation_spec r;
  r.rows = p.build_rows;
  r.kind = p.mn_keys > 0 ? gen::key_kind::foreign : gen::key_kind::primary;
  r.domain = p.mn_keys;
  r.key_type = p.key;
  r.match_ratio = p.match_ratio;
  r.payload_types.assign(static_cast<std::size_t>(p.payloads), p.key);
  r.seed = seed;
  gen::relation_spec s = r;
  s.kind = gen::key_kind::foreign;
  s.rows = p.probe_rows;
  s.domain = std::max<std::int64_t>(p.build_rows, 1);
  s.match_ratio = 1;
  s.zipf = p.zipf;
  s.domain = p.mn_keys > 0 ? p.mn_keys : s.domain;
  s.seed = seed + 1;
  return {place(gen::generate(r).view(), be), place(gen::generate(s).view(), be)};
}

nlohmann::json measure_join(recorder& rec, join_point const& p, join_data const& data, backend be,
                            join_algorithm algo) {
  auto const& build = data.build;
  auto const& probe = data.probe;
  join_options o;
  o.algorithm = algo;
  o.backend = be;
  o.output = p.form;
  o.strategy = p.strategy;
  o.index_type = p.index_type;
  o.writer = p.writer;
  o.hash_load_factor = p.load_factor;
  o.tuning = p.tuning;
  for (int i = 1; i <= p.payloads; ++i) {
    o.build_payloads.push_back(i);
    o.probe_payloads.push_back(i);
  }
  nlohmann::json params{{"build_rows", p.build_rows}, {"probe_rows", p.probe_rows},
                        {"key_type", std::string(to_string(p.key))}, {"zipf", p.zipf},
                        {"match_ratio", p.match_ratio}, {"payloads", p.payloads},
                        {"output", std::string(to_string(p.form))},
                        {"algorithm", std::string(to_string(algo))}};
  if (p.mn_keys > 0) { params["mn_keys"] = p.mn_keys; }
  if (p.form == output_form::table) { params["strategy"] = std::string(to_string(p.strategy)); }
  if (p.form == output_form::index) { params["index_type"] = std::string(to_string(p.index_type)); }
  if (p.writer != output_writer::direct) { params["writer"] = std::string(to_string(p.writer)); }
  if (algo == join_algorithm::no_partition_hash) { params["load_factor"] = p.load_factor; }
  if (p.tuning.css_search != join_tuning{}.css_search) {
    params["css_search"] = std::string(to_string(p.tuning.css_search));
  }
  if (p.tuning.radix_partition != join_tuning{}.radix_partition) {
    params["radix_partition"] = std::string(to_string(p.tuning.radix_partition));
  }
  if (auto const& bw = p.tuning.bandwidths) {
    params["device_bandwidths"] = {bw->sequential,    bw->clustered_gather,
                                   bw->unclustered_gather, bw->l2_bytes,
                                   bw->unclustered_column_bytes, bw->sort_pass_4_4,
                                   bw->sort_pass_4_8};
  }
  return rec.measure(params, be, p.build_rows + p.probe_rows, [&] {
    auto const res = join(build.view(), 0, probe.view(), 0, o);
    nlohmann::json j{{"phases", phases_json(res.stats.phases)},
                     {"algorithm", std::string(to_string(res.stats.algorithm))},
                     {"rows_out", res.aggregate.count},
                     {"checksum", res.aggregate.checksum},
                     {"bytes_moved", res.stats.bytes_moved}};
    if (p.form == output_form::table) {
      j["strategy_used"] = std::string(to_string(res.stats.strategy));
      j["predicted_gfur_ms"] = res.stats.predicted_gfur_seconds * 1e3;
      j["predicted_gftr_ms"] = res.stats.predicted_gftr_seconds * 1e3;
    }
    return j;
  });
}

nlohmann::json run_join_point(recorder& rec, join_point const& p, backend be,
                              join_algorithm algo, std::uint64_t seed) {
  return measure_join(rec, p, make_join_data(p, be, seed), be, algo);
}

/// The GPU joins (BENCHMARKS.md, "gpu-joins"): the default |R| = M/2 primary keys
/// joined with |S| = M uniform foreign keys (M = --max-rows, default 2^28), join index output,
/// (with an int32 index, and written in three phases), then the sweeps: 8-byte keys,
/// many-to-many, |R| = |S|, Zipf, match ratio, |R|:|S| from 1:1 to 1:32.
void run_gpu_joins_bench(recorder& rec, bench_args const& a, join_tuning const& tuning) {
  JOINERY_EXPECTS(device_count() > 0, "bench gpu-joins needs a GPU");
  auto const m = a.max_rows == bench_args{}.max_rows ? std::int64_t{1} << 28
                                                     : parse_size(a.max_rows, "--max-rows");
  std::vector<join_algorithm> algos;
  for (auto algo : join_algorithms_on(backend::gpu)) {
    if (algo != join_algorithm::nested_loop) { algos.push_back(algo); }  // quadratic
  }
  auto sweep = [&](join_point p) {
    p.tuning = tuning;
    auto const data = make_join_data(p, backend::gpu, a.seed);
    for (auto algo : algos) { measure_join(rec, p, data, backend::gpu, algo); }
  };
  auto const i32 = type_id::int32;
  join_point const def{m / 2, m, i32, 0.0, 1.0, 0, output_form::index};
  sweep(def);
  {
    // One payload column a side asked for: row ids do not depend on payloads, nor may their time.
    auto def1 = def;
    def1.payloads = 1;
    sweep(def1);
  }
  {
    // The same with an int32 index (half the output bytes), as the roofline counts it.
    auto def32 = def;
    def32.index_type = type_id::int32;
    sweep(def32);
    // Each algorithm's two writers: He et al.'s three phases against the direct output buffer.
    auto def3 = def;
    def3.writer = output_writer::three_phase;
    sweep(def3);
  }
  {
    // The CPU backend on this machine's host, same workload.
    auto const data = make_join_data(def, backend::cpu, a.seed);
    measure_join(rec, def, data, backend::cpu, join_algorithm::radix_hash);
  }
  sweep({m / 2, m / 2, type_id::int64, 0.0, 1.0, 0, output_form::index});
  sweep({m / 4, m / 4, i32, 0.0, 1.0, 0, output_form::index, m / 16});
  for (std::int64_t n = std::int64_t{1} << 20; n <= m; n *= 4) {
    sweep({n, n, i32, 0.0, 1.0, 0, output_form::index});
  }
  for (double z : {0.5, 1.0, 1.5, 2.0}) { sweep({m / 2, m, i32, z, 1.0, 0, output_form::index}); }
  for (double mr : {0.0, 0.5}) { sweep({m / 2, m, i32, 0.0, mr, 0, output_form::index}); }
  for (std::int64_t ratio : {1, 4, 16, 32}) { sweep({m / ratio, m, i32, 0.0, 1.0, 0, output_form::index}); }
}

/// Wu et al.'s wide-join experiments (issue 6), table output: the wide default |R| = M/2,
/// |S| = M (M = --max-rows, default 2^28), 4-byte keys, 2 four-byte payloads per side, 100% match,
/// for radix_hash and sort_merge with GFUR, GFTR and the model's choice, and no_partition_hash;
/// then at |S| = M/4: payload columns 0 (narrow: the key only) .. 8, match ratio 0..100%,
/// Zipf 0..2, 8-byte keys and payloads; and many-to-many |R| = |S| = M/4 over |K| = M/32 ..
/// M/8 keys. Every line records the model's predicted materialization times beside the
/// measured median.
void run_wide_joins_bench(recorder& rec, bench_args const& a, join_tuning const& tuning) {
  JOINERY_EXPECTS(device_count() > 0, "bench wide-joins needs a GPU");
  auto const m = a.max_rows == bench_args{}.max_rows ? std::int64_t{1} << 28
                                                     : parse_size(a.max_rows, "--max-rows");
  auto const i32 = type_id::int32;
  auto strategies = [&](join_point p, bool with_no_partition) {
    p.tuning = tuning;
    auto const data = make_join_data(p, backend::gpu, a.seed);
    for (auto algo : {join_algorithm::radix_hash, join_algorithm::sort_merge}) {
      for (auto st : {materialization::gfur, materialization::gftr, materialization::automatic}) {
        auto q = p;
        q.strategy = st;
        measure_join(rec, q, data, backend::gpu, algo);
      }
    }
    if (with_no_partition) {
      measure_join(rec, p, data, backend::gpu, join_algorithm::no_partition_hash);
    }
  };
  auto const t = output_form::table;
  strategies({m / 2, m, i32, 0.0, 1.0, 2, t}, true);
  auto const n = m / 4;
  for (int k = 0; k <= 8; ++k) { strategies({n / 2, n, i32, 0.0, 1.0, k, t}, false); }
  for (double mr : {0.0, 0.1, 0.25, 0.5, 0.75, 1.0}) {
    strategies({n, n, i32, 0.0, mr, 2, t}, false);
  }
  for (double z : {0.5, 1.0, 1.5, 2.0}) { strategies({n / 2, n, i32, z, 1.0, 2, t}, false); }
  strategies({n / 2, n, type_id::int64, 0.0, 1.0, 2, t}, false);
  for (std::int64_t keys : {m / 32, m / 16, m / 8}) {
    strategies({n, n, i32, 0.0, 1.0, 2, t, std::max<std::int64_t>(keys, 1)}, false);
  }
}

nlohmann::json run_groupby_point(recorder& rec, std::int64_t rows, std::int64_t groups,
                                 double zipf, backend be, groupby_algorithm algo,
                                 std::uint64_t seed) {
  gen::relation_spec s;
  s.rows = rows;
  s.kind = gen::key_kind::foreign;
  s.domain = groups;
  s.zipf = zipf;
  s.payload_types = {type_id::int32, type_id::int32};
  s.seed = seed;
  auto const input = place(gen::generate(s).view(), be);
  groupby_options o;
  o.algorithm = algo;
  o.backend = be;
  std::vector<aggregation> aggs{{aggregation_kind::max, 1}, {aggregation_kind::max, 2},
                                {aggregation_kind::sum, 1}};
  nlohmann::json params{{"rows", rows}, {"groups", groups}, {"zipf", zipf},
                        {"aggregates", "max(p0),max(p1),sum(p0)"},
                        {"algorithm", std::string(to_string(algo))}};
  return rec.measure(params, be, rows, [&] {
    auto const res = groupby(input.view(), 0, aggs, o);
    auto const host = place(res.columns.view(), backend::cpu);
    return nlohmann::json{{"phases", phases_json(res.stats.phases)},
                          {"algorithm", std::string(to_string(res.stats.algorithm))},
                          {"groups_out", res.num_groups()},
                          {"checksum", table_checksum(host.view())},
                          {"bytes_moved", res.stats.bytes_moved}};
  });
}

output_form parse_form(std::string const& s) {
  if (s == "aggregate") { return output_form::aggregate; }
  if (s == "index") { return output_form::index; }
  if (s == "table") { return output_form::table; }
  throw input_error("unknown --output-form '" + s + "'; known: aggregate, index, table");
}

/// Whether any of the GPU joins' tuning options was given.
bool join_tuning_given(bench_args const& a) {
  return !a.css_search.empty() || !a.radix_partition.empty() || !a.device_bandwidths.empty();
}

/// --css-search, --radix-partition, --device-bandwidths as join_options::tuning; refused for the
/// experiments that run no GPU join.
join_tuning join_tuning_of(bench_args const& a) {
  join_tuning t;
  if (!join_tuning_given(a)) { return t; }
  if (a.experiment != "join" && a.experiment != "gpu-joins" && a.experiment != "wide-joins" &&
      a.experiment != "smoke") {
    throw input_error("--css-search, --radix-partition and --device-bandwidths tune the GPU "
                      "joins of the join, gpu-joins, wide-joins and smoke experiments, not '" +
                      a.experiment + "'");
  }
  // The names are refused with the known ones listed, as --algorithm's are.
  if (!a.css_search.empty()) { t.css_search = css_node_search_from_string(a.css_search); }
  if (!a.radix_partition.empty()) {
    t.radix_partition = radix_join_partitioning_from_string(a.radix_partition);
  }
  if (!a.device_bandwidths.empty()) {
    t.bandwidths = detail::parse_bandwidths(a.device_bandwidths, "--device-bandwidths");
  }
  return t;
}

void run_bench(bench_args const& a) {
  auto const tuning = join_tuning_of(a);  // refused before any data is generated
  if (a.swwc.given() && a.experiment != "primitives") {
    throw input_error("the --swwc-* and --hswwc-* options tune the swwc and hierarchical rows of "
                      "the primitives experiment, not '" + a.experiment + "'");
  }
  auto const swwc = parse_swwc_tuning(a.swwc);
  recorder rec(a, a.experiment);
  if (a.experiment == "join") {
    auto const be = resolve_backend(a.backend, !join_algorithms_on(backend::gpu).empty());
    join_point p{parse_size(a.build_rows, "--build-rows"), parse_size(a.probe_rows, "--probe-rows"),
                 type_from_string(a.key_type), a.zipf, a.match_ratio, a.payloads,
                 parse_form(a.output_form)};
    p.strategy = materialization_from_string(a.strategy);
    p.index_type = type_from_string(a.index_type);
    p.writer = output_writer_from_string(a.writer);
    p.load_factor = a.load_factor;
    if (be != backend::gpu && join_tuning_given(a)) {
      throw input_error("--css-search, --radix-partition and --device-bandwidths tune the GPU "
                        "joins; the " + std::string(to_string(be)) + " backend has none");
    }
    p.tuning = tuning;
    run_join_point(rec, p, be, join_algorithm_from_string(a.algorithm), a.seed);
  } else if (a.experiment == "groupby") {
    auto const be = resolve_backend(a.backend, !groupby_algorithms_on(backend::gpu).empty());
    run_groupby_point(rec, rows_or(a, std::int64_t{1} << 24), parse_size(a.groups, "--groups"), a.zipf,
                      be, groupby_algorithm_from_string(a.algorithm), a.seed);
  } else if (a.experiment == "cpu-join-scaling") {
    // |R| = |S| from 2^20 up to --max-rows, 4- and 8-byte keys, every CPU join but nested loops.
    auto const max_rows = parse_size(a.max_rows, "--max-rows");
    for (auto key : {type_id::int32, type_id::int64}) {
      for (std::int64_t n = std::int64_t{1} << 20; n <= max_rows; n *= 4) {
        for (auto algo : join_algorithms_on(backend::cpu)) {
          if (algo == join_algorithm::nested_loop) { continue; }
          join_point p{n, n, key, 0.0, 1.0, 1, output_form::aggregate};
          run_join_point(rec, p, backend::cpu, algo, a.seed);
        }
      }
    }
  } else if (a.experiment == "cpu-bandwidth") {
    // The host's roofline: a parallel copy of --rows 8-byte values (bytes read + written).
    auto const n = rows_or(a, std::int64_t{1} << 24);
    std::unique_ptr<std::uint64_t[]> src(new std::uint64_t[static_cast<std::size_t>(n)]);
    std::unique_ptr<std::uint64_t[]> dst(new std::uint64_t[static_cast<std::size_t>(n)]);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      src[i] = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL;
      dst[i] = 0;
    }
    nlohmann::json params{{"rows", n}, {"bytes_moved", 16 * n}, {"algorithm", "parallel_copy"}};
    auto const j = rec.measure(params, backend::cpu, n, [&] {
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n; ++i) { dst[i] = src[i]; }
      return nlohmann::json{{"phases", nlohmann::json::object()}, {"checksum", dst[n / 2]}};
    });
    std::cout << "host copy bandwidth: " << 16.0 * static_cast<double>(n) / j["median_s"].get<double>() / 1e9
              << " GB/s (read + write)\n";
  } else if (a.experiment == "cpu-groupby") {
    // g from 2^0 to 2^24 (capped by the rows), every CPU group-by.
    auto const rows = rows_or(a, std::int64_t{1} << 24);
    for (std::int64_t g = 1; g <= std::min<std::int64_t>(rows, std::int64_t{1} << 24); g *= 16) {
      for (auto algo : groupby_algorithms_on(backend::cpu)) {
        run_groupby_point(rec, rows, g, 0.0, backend::cpu, algo, a.seed);
      }
    }
  } else if (a.experiment == "smoke") {
    // Every algorithm of every usable backend on small inputs; all must agree on the result.
    std::vector<backend> backends{backend::cpu};
    if (device_count() > 0) { backends.push_back(backend::gpu); }
    std::optional<std::pair<std::uint64_t, std::uint64_t>> join_ref, nl_ref;
    std::optional<std::uint64_t> gb_ref;
    auto check = [](auto& ref, auto value, std::string const& what) {
      if (!ref) {
        ref = value;
      } else if (*ref != value) {
        throw std::runtime_error("bench smoke: " + what + " disagrees with the first algorithm");
      }
    };
    for (auto be : backends) {
      for (auto algo : join_algorithms_on(be)) {
        bool const quadratic = algo == join_algorithm::nested_loop ||
                               algo == join_algorithm::indexed_nested_loop;
        // Quadratic algorithms get a smaller input, compared among themselves and to a hash join
        // on the same input below.
        join_point p{quadratic ? (1 << 12) : (1 << 18), quadratic ? (1 << 14) : (1 << 20),
                     type_id::int32, 0.0, 1.0, 1, output_form::aggregate};
        if (be == backend::gpu) { p.tuning = tuning; }
        auto const j = run_join_point(rec, p, be, algo, a.seed);
        auto const v = std::make_pair(j["rows_out"].get<std::uint64_t>(),
                                      j["checksum"].get<std::uint64_t>());
        check(quadratic ? nl_ref : join_ref, v,
              std::string(to_string(be)) + " " + std::string(to_string(algo)));
      }
      for (auto algo : groupby_algorithms_on(be)) {
        auto const j = run_groupby_point(rec, 1 << 20, 1 << 10, 0.0, be, algo, a.seed);
        check(gb_ref, j["checksum"].get<std::uint64_t>(),
              std::string(to_string(be)) + " group-by " + std::string(to_string(algo)));
      }
    }
    // The small input once more on the hash join: the nested loops must agree with it.
    if (nl_ref) {
      join_point p{1 << 12, 1 << 14, type_id::int32, 0.0, 1.0, 1, output_form::aggregate};
      auto const j = run_join_point(rec, p, backend::cpu, join_algorithm::no_partition_hash, a.seed);
      check(nl_ref, std::make_pair(j["rows_out"].get<std::uint64_t>(), j["checksum"].get<std::uint64_t>()),
            "cpu no_partition_hash on the nested-loop input");
    }
    std::cout << "bench smoke: all algorithms agree\n";
  } else if (a.experiment == "primitives") {
    // GPU primitives against the device-copy roofline (bench_primitives.cpp); --rows default 2^28.
    // --algorithm: a comma-separated list of partition algorithms, "tuples"
    // (radix_partition_tuples), "split" and/or "access" (map, gather, scatter); then no sorts.
    primitives_bench_args p{rows_or(a, std::int64_t{1} << 28),
                            a.runs, a.warmup, a.out, a.seed, git_revision(), today(), {},
                            a.zipf};
    if (a.algorithm != bench_args{}.algorithm) {
      for (auto const& name : comma_items(a.algorithm)) {
        if (name != "split" && name != "access" && name != "tuples") {  // refuse unknown names early
          (void)partition_algorithm_from_string(name);
        }
        p.partition_algorithms.push_back(name);
      }
    }
    if (!a.bits.empty()) {
      p.bits.clear();
      for (auto const& item : comma_items(a.bits)) {
        auto const b = parse_size(item, "--bits");
        if (b < 1 || b > max_radix_bits) {
          throw input_error("--bits takes digit widths of 1.." + std::to_string(max_radix_bits) +
                            " bits, not '" + item + "'");
        }
        p.bits.push_back(static_cast<int>(b));
      }
    }
    p.swwc = swwc;
    if (a.swwc.given() && !p.partition_algorithms.empty() &&
        std::none_of(p.partition_algorithms.begin(), p.partition_algorithms.end(),
                     [](std::string const& n) { return n == "swwc" || n == "hierarchical"; })) {
      throw input_error("the --swwc-* and --hswwc-* options tune the swwc and hierarchical rows, "
                        "and --algorithm selects neither");
    }
    run_primitives_bench(p);
  } else if (a.experiment == "gpu-joins") {
    run_gpu_joins_bench(rec, a, tuning);
  } else if (a.experiment == "wide-joins") {
    run_wide_joins_bench(rec, a, tuning);
  } else if (a.experiment == "gpu-groupby") {
    // Every GPU group-by over g = 4^0 .. 2^26 (bench_groupby_gpu.cpp); --rows default 2^28.
    gpu_groupby_bench_args g;
    g.rows = rows_or(a, std::int64_t{1} << 28);
    g.key_type = a.key_type;
    g.zipf = a.zipf;
    g.spread_keys = a.spread_keys;
    if (a.groups != bench_args{}.groups) { g.max_groups = parse_size(a.groups, "--groups"); }
    if (!a.min_groups.empty()) { g.min_groups = parse_size(a.min_groups, "--min-groups"); }
    if (a.algorithm != bench_args{}.algorithm) {
      // A comma-separated list of algorithms.
      std::stringstream names(a.algorithm);
      for (std::string name; std::getline(names, name, ',');) { g.algorithms.push_back(name); }
    }
    g.runs = a.runs;
    g.warmup = a.warmup;
    g.out = a.out;
    g.seed = a.seed;
    g.revision = git_revision();
    g.date = today();
    g.tuning = a.groupby_tuning;
    if (!a.shapes.empty()) { g.shapes = split(a.shapes); }
    run_gpu_groupby_bench(g);
  } else if (a.experiment == "out-of-core") {
    out_of_core_bench_args o;
    o.rows = rows_or(a, std::int64_t{1} << 28);
    if (a.max_rows != bench_args{}.max_rows) {
      o.max_rows = parse_size(a.max_rows, "--max-rows");
      o.triton_max_rows = o.max_rows;
    }
    o.runs = a.runs;
    o.warmup = a.warmup;
    o.out = a.out;
    o.seed = a.seed;
    o.revision = git_revision();
    o.date = today();
    o.parts = a.parts;
    run_out_of_core_bench(o);
  } else if (a.experiment == "general-keys") {
    keys_bench_args k;
    k.rows = rows_or(a, std::int64_t{1} << 26);
    k.backend = a.backend == "auto" ? "gpu" : a.backend;
    k.runs = a.runs;
    k.warmup = a.warmup;
    k.out = a.out;
    k.seed = a.seed;
    k.revision = git_revision();
    k.date = today();
    k.parts = a.parts;
    run_keys_bench(k);
  } else if (a.experiment == "multi-gpu") {
    multi_gpu_bench_args m;
    m.rows = rows_or(a, std::int64_t{1} << 26);
    m.runs = a.runs;
    m.warmup = a.warmup;
    m.out = a.out;
    m.seed = a.seed;
    m.revision = git_revision();
    m.date = today();
    m.parts = a.parts;
    run_multi_gpu_bench(m);
  } else {
    throw input_error("unknown experiment '" + a.experiment +
                      "'; known: join, groupby, cpu-join-scaling, cpu-groupby, cpu-bandwidth, "
                      "smoke, primitives, gpu-joins, wide-joins, gpu-groupby, out-of-core, "
                      "multi-gpu, general-keys");
  }
}

}  // namespace

void add_bench(CLI::App& app) {
  auto args = std::make_shared<bench_args>();
  auto* c = app.add_subcommand("bench", "run a named experiment");
  c->add_option("experiment", args->experiment, "join, groupby, cpu-join-scaling, cpu-groupby or smoke")->required();
  c->add_option("--runs", args->runs, "timed runs (the median is reported)");
  c->add_option("--warmup", args->warmup, "untimed warm-up runs");
  c->add_option("--out", args->out, "append JSON lines to this file");
  c->add_option("--backend", args->backend, "auto, cpu or gpu");
  c->add_option("--algorithm", args->algorithm, "algorithm name (automatic by default); gpu-groupby: a comma-separated list (default: all)");
  c->add_option("--build-rows", args->build_rows, "join: |R| (primary keys)");
  c->add_option("--probe-rows", args->probe_rows, "join: |S| (foreign keys)");
  c->add_option("--key-type", args->key_type, "join: int32, int64, uint32 or uint64");
  c->add_option("--zipf", args->zipf, "Zipf exponent of the foreign keys / group keys");
  c->add_flag("--spread-keys", args->spread_keys,
              "gpu-groupby: multiply every key by an odd constant, so that the g keys no longer "
              "form a dense range (the hashed tiers of HGB instead of its dense one)");
  c->add_option("--match-ratio", args->match_ratio, "join: fraction of build keys that match");
  c->add_option("--payloads", args->payloads, "join: payload columns per side");
  c->add_option("--output-form", args->output_form, "join: aggregate, index or table");
  c->add_option("--index-type", args->index_type,
                "join, index form: row ids as int64 (default) or int32");
  c->add_option("--strategy", args->strategy,
                "join, table output on the GPU: automatic, gfur or gftr materialization");
  c->add_option("--load-factor", args->load_factor,
                "join, no_partition_hash: the most its hash table is filled, in (0, 1) (0.5)");
  c->add_option("--writer", args->writer,
                "join on the GPU: direct (output buffer first, the default) or three_phase "
                "(count, scan, write)");
  c->add_option("--css-search", args->css_search,
                "join experiments on the GPU: the indexed nested-loop join's CSS-tree node search, "
                "binary (default) or sequential");
  c->add_option("--radix-partition", args->radix_partition,
                "join experiments on the GPU: the radix join's first partitioning, automatic "
                "(swwc then CUB where the order is free; default) or cub");
  c->add_option("--device-bandwidths", args->device_bandwidths,
                "join experiments on the GPU: the bandwidths of the GFUR/GFTR model instead of "
                "measuring them: sequential,clustered_gather,unclustered_gather,l2_bytes,"
                "unclustered_column_bytes,sort_pass_4_4,sort_pass_4_8 (bytes/s; bytes)");
  c->add_option("--rows", args->rows,
                "input rows (groupby: 2^24; primitives, gpu-groupby: 2^28; out-of-core: |S| of the "
                "default join, 2^28; multi-gpu: |R|, 2^26)");
  c->add_option("--groups", args->groups,
                "groupby: number of groups; gpu-groupby: the largest g (2^26)");
  c->add_option("--min-groups", args->min_groups,
                "gpu-groupby: the smallest g (1); g runs over min, 4 min, 16 min, .. up to --groups");
  c->add_option("--max-rows", args->max_rows,
                "cpu-join-scaling: largest |R| = |S| (2^20 ..); gpu-joins, wide-joins: |S| of the "
                "default workload (2^28); out-of-core: largest |S| of the streamed sweep (2^32)");
  c->add_option("--bits", args->bits,
                "primitives: digit widths of the radix-partition rows, comma-separated (8,9,10,11)");
  c->add_option("--swwc-policy", args->swwc.policy,
                "primitives, swwc and hierarchical rows: the block shape, base, wide, long_tile or "
                "wide_long (default: the policy's choice per digit width and tuple size)");
  c->add_option("--swwc-align", args->swwc.align,
                "primitives, swwc rows: full buffers flushed on aligned rows, on or off");
  c->add_option("--swwc-log2b", args->swwc.log2b,
                "primitives, swwc and hierarchical rows: buffers of 2^N tuples a digit, N in 0..7, "
                "where they fit the shared memory (hierarchical: at most 2^5)");
  c->add_option("--swwc-b", args->swwc.b,
                "primitives, swwc rows: buffers of N tuples a digit, a multiple of 16 in 48..128, "
                "where they fit the shared memory (overrides --swwc-log2b)");
  c->add_option("--hswwc-log2c", args->swwc.log2c,
                "primitives, hierarchical rows: staged chunks of 2^N rows, N in 5..12");
  c->add_option("--hswwc-log2r", args->swwc.log2r,
                "primitives, hierarchical rows: rings of 2^N staging slots a digit, N in 0..8");
  c->add_option("--parts", args->parts,
                "out-of-core: sections to run, comma-separated: link, default, index, streamed, "
                "cpu (default: all); multi-gpu: exchange, A, B, groupby; general-keys: join, "
                "nulls, groupby");
  c->add_option("--seed", args->seed, "random seed");
  c->add_option("--shapes", args->shapes,
                std::string("gpu-groupby: aggregate shapes, comma separated: ") +
                  bench_shapes_help());
  c->add_option("--tuning", args->groupby_tuning,
                std::string("gpu-groupby: KEY=VALUE[,KEY=VALUE...] for the GPU group-bys' tuning "
                            "(A/B runs; recorded in every JSON line). Keys: ") +
                  tuning_keys_help());
  c->callback([args] { run_bench(*args); });
}

}  // namespace joinery::cli
