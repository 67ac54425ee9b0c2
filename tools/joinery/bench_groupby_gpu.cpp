// joinery bench gpu-groupby: CUDA-event timings (median of --runs after --warmup) of every GPU
// group-by at each number of groups, with the read-once roofline beside them.
#include "bench_groupby_gpu.hpp"
#include "cli.hpp"
#include "timing.hpp"

#include <joinery/error.hpp>
#include <joinery/gen.hpp>
#include <joinery/groupby.hpp>
#if defined(JOINERY_HAS_CUDA)
#include "groupby/gpu/gpu_groupby.hpp"
#endif

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <string>
#include <vector>

namespace joinery::cli {

namespace {

std::vector<double> time_runs(gpu_groupby_bench_args const& a, stream_ref s,
                              std::function<void()> const& f) {
  for (int i = 0; i < a.warmup; ++i) { f(); }
  std::vector<double> t;
  for (int i = 0; i < a.runs; ++i) { t.push_back(time_call(true, s, f)); }
  return t;
}

/// Multiplies every key by an odd constant: distinct keys stay distinct (odd multipliers are
/// invertible modulo 2^bits) but no longer form a dense range.
void spread(column& keys) {
  dispatch_key_type(keys.type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    using U = std::make_unsigned_t<K>;
    U const factor = sizeof(K) == 4 ? U(2654435761U) : U(0x9e3779b97f4a7c15ULL);
    auto* k = keys.data_as<K>();
    for (size_type i = 0; i < keys.size(); ++i) { k[i] = static_cast<K>(static_cast<U>(k[i]) * factor); }
  });
}

/// An aggregate shape of issue 41's grid over the generated columns: 1 and 2 int32, 3 int64,
/// 4 float32, 5 float64. `label` is the JSON line's "aggregate" (max and sum as before shapes).
struct agg_shape {
  std::string name;
  std::string label;
  std::vector<aggregation> aggs;
};

std::vector<agg_shape> const& shape_catalogue() {
  using k = aggregation_kind;
  static std::vector<agg_shape> const all = {
    {"max2", "max", {{k::max, 1}, {k::max, 2}}},
    {"sum2", "sum", {{k::sum, 1}, {k::sum, 2}}},
    {"count", "count", {{k::count, -1}}},
    {"sum1", "sum1", {{k::sum, 1}}},
    {"mmsc2", "mmsc2",
     {{k::max, 1}, {k::min, 1}, {k::sum, 1}, {k::count, -1}, {k::max, 2}, {k::min, 2}, {k::sum, 2}}},
    {"mixed4", "mixed4", {{k::sum, 1}, {k::sum, 3}, {k::max, 4}, {k::sum, 5}}},
    {"avg_f64", "avg_f64", {{k::avg, 5}}}};
  return all;
}

constexpr char const* shapes_help =
    "max2, sum2 (MAX / SUM of two int32 columns; the default: both), count (COUNT(*)), sum1 (SUM "
    "of one int32), mmsc2 (MAX, MIN and SUM of two int32 and COUNT), mixed4 (SUM of an int32 and "
    "of an int64, MAX of a float32, SUM of a float64), avg_f64 (AVG of a float64)";

std::vector<agg_shape> shapes_of(std::vector<std::string> const& names) {
  std::vector<agg_shape> out;
  for (auto const& name : names.empty() ? std::vector<std::string>{"max2", "sum2"} : names) {
    auto const& all = shape_catalogue();
    auto const it = std::find_if(all.begin(), all.end(), [&](auto const& s) { return s.name == name; });
    if (it == all.end()) {
      throw input_error("--shapes: unknown shape '" + name + "'; known: " + shapes_help);
    }
    out.push_back(*it);
  }
  return out;
}

/// The generated input's value columns a shape reads, and its bytes a row with the key's.
std::vector<size_type> columns_read(agg_shape const& s) {
  std::vector<size_type> cols;
  for (auto const& a : s.aggs) {
    if (a.column >= 0 && std::find(cols.begin(), cols.end(), a.column) == cols.end()) {
      cols.push_back(a.column);
    }
  }
  return cols;
}

/// Column c of the generated input (int64 storage for 3 and 5, int32 for 1, 2 and 4) as the
/// shapes read it: 4 as float32 (value / 2), 5 as float64 (value / 2^20).
column as_shape_column(column_view const& c, size_type index) {
  auto const n = c.size();
  if (index == 4) {
    column out(type_id::float32, n);
    auto const* v = c.data_as<std::int32_t>();
    auto* o = out.data_as<float>();
    for (size_type i = 0; i < n; ++i) { o[i] = static_cast<float>(v[i]) * 0.5F; }
    return out;
  }
  if (index == 5) {
    column out(type_id::float64, n);
    auto const* v = c.data_as<std::int64_t>();
    auto* o = out.data_as<double>();
    for (size_type i = 0; i < n; ++i) { o[i] = static_cast<double>(v[i]) * 0x1p-20; }
    return out;
  }
  return column::copy_of(c);
}

constexpr char const* tuning_help =
    "shared_bytes (-1 or bytes), one_group (-1, 0, 1), dense_keys (0, 1), dense_team (0..8), "
    "dense_row_cost (0 or more), dense_batch (0, 1, 2), dense_narrow (0, 1), dense_lo32 (-1, 0, "
    "1, 2), dense_lo32_kernel (0, 1), dense_wsum (0, 1), initial_groups, skew_partition_share "
    "(a number), skew_sort_groups (negative: never), pgb_bits (-1..16), pgb_slots (0 or a power "
    "of two from 64), dictionary_initial_groups, "
    "dictionary_automatic_groups (counts: 0 or more, 2^k allowed)";

#if defined(JOINERY_HAS_CUDA)
/// --tuning parsed: the struct the runs take, and the pairs as set (typed) for the JSON lines.
struct bench_tuning {
  detail::gpu::groupby_tuning tuning;
  nlohmann::json record = nlohmann::json::object();
};

/// "KEY=VALUE[,KEY=VALUE...]" into groupby_tuning (keys: its field names without `hgb_`).
/// Unknown keys, repeated keys and values out of a key's range are refused with input_error.
bench_tuning parse_tuning(std::string const& list) {
  bench_tuning out;
  auto& t = out.tuning;
  std::set<std::string> seen;
  for (auto const& item : split(list)) {
    auto const eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw input_error("--tuning: expected KEY=VALUE, got '" + item + "'");
    }
    auto const key = trim(item.substr(0, eq));
    auto const value = trim(item.substr(eq + 1));
    if (!seen.insert(key).second) { throw input_error("--tuning: '" + key + "' given twice"); }
    auto const bad = [&](char const* accepts) -> input_error {
      return input_error("--tuning " + key + ": expected " + accepts + ", got '" + value + "'");
    };
    // An integer in [lo, hi]; counts (lo 0) may be written 2^k.
    auto const integer = [&](std::int64_t lo, std::int64_t hi, char const* accepts) {
      std::int64_t v = 0;
      if (lo >= 0 && value.find('^') != std::string::npos) {
        try {
          v = parse_size(value, "--tuning value");
        } catch (input_error const&) {
          throw bad(accepts);
        }
      } else {
        auto const* end = value.data() + value.size();
        if (value.empty() || std::from_chars(value.data(), end, v).ptr != end) { throw bad(accepts); }
      }
      if (v < lo || v > hi) { throw bad(accepts); }
      out.record[key] = v;
      return v;
    };
    auto const flag = [&] {
      bool v = false;
      if (value == "1" || value == "true") {
        v = true;
      } else if (value != "0" && value != "false") {
        throw bad("0 or 1 (or false, true)");
      }
      out.record[key] = v;
      return v;
    };
    auto const number = [&] {
      std::size_t used = 0;
      double v = 0;
      try {
        v = std::stod(value, &used);
      } catch (std::exception const&) {
        throw bad("a number");
      }
      if (used != value.size() || !std::isfinite(v)) { throw bad("a number"); }
      out.record[key] = v;
      return v;
    };
    constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
    constexpr int most_int = std::numeric_limits<int>::max();
    if (key == "shared_bytes") {
      t.hgb_shared_bytes = integer(-1, most, "-1 (the device's) or a number of bytes");
    } else if (key == "one_group") {
      t.hgb_one_group = static_cast<int>(integer(-1, 1, "-1, 0 or 1"));
    } else if (key == "dense_keys") {
      t.hgb_dense_keys = flag();
    } else if (key == "dense_team") {
      t.hgb_dense_team = static_cast<int>(integer(0, 8, "0 (the most) or 1..8 blocks"));
    } else if (key == "dense_row_cost") {
      t.hgb_dense_row_cost = static_cast<int>(integer(0, most_int, "0 (the policy's) or more"));
    } else if (key == "dense_batch") {
      t.hgb_dense_batch = static_cast<int>(integer(0, 2, "0 (the model's), 1 or 2"));
    } else if (key == "dense_narrow") {
      t.hgb_dense_narrow = flag();
    } else if (key == "dense_lo32") {
      t.hgb_dense_lo32 = static_cast<int>(integer(-1, 2, "-1 (never), 0 (automatic), 1 or 2"));
    } else if (key == "dense_lo32_kernel") {
      t.hgb_dense_lo32_kernel = flag();
    } else if (key == "dense_wsum") {
      t.hgb_dense_wsum = flag();
    } else if (key == "initial_groups") {
      t.hgb_initial_groups = integer(0, most, "0 (from the L2 cache) or a count");
    } else if (key == "skew_partition_share") {
      t.skew_partition_share = number();
    } else if (key == "skew_sort_groups") {
      t.skew_sort_groups =
        integer(std::numeric_limits<std::int64_t>::min(), most,
                "an integer (0: the policy's; negative: never)");
    } else if (key == "pgb_bits") {
      t.pgb_bits = static_cast<int>(integer(-1, 16, "-1 (from the estimate) or 0..16"));
    } else if (key == "pgb_slots") {
      auto const v = integer(0, 1 << 30, "0 or a power of two from 64");
      if (v != 0 && (v < 64 || (v & (v - 1)) != 0)) { throw bad("0 or a power of two from 64"); }
      t.pgb_slots = static_cast<int>(v);
    } else if (key == "dictionary_initial_groups") {
      t.dictionary_initial_groups = integer(0, most, "0 (the policy's) or a count");
    } else if (key == "dictionary_automatic_groups") {
      t.dictionary_automatic_groups = integer(0, most, "0 (the policy's) or a count");
    } else {
      throw input_error("--tuning: unknown key '" + key + "'; known: " + tuning_help);
    }
  }
  return out;
}
#endif

}  // namespace

char const* tuning_keys_help() { return tuning_help; }
char const* bench_shapes_help() { return shapes_help; }

void run_gpu_groupby_bench(gpu_groupby_bench_args const& a) {
  bool const tuned = !a.tuning.empty();
#if defined(JOINERY_HAS_CUDA)
  auto const tuning = tuned ? parse_tuning(a.tuning) : bench_tuning{};
#else
  JOINERY_EXPECTS(!tuned, "--tuning needs a build with CUDA");
#endif
  auto const shapes = shapes_of(a.shapes);
  bool wide = false;  // whether a shape reads columns 3-5
  for (auto const& shape : shapes) {
    for (auto c : columns_read(shape)) { wide = wide || c >= 3; }
  }
  JOINERY_EXPECTS(a.runs >= 1, "--runs must be at least 1");
  JOINERY_EXPECTS(a.rows >= 1, "--rows must be at least 1");
  JOINERY_EXPECTS(a.min_groups >= 1, "--min-groups must be at least 1");
  JOINERY_EXPECTS(device_count() > 0, "bench gpu-groupby needs a GPU, and none is present");
  JOINERY_EXPECTS(!groupby_algorithms_on(backend::gpu).empty(),
                  "bench gpu-groupby: this build has no GPU group-by");
  std::vector<groupby_algorithm> algorithms;
  for (auto const& name : a.algorithms) { algorithms.push_back(groupby_algorithm_from_string(name)); }
  if (algorithms.empty()) {
    algorithms = groupby_algorithms_on(backend::gpu);
    algorithms.push_back(groupby_algorithm::automatic);
  }
  std::ofstream file;
  if (!a.out.empty()) {
    auto const parent = std::filesystem::path(a.out).parent_path();
    if (!parent.empty()) { std::filesystem::create_directories(parent); }
    file.open(a.out, std::ios::app);
    if (!file) { throw input_error("cannot open benchmark output " + a.out); }
  }
  auto const device = get_device_info(0).name;
  auto const key = type_from_string(a.key_type);
  auto const s = default_stream();
  auto const n = a.rows;
  // The bytes a row every shape reads: the key and the shape's value columns.
  std::vector<type_id> const value_types = {type_id::int32, type_id::int32, type_id::int32,
                                            type_id::int64, type_id::float32, type_id::float64};
  auto const bytes_of = [&](agg_shape const& shape) {
    std::size_t b = size_of(key);
    for (auto c : columns_read(shape)) { b += size_of(value_types[static_cast<std::size_t>(c)]); }
    return static_cast<double>(n) * static_cast<double>(b);
  };

  // The roofline: a device-to-device copy, its bandwidth measured on as many bytes as two int32
  // values and the key (the default shapes' input), applied to each shape's own bytes.
  double copy_gbps = 0;
  {
    auto const bytes = static_cast<std::size_t>(static_cast<double>(n) * static_cast<double>(size_of(key) + 8));
    buffer src(bytes, device_resource(), s), dst(bytes, device_resource(), s);
    auto const t = time_runs(a, s, [&] {
      copy_bytes(dst.data(), memory_space::device, src.data(), memory_space::device, bytes, s);
    });
    copy_gbps = 2.0 * static_cast<double>(bytes) / median(t) / 1e9;
  }
  std::printf("device %s: copy %.0f GB/s (read + write)\n", device.c_str(), copy_gbps);
#if defined(JOINERY_HAS_CUDA)
  if (tuned) { std::printf("tuning %s\n", tuning.record.dump().c_str()); }
#endif

  for (std::int64_t g = a.min_groups; g <= std::min(a.max_groups, n); g *= 4) {
    gen::relation_spec spec;
    spec.rows = n;
    spec.kind = gen::key_kind::foreign;
    spec.key_type = key;
    spec.domain = g;
    spec.zipf = a.zipf;
    // Columns 3-5 (int64, int32 read as float32, int64 read as float64) only when a shape reads
    // them.
    spec.payload_types = wide ? std::vector<type_id>{type_id::int32, type_id::int32, type_id::int64,
                                                     type_id::int32, type_id::int64}
                              : std::vector<type_id>{type_id::int32, type_id::int32};
    spec.seed = a.seed + static_cast<std::uint64_t>(g);
    table input;
    {
      auto host = gen::generate(spec);
      if (a.spread_keys) { spread(host.column(0)); }
      std::vector<column> cols;
      for (size_type i = 0; i < host.num_columns(); ++i) {
        auto const& c = host.column(i);
        cols.push_back(i < 4 ? column::copy_of(c.view(), device_resource(), s)
                             : column::copy_of(as_shape_column(c.view(), i).view(),
                                               device_resource(), s));
      }
      input = table(std::move(cols));
    }
    for (auto const& shape : shapes) {
      auto const& aggs = shape.aggs;
      double const input_bytes = bytes_of(shape);
      double const roofline_s = input_bytes / (copy_gbps * 1e9);
      std::optional<std::pair<size_type, std::uint64_t>> reference;
      for (auto const algo : algorithms) {
        groupby_options o;
        o.algorithm = algo;
        o.backend = backend::gpu;
        groupby_result last;
        auto const run = [&] {
#if defined(JOINERY_HAS_CUDA)
          if (tuned) {  // the internal entry point, which takes the tuning (as the public one)
            groupby_result r;
            std::vector<phase_time> phases;
            groupby_algorithm used = algo;
            r.columns = detail::gpu::run_groupby(algo, input.view(), 0, aggs, false,
                                                 tuning.tuning, &phases, &used, s,
                                                 device_resource());
            s.synchronize();
            r.stats.phases = std::move(phases);
            r.stats.algorithm = used;
            r.stats.backend = backend::gpu;
            return r;
          }
#endif
          return groupby(input.view(), 0, aggs, o, s);
        };
        auto const times = time_runs(a, s, [&] { last = run(); });
        // Every algorithm must find the same groups and aggregates (order-free checksum).
        std::vector<column> host_cols;
        for (auto const& c : last.columns.columns()) { host_cols.push_back(column::copy_of(c.view())); }
        table const host(std::move(host_cols));
        auto const result = std::make_pair(last.num_groups(), table_checksum(host.view()));
        if (!reference) {
          reference = result;
        } else if (*reference != result) {
          throw std::runtime_error("bench gpu-groupby: " + std::string(to_string(algo)) +
                                   " disagrees with " + std::string(to_string(algorithms.front())) +
                                   " at g = " + std::to_string(g));
        }
        double const med = median(times);
        nlohmann::json j{{"experiment", "gpu-groupby"}, {"revision", a.revision}, {"date", a.date},
                         {"backend", "gpu"}, {"device", device}, {"rows", n}, {"groups", g},
                         {"groups_out", last.num_groups()}, {"key_type", a.key_type},
                         {"zipf", a.zipf}, {"spread_keys", a.spread_keys}, {"aggregate", shape.label},
                         {"shape", shape.name},
                         {"algorithm", std::string(to_string(algo))},
                         {"algorithm_run", std::string(to_string(last.stats.algorithm))},
                         {"warmup", a.warmup},
                         {"runs", a.runs}, {"seconds", times}, {"median_s", med},
                         {"min_s", *std::min_element(times.begin(), times.end())},
                         {"max_s", *std::max_element(times.begin(), times.end())},
                         {"throughput_grows_s", static_cast<double>(n) / med / 1e9},
                         {"input_bytes", input_bytes}, {"copy_gbps", copy_gbps},
                         {"roofline_s", roofline_s}, {"fraction_of_roofline", roofline_s / med},
                         {"checksum", result.second}};
#if defined(JOINERY_HAS_CUDA)
        if (tuned) { j["tuning"] = tuning.record; }
#endif
        nlohmann::json ph = nlohmann::json::object();
        for (auto const& p : last.stats.phases) { ph[p.name] = p.seconds; }
        j["phases"] = ph;  // of the last run
        if (file) { file << j.dump() << "\n" << std::flush; }
        std::string name(to_string(algo));
        if (algo == groupby_algorithm::automatic) {
          name += "(" + std::string(to_string(last.stats.algorithm)) + ")";
        }
        std::printf("g = 2^%-2d %-7s %-26s %9.3f ms %8.2f G rows/s %5.1f%% of roofline\n",
                    static_cast<int>(std::log2(static_cast<double>(g))),
                    shape.label.c_str(), name.c_str(), med * 1e3,
                    static_cast<double>(n) / med / 1e9, 100.0 * roofline_s / med);
        std::fflush(stdout);
      }
    }
  }
}

}  // namespace joinery::cli
