// joinery bench out-of-core (BENCHMARKS.md, "Data in host memory"). Times are wall times of the
// whole join() call, inputs starting in host memory and results ending there.
#include "bench_out_of_core.hpp"
#include "bench_log.hpp"
#include "timing.hpp"

#include <joinery/error.hpp>
#include <joinery/gen.hpp>
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

namespace joinery::cli {

namespace {

class out_of_core_bench {
 public:
  explicit out_of_core_bench(out_of_core_bench_args const& a)
      : a_(a),
        log_({"out-of-core", a.out, a.parts, a.runs, a.warmup, a.revision, a.date,
              {{"threads", omp_get_max_threads()}}}) {}


  // ---- the link ----------------------------------------------------------------------------

  /// GB/s of `bytes` copied by `copy` (median).
  double bandwidth(std::size_t bytes, std::function<void()> const& copy) {
    auto const [t, last] = log_.time([&] {
      copy();
      return nlohmann::json{};
    });
    return static_cast<double>(bytes) / median(t) / 1e9;
  }

  void measure_link() {
    std::size_t const bytes = std::size_t{1} << 30;
    buffer pageable(bytes, host_resource(), default_stream());
    buffer pinned(bytes, pinned_host_resource(), default_stream());
    buffer pinned2(bytes, pinned_host_resource(), default_stream());
    buffer dev(bytes, device_resource(), default_stream());
    buffer dev2(bytes, device_resource(), default_stream());
    for (auto* b : {&pageable, &pinned, &pinned2}) {
      auto* p = static_cast<std::uint64_t*>(b->data());
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(bytes / 8); ++i) {
        p[i] = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL + 1;
      }
    }
    auto const s = default_stream();
    h2d_pinned_ = bandwidth(bytes, [&] {
      copy_bytes(dev.data(), memory_space::device, pinned.data(), memory_space::pinned_host, bytes, s);
    });
    d2h_pinned_ = bandwidth(bytes, [&] {
      copy_bytes(pinned.data(), memory_space::pinned_host, dev.data(), memory_space::device, bytes, s);
    });
    cuda_stream up, down;
    auto const both = bandwidth(2 * bytes, [&] {
      std::thread t([&] {
        copy_bytes(dev.data(), memory_space::device, pinned.data(), memory_space::pinned_host,
                   bytes, up.ref());
      });
      copy_bytes(pinned2.data(), memory_space::pinned_host, dev2.data(), memory_space::device, bytes,
                 down.ref());
      t.join();
    });
    auto const h2d_pageable = bandwidth(bytes, [&] {
      copy_bytes(dev.data(), memory_space::device, pageable.data(), memory_space::host, bytes, s);
    });
    auto const d2h_pageable = bandwidth(bytes, [&] {
      copy_bytes(pageable.data(), memory_space::host, dev.data(), memory_space::device, bytes, s);
    });
    auto const host_copy = bandwidth(2 * bytes, [&] {
      copy_bytes(pinned.data(), memory_space::pinned_host, pageable.data(), memory_space::host,
                 bytes, s);
    });
    log_.record({{"case", "link"}, {"bytes", bytes}, {"h2d_pinned_gbs", h2d_pinned_},
            {"d2h_pinned_gbs", d2h_pinned_}, {"both_ways_pinned_gbs", both},
            {"h2d_pageable_staged_gbs", h2d_pageable}, {"d2h_pageable_staged_gbs", d2h_pageable},
            {"host_parallel_copy_gbs_read_plus_write", host_copy}});
  }

  // ---- joins -----------------------------------------------------------------------------------

  struct join_case {
    std::string name;
    std::int64_t build_rows = 0, probe_rows = 0;
    memory_space space = memory_space::host;
    backend be = backend::gpu;
    join_algorithm algo = join_algorithm::automatic;
    output_form form = output_form::aggregate;
    std::size_t budget = 0;
    /// Bytes of a row's key and of its one payload (the default join's 4 + 4, Lutz's 8 + 8).
    double key_bytes = 4;
    double payload_bytes = 4;
    /// triton: the share of partitions cached on the device (negative: the library's choice).
    double cached_share = -1;
  };

  /// The join of `build` and `probe` (key in column 0, one payload) as the case says.
  void run_join(join_case const& c, table const& build, table const& probe) {
    join_options o;
    o.backend = c.be;
    o.algorithm = c.algo;
    o.output = c.form;
    o.device_memory_budget = c.budget;
    if (c.cached_share >= 0) { o.tuning.triton_cached_share = c.cached_share; }
    if (c.form != output_form::index) {
      o.build_payloads = {1};
      o.probe_payloads = {1};
    }
    auto const [t, last] = log_.time([&] {
      auto const r = join(build.view(), 0, probe.view(), 0, o);
      nlohmann::json phases = nlohmann::json::object();
      for (auto const& p : r.stats.phases) { phases[p.name] = p.seconds; }
      return nlohmann::json{{"algorithm_used", std::string(to_string(r.stats.algorithm))},
                            {"rows_out", r.aggregate.count},
                            {"checksum", r.aggregate.checksum},
                            {"op_seconds", r.stats.seconds},
                            {"cached_share", r.stats.cached_share},
                            {"phases", phases}};
    });
    auto const med = median(t);
    // Bytes that must cross each way: the columns read once, the result once.
    auto const in_row = c.form == output_form::index ? c.key_bytes : c.key_bytes + c.payload_bytes;
    auto const rows = static_cast<double>(c.build_rows + c.probe_rows);
    double h2d = 0;
    double d2h = 0;
    if (c.space != memory_space::device && c.be == backend::gpu) {
      h2d = in_row * rows;
      if (c.form == output_form::index) { d2h = 16.0 * last["rows_out"].get<double>(); }
    }
    auto roofline = std::max(h2d / (h2d_pinned_ * 1e9), d2h / (d2h_pinned_ * 1e9));
    // Triton's two passes: the inputs up while the uncached partitions go down, then those
    // partitions up again (the aggregate form carries key + payload sum, 16 bytes a row).
    if (last["algorithm_used"] == "triton") {
      auto const share = cached_share_used(last);
      auto const spilled = (1.0 - share) * rows * (c.key_bytes + 8.0);
      h2d += spilled;
      d2h += spilled;
      roofline = std::max((h2d - spilled) / (h2d_pinned_ * 1e9), spilled / (d2h_pinned_ * 1e9)) +
                 spilled / (h2d_pinned_ * 1e9);
    }
    nlohmann::json j = last;
    j.erase("phases");
    j["case"] = c.name;
    j["build_rows"] = c.build_rows;
    j["probe_rows"] = c.probe_rows;
    j["input_space"] = std::string(to_string(c.space));
    j["backend"] = std::string(to_string(c.be));
    j["algorithm"] = std::string(to_string(c.algo));
    j["output"] = std::string(to_string(c.form));
    if (c.budget != 0) { j["device_budget"] = c.budget; }
    if (last["algorithm_used"] != "triton") { j.erase("cached_share"); }
    if (c.algo == join_algorithm::triton) { j["cached_share_asked"] = c.cached_share; }
    j["seconds"] = t;
    j["median_s"] = med;
    j["throughput_gtuples_s"] = static_cast<double>(c.build_rows + c.probe_rows) / med / 1e9;
    j["bytes_h2d"] = h2d;
    j["bytes_d2h"] = d2h;
    j["link_h2d_gbs"] = h2d_pinned_;
    j["link_d2h_gbs"] = d2h_pinned_;
    if (roofline > 0) {
      j["roofline_s"] = roofline;
      j["fraction_of_roofline"] = roofline / med;
    }
    j["phase_s"] = last["phases"];
    log_.record(j);
  }

  /// The share of partitioned rows a triton run kept on the device (join_stats::cached_share).
  static double cached_share_used(nlohmann::json const& last) {
    return last.contains("cached_share") ? last["cached_share"].get<double>() : 0.0;
  }

  static table relation(std::int64_t rows, bool primary, std::int64_t domain, std::uint64_t seed,
                        memory_space space, type_id key = type_id::int32,
                        type_id payload = type_id::int32) {
    gen::relation_spec s;
    s.rows = rows;
    s.kind = primary ? gen::key_kind::primary : gen::key_kind::foreign;
    s.key_type = key;
    s.domain = domain;
    s.payload_types = {payload};
    s.seed = seed;
    auto t = gen::generate(s);
    if (space == memory_space::host) { return t; }
    return relation_copy(t, space);
  }

  void run() {
    JOINERY_EXPECTS(device_count() > 0, "bench out-of-core needs a GPU");
    measure_link();  // every roofline below needs it
    auto const s_rows = a_.rows;
    auto const r_rows = s_rows / 2;
    if (log_.wants("default") || log_.wants("index") || log_.wants("cpu")) {
      for (auto space : {memory_space::host, memory_space::pinned_host, memory_space::device}) {
        auto const build = relation(r_rows, true, 0, a_.seed, space);
        auto const probe = relation(s_rows, false, r_rows, a_.seed + 1, space);
        auto const sp = std::string(to_string(space));
        if (space == memory_space::device) {
          if (log_.wants("default")) {
            run_join({"default", r_rows, s_rows, space, backend::gpu, join_algorithm::radix_hash},
                     build, probe);
          }
          continue;
        }
        if (log_.wants("default")) {
          for (auto algo : {join_algorithm::automatic, join_algorithm::radix_hash,
                            join_algorithm::streamed}) {
            run_join({"default", r_rows, s_rows, space, backend::gpu, algo}, build, probe);
          }
        }
        if (log_.wants("index")) {
          for (auto algo : {join_algorithm::radix_hash, join_algorithm::streamed}) {
            run_join({"index", r_rows, s_rows, space, backend::gpu, algo, output_form::index},
                     build, probe);
          }
        }
        if (log_.wants("cpu") && space == memory_space::host) {
          run_join({"default", r_rows, s_rows, space, backend::cpu, join_algorithm::radix_hash},
                   build, probe);
        }
      }
    }
    if (log_.wants("streamed")) {
      std::int64_t const r = std::int64_t{1} << 27;
      auto const build = relation(r, true, 0, a_.seed, memory_space::pinned_host);
      for (std::int64_t s = std::int64_t{1} << 28; s <= a_.max_rows; s *= 2) {
        auto const probe = relation(s, false, r, a_.seed + 1, memory_space::pinned_host);
        run_join({"streamed", r, s, memory_space::pinned_host, backend::gpu,
                  join_algorithm::streamed}, build, probe);
      }
    }
    if (log_.wants("triton")) { run_triton(); }
    if (log_.wants("cliff")) { run_cliff(); }
    if (log_.wants("ratio")) { run_ratio(); }
    if (log_.wants("groupby")) { run_groupby(); }
  }

  /// The streamed group-by: groupby_rows rows of an int32 key over g groups and two int32
  /// values in pinned host memory, SUM of both; beside it the in-GPU group-by after one copy,
  /// the same on device-resident rows (the ceiling) and the CPU backend (the floor, at one g).
  void run_groupby() {
    auto const rows = a_.groupby_rows;
    auto const roofline = static_cast<double>(rows) * 12.0 / (h2d_pinned_ * 1e9);
    for (std::int64_t g : {std::int64_t{1}, std::int64_t{1} << 4, std::int64_t{1} << 10,
                           std::int64_t{1} << 16, std::int64_t{1} << 20, std::int64_t{1} << 24}) {
      gen::relation_spec s;
      s.rows = rows;
      s.kind = gen::key_kind::foreign;
      s.domain = g;
      s.payload_types = {type_id::int32, type_id::int32};
      s.seed = a_.seed;
      auto const host = gen::generate(s);
      auto const pinned = relation_copy(host, memory_space::pinned_host);
      std::vector<aggregation> const aggs{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
      auto one = [&](table const& t, memory_space space, backend be, groupby_algorithm algo) {
        groupby_options o;
        o.backend = be;
        o.algorithm = algo;
        auto const [times, last] = log_.time([&] {
          auto const r = groupby(t.view(), 0, aggs, o);
          nlohmann::json phases = nlohmann::json::object();
          for (auto const& p : r.stats.phases) { phases[p.name] = p.seconds; }
          return nlohmann::json{{"algorithm_used", std::string(to_string(r.stats.algorithm))},
                                {"groups_out", r.num_groups()},
                                {"op_seconds", r.stats.seconds},
                                {"phases", phases}};
        });
        auto const med = median(times);
        nlohmann::json j = last;
        j.erase("phases");
        j["case"] = "groupby";
        j["rows"] = rows;
        j["groups"] = g;
        j["input_space"] = std::string(to_string(space));
        j["backend"] = std::string(to_string(be));
        j["algorithm"] = std::string(to_string(algo));
        j["seconds"] = times;
        j["median_s"] = med;
        j["throughput_grows_s"] = static_cast<double>(rows) / med / 1e9;
        j["link_h2d_gbs"] = h2d_pinned_;
        if (space != memory_space::device && be == backend::gpu) {
          j["bytes_h2d"] = static_cast<double>(rows) * 12.0;
          j["roofline_s"] = roofline;
          j["fraction_of_roofline"] = roofline / med;
        }
        j["phase_s"] = last["phases"];
        log_.record(j);
      };
      one(pinned, memory_space::pinned_host, backend::gpu, groupby_algorithm::streamed);
      one(pinned, memory_space::pinned_host, backend::gpu, groupby_algorithm::automatic);
      {
        auto const device = relation_copy(host, memory_space::device);
        one(device, memory_space::device, backend::gpu, groupby_algorithm::automatic);
      }
      if (g == std::int64_t{1} << 10) {
        one(host, memory_space::host, backend::cpu, groupby_algorithm::automatic);
      }
    }
  }

  static table relation_copy(table const& t, memory_space space) {
    std::vector<column> cols;
    for (auto const& c : t.view()) { cols.push_back(column::copy_of(c, resource_for(space))); }
    return table(std::move(cols));
  }

  join_case lutz_case(std::string name, std::int64_t r, std::int64_t s, join_algorithm algo,
                      std::size_t budget) {
    join_case c{std::move(name), r, s, memory_space::pinned_host, backend::gpu, algo};
    c.budget = budget;
    c.key_bytes = 8;
    c.payload_bytes = 8;
    return c;
  }

  /// No cliff: Lutz's workload from 1/4 to 8 times a 1 GiB budget (2^23 to 2^28 rows a side),
  /// automatic's choice and triton at every size.
  void run_cliff() {
    auto const i64 = type_id::int64;
    std::size_t const budget = std::size_t{1} << 30;
    for (std::int64_t n = std::int64_t{1} << 23; n <= std::min<std::int64_t>(a_.triton_max_rows, std::int64_t{1} << 28); n *= 2) {
      auto const build = relation(n, true, 0, a_.seed, memory_space::pinned_host, i64, i64);
      auto const probe = relation(n, false, n, a_.seed + 1, memory_space::pinned_host, i64, i64);
      for (auto algo : {join_algorithm::automatic, join_algorithm::triton}) {
        run_join(lutz_case("cliff", n, n, algo, budget), build, probe);
      }
    }
  }

  /// Lutz's Figure 21: build:probe from 1:1 to 1:32 at a constant 2^29 rows in all, with a
  /// budget of 1/8 of the data.
  void run_ratio() {
    auto const i64 = type_id::int64;
    std::int64_t const total = std::min<std::int64_t>(std::int64_t{1} << 29, 2 * a_.triton_max_rows);
    std::size_t const budget = static_cast<std::size_t>(total) * 16 / 8;
    for (std::int64_t k : {1, 2, 4, 8, 16, 32}) {
      auto const r = total / (1 + k);
      auto const s = total - r;
      auto const build = relation(r, true, 0, a_.seed, memory_space::pinned_host, i64, i64);
      auto const probe = relation(s, false, r, a_.seed + 1, memory_space::pinned_host, i64, i64);
      run_join(lutz_case("ratio", r, s, join_algorithm::triton, budget), build, probe);
    }
  }

  /// Lutz et al.'s workload: |R| = |S| of <8-byte key, 8-byte payload> tuples, every probe key
  /// matching one build key, in pinned host memory; triton with the whole device and with a
  /// budget of 1/8 of the data, the in-GPU radix join beside it where the data fits, the CPU
  /// backend at the smallest size; then the cached share swept at one size (their Figure 19).
  void run_triton() {
    auto const i64 = type_id::int64;
    auto const space = memory_space::pinned_host;
    for (std::int64_t n = std::int64_t{1} << 27; n <= a_.triton_max_rows; n *= 2) {
      auto const build = relation(n, true, 0, a_.seed, space, i64, i64);
      auto const probe = relation(n, false, n, a_.seed + 1, space, i64, i64);
      auto const data = static_cast<std::size_t>(2 * n) * 16;
      auto tri = [&](std::size_t budget, double share) {
        auto c = lutz_case("triton", n, n, join_algorithm::triton, budget);
        c.cached_share = share;
        run_join(c, build, probe);
      };
      tri(0, -1);
      tri(data / 8, -1);
      join_case in_gpu{"triton", n, n, space, backend::gpu, join_algorithm::radix_hash};
      in_gpu.key_bytes = 8;
      in_gpu.payload_bytes = 8;
      run_join(in_gpu, build, probe);
      if (n == std::int64_t{1} << 27) {
        join_case cpu{"triton", n, n, space, backend::cpu, join_algorithm::radix_hash};
        cpu.key_bytes = 8;
        cpu.payload_bytes = 8;
        run_join(cpu, build, probe);
      }
      if (n == std::int64_t{1} << 28) {
        for (double share : {0.0, 0.25, 0.5, 1.0}) { tri(0, share); }
      }
    }
  }

 private:
  out_of_core_bench_args const& a_;
  bench_log log_;
  double h2d_pinned_ = 0;
  double d2h_pinned_ = 0;
};

}  // namespace

void run_out_of_core_bench(out_of_core_bench_args const& a) { out_of_core_bench(a).run(); }

}  // namespace joinery::cli
