// joinery bench out-of-core (BENCHMARKS.md, "Data in host memory"). Times are wall times of the
// whole join() call, inputs starting in host memory and results ending there.
#include "bench_out_of_core.hpp"
#include "bench_log.hpp"
#include "timing.hpp"

#include <joinery/error.hpp>
#include <joinery/gen.hpp>
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
  };

  /// The join of `build` and `probe` (key in column 0, one payload) as the case says.
  void run_join(join_case const& c, table const& build, table const& probe) {
    join_options o;
    o.backend = c.be;
    o.algorithm = c.algo;
    o.output = c.form;
    o.device_memory_budget = c.budget;
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
                            {"phases", phases}};
    });
    auto const med = median(t);
    // Bytes that must cross each way: the columns read once, the result once.
    auto const in_row = c.form == output_form::index ? 4.0 : 8.0;
    double h2d = 0;
    double d2h = 0;
    if (c.space != memory_space::device && c.be == backend::gpu) {
      h2d = in_row * static_cast<double>(c.build_rows + c.probe_rows);
      if (c.form == output_form::index) { d2h = 16.0 * last["rows_out"].get<double>(); }
    }
    auto const roofline = std::max(h2d / (h2d_pinned_ * 1e9), d2h / (d2h_pinned_ * 1e9));
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

  static table relation(std::int64_t rows, bool primary, std::int64_t domain, std::uint64_t seed,
                        memory_space space) {
    gen::relation_spec s;
    s.rows = rows;
    s.kind = primary ? gen::key_kind::primary : gen::key_kind::foreign;
    s.domain = domain;
    s.payload_types = {type_id::int32};
    s.seed = seed;
    auto t = gen::generate(s);
    if (space == memory_space::host) { return t; }
    std::vector<column> cols;
    for (auto const& c : t.view()) { cols.push_back(column::copy_of(c, resource_for(space))); }
    return table(std::move(cols));
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
