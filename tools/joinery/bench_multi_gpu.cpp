// joinery bench multi-gpu (BENCHMARKS.md, "Several GPUs"). Join times are wall
// times of the whole join() call; the exchange is timed on its own through the
// communicator.
#include "bench_multi_gpu.hpp"
#include "bench_log.hpp"
#include "timing.hpp"

#include "core/communicator.hpp"  // the exchange on its own

#include <joinery/error.hpp>
#include <joinery/gen.hpp>
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <vector>

namespace joinery::cli {

namespace {

class multi_gpu_bench {
 public:
  explicit multi_gpu_bench(multi_gpu_bench_args const& a)
      : a_(a),
        log_({"multi-gpu",
              a.out,
              a.parts,
              a.runs,
              a.warmup,
              a.revision,
              a.date,
              {{"gpus_present", device_count()}}}) {}

  /// GPU counts measured: 1, 2, 4, ... up to every GPU present.
  static std::vector<int> gpu_counts() {
    std::vector<int> v;
    for (int g = 1; g <= device_count(); g *= 2) { v.push_back(g); }
    if (v.back() != device_count()) { v.push_back(device_count()); }
    return v;
  }

  static std::vector<int> first_gpus(int g) {
    std::vector<int> v;
    for (int d = 0; d < g; ++d) { v.push_back(d); }
    return v;
  }

  void measure_exchange() {
    std::size_t const per_rank = std::size_t{1} << 30;
    for (int g : gpu_counts()) {
      if (g < 2) { continue; }
      for (auto method : {exchange_method::peer_copy, exchange_method::nccl}) {
        std::string why;
        if (method == exchange_method::nccl && !detail::nccl_available(&why)) {
          log_.record({{"case", "exchange"}, {"gpus", g}, {"method", "nccl"}, {"skipped", why}});
          continue;
        }
        detail::communicator comm(first_gpus(g), method);
        auto const n = static_cast<std::size_t>(g);
        auto const bucket = per_rank / n;
        std::vector<buffer> send(n);
        std::vector<buffer> recv(n);
        comm.for_each_rank([&](int r) {  // each rank's buffers on its own GPU
          send[static_cast<std::size_t>(r)] =
            buffer(per_rank, device_resource(), comm.stream_of(r));
          recv[static_cast<std::size_t>(r)] =
            buffer(per_rank, device_resource(), comm.stream_of(r));
          comm.stream_of(r).synchronize();
        });
        detail::communicator::buckets b;
        for (std::size_t r = 0; r < n; ++r) {
          b.send.push_back(send[r].data());
          b.recv.push_back(recv[r].data());
        }
        b.bytes.assign(n, std::vector<std::size_t>(n, bucket));
        for (std::size_t r = 0; r < n; ++r) { b.bytes[r][r] = 0; }  // only what crosses a link
        auto const [t, last] = log_.time([&] {
          comm.all_to_all({b});
          return nlohmann::json{};
        });
        auto const crossing = static_cast<double>(bucket * n * (n - 1));
        log_.record({{"case", "exchange"},
                     {"gpus", g},
                     {"method", std::string(to_string(method))},
                     {"bytes_crossing", crossing},
                     {"seconds", t},
                     {"median_s", median(t)},
                     {"aggregate_gbs", crossing / median(t) / 1e9}});
        exchange_gbs_[g] = std::max(exchange_gbs_[g], crossing / median(t) / 1e9);
        comm.for_each_rank([&](int r) {
          send[static_cast<std::size_t>(r)] = buffer();
          recv[static_cast<std::size_t>(r)] = buffer();
          comm.stream_of(r).synchronize();
        });
      }
    }
  }

  static table relation(std::int64_t rows, bool primary, std::int64_t domain, type_id type,
                        std::uint64_t seed, memory_space space) {
    gen::relation_spec s;
    s.rows = rows;
    s.kind = primary ? gen::key_kind::primary : gen::key_kind::foreign;
    s.domain = domain;
    s.key_type = type;
    s.payload_types = {type};
    s.seed = seed;
    auto t = gen::generate(s);
    if (space == memory_space::host) { return t; }
    std::vector<column> cols;
    for (auto const& c : t.view()) { cols.push_back(column::copy_of(c, resource_for(space))); }
    return table(std::move(cols));
  }

  void run_workload(char const* name, std::int64_t r_rows, std::int64_t s_rows, type_id type) {
    for (auto space : {memory_space::device, memory_space::pinned_host}) {
      auto const build = relation(r_rows, true, 0, type, a_.seed, space);
      auto const probe = relation(s_rows, false, r_rows, type, a_.seed + 1, space);
      std::map<std::string, double> one_gpu;  // median of each algorithm on one GPU
      auto run = [&](join_algorithm algo, int gpus) {
        join_options o;
        o.backend = backend::gpu;
        o.algorithm = algo;
        o.output = output_form::aggregate;
        o.build_payloads = {1};
        o.probe_payloads = {1};
        o.devices = first_gpus(gpus);
        auto const [t, last] = log_.time([&] {
          auto const res = join(build.view(), 0, probe.view(), 0, o);
          nlohmann::json phases = nlohmann::json::object();
          for (auto const& p : res.stats.phases) { phases[p.name] = p.seconds; }
          return nlohmann::json{{"rows_out", res.aggregate.count},
                                {"checksum", res.aggregate.checksum},
                                {"phase_s", phases}};
        });
        auto const med = median(t);
        auto const algo_name = std::string(to_string(algo));
        if (gpus == 1) { one_gpu[algo_name] = med; }
        nlohmann::json j = last;
        j["case"] = std::string("workload_") + name;
        j["input_space"] = std::string(to_string(space));
        j["algorithm"] = algo_name;
        j["gpus"] = gpus;
        j["build_rows"] = r_rows;
        j["probe_rows"] = s_rows;
        j["key_type"] = std::string(to_string(type));
        j["seconds"] = t;
        j["median_s"] = med;
        j["gtuples_s"] = static_cast<double>(r_rows + s_rows) / med / 1e9;
        if (gpus > 1 && one_gpu.count(algo_name) != 0) {
          j["speedup_over_1_gpu"] = one_gpu[algo_name] / med;
        }
        if (gpus > 1 && one_gpu.count("radix_hash") != 0) {
          j["speedup_over_radix_hash_1_gpu"] = one_gpu["radix_hash"] / med;
        }
        if (exchange_gbs_.count(gpus) != 0 && last["phase_s"].contains("exchange")) {
          auto const row_bytes = 2.0 * static_cast<double>(size_of(type));
          // Rows that leave their rank: (g - 1) / g of both sides under a
          // uniform split.
          auto const crossing =
            row_bytes * static_cast<double>(r_rows + s_rows) * (gpus - 1) / gpus;
          auto const ideal = crossing / (exchange_gbs_[gpus] * 1e9);
          j["exchange_fraction_of_all_to_all"] = ideal / last["phase_s"]["exchange"].get<double>();
        }
        log_.record(j);
      };
      for (auto algo : {join_algorithm::radix_hash, join_algorithm::sort_merge}) { run(algo, 1); }
      for (int g : gpu_counts()) {
        for (auto algo : {join_algorithm::multi_gpu_hash, join_algorithm::multi_gpu_sort_merge}) {
          run(algo, g);
        }
      }
    }
  }

  /// The group-by of `rows` rows (int32 key over `groups` spread keys, two
  /// int32 values, SUM of both) on 1, 2, ... GPUs, beside the single-GPU
  /// automatic group-by.
  void run_groupby(std::int64_t rows, std::int64_t groups) {
    gen::relation_spec spec;
    spec.rows = rows;
    spec.kind = gen::key_kind::foreign;
    spec.domain = groups;
    spec.payload_types = {type_id::int32, type_id::int32};
    spec.seed = a_.seed;
    auto const host = gen::generate(spec);
    std::vector<column> cols;
    for (auto const& c : host.view()) { cols.push_back(column::copy_of(c, device_resource())); }
    table const input(std::move(cols));
    std::vector<aggregation> const aggs{{aggregation_kind::sum, 1}, {aggregation_kind::sum, 2}};
    double single = 0;
    auto run = [&](groupby_algorithm algo, int gpus) {
      groupby_options o;
      o.backend = backend::gpu;
      o.algorithm = algo;
      o.devices = first_gpus(gpus);
      auto const [t, last] = log_.time([&] {
        auto const r = groupby(input.view(), 0, aggs, o);
        nlohmann::json phases = nlohmann::json::object();
        for (auto const& p : r.stats.phases) { phases[p.name] = p.seconds; }
        return nlohmann::json{{"groups_out", r.num_groups()},
                              {"algorithm_used", std::string(to_string(r.stats.algorithm))},
                              {"phase_s", phases}};
      });
      auto const med = median(t);
      if (algo == groupby_algorithm::automatic) { single = med; }
      nlohmann::json j = last;
      j["case"] = "groupby";
      j["algorithm"] = std::string(to_string(algo));
      j["gpus"] = gpus;
      j["rows"] = rows;
      j["groups"] = groups;
      j["seconds"] = t;
      j["median_s"] = med;
      j["grows_s"] = static_cast<double>(rows) / med / 1e9;
      if (algo == groupby_algorithm::multi_gpu && single > 0) {
        j["speedup_over_1_gpu_automatic"] = single / med;
      }
      log_.record(j);
    };
    run(groupby_algorithm::automatic, 1);
    for (int g : gpu_counts()) { run(groupby_algorithm::multi_gpu, g); }
  }

  void run() {
    JOINERY_EXPECTS(device_count() > 0, "bench multi-gpu needs a GPU");
    if (log_.wants("exchange")) { measure_exchange(); }
    if (log_.wants("A")) { run_workload("A", a_.rows, 10 * a_.rows, type_id::int32); }
    if (log_.wants("B")) { run_workload("B", a_.rows, a_.rows, type_id::int64); }
    if (log_.wants("groupby")) {
      for (std::int64_t g : {std::int64_t{1} << 10, std::int64_t{1} << 20, std::int64_t{1} << 24}) {
        run_groupby(std::int64_t{1} << 28, g);
      }
    }
  }

 private:
  multi_gpu_bench_args const& a_;
  bench_log log_;
  std::map<int, double> exchange_gbs_;
};

}  // namespace

void run_multi_gpu_bench(multi_gpu_bench_args const& a) { multi_gpu_bench(a).run(); }

}  // namespace joinery::cli
