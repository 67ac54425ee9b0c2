// joinery bench multi-gpu (BENCHMARKS.md, "Several GPUs"). Join times are wall
// times of the whole join() call; the exchange is timed on its own through the
// communicator.
#include "bench_multi_gpu.hpp"
#include "bench_log.hpp"
#include "timing.hpp"

#include "core/communicator.hpp"  // the exchange on its own
#include "core/rank_plan.hpp"

#include <joinery/distributed.hpp>
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
        std::vector<std::vector<std::size_t>> bytes(n, std::vector<std::size_t>(n, bucket));
        for (std::size_t r = 0; r < n; ++r) { bytes[r][r] = 0; }  // only what crosses a link
        auto const [t, last] = log_.time([&] {
          comm.for_each_rank([&](int r) {
            detail::communicator::round b;
            b.send = send[static_cast<std::size_t>(r)].data();
            b.recv = recv[static_cast<std::size_t>(r)].data();
            b.bytes = bytes;
            comm.all_to_all(r, {b});
          });
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

  /// A join's output rows, checksum and phases, for its line.
  static nlohmann::json join_line(join_aggregate const& a, join_stats const& stats) {
    nlohmann::json phases = nlohmann::json::object();
    for (auto const& p : stats.phases) { phases[p.name] = p.seconds; }
    return nlohmann::json{{"rows_out", a.count}, {"checksum", a.checksum}, {"phase_s", phases}};
  }

  /// The fields every line of a join workload has.
  static nlohmann::json workload_line(nlohmann::json j, char const* name, std::string const& space,
                                      std::string const& algo, int gpus, std::int64_t r_rows,
                                      std::int64_t s_rows, type_id type,
                                      std::vector<double> const& t) {
    j["case"] = std::string("workload_") + name;
    j["input_space"] = space;
    j["algorithm"] = algo;
    j["gpus"] = gpus;
    j["build_rows"] = r_rows;
    j["probe_rows"] = s_rows;
    j["key_type"] = std::string(to_string(type));
    j["seconds"] = t;
    j["median_s"] = median(t);
    j["gtuples_s"] = static_cast<double>(r_rows + s_rows) / median(t) / 1e9;
    return j;
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
          return join_line(res.aggregate, res.stats);
        });
        auto const med = median(t);
        auto const algo_name = std::string(to_string(algo));
        if (gpus == 1) { one_gpu[algo_name] = med; }
        auto j = workload_line(last, name, std::string(to_string(space)), algo_name, gpus, r_rows,
                               s_rows, type, t);
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
      if (space == memory_space::device) { single_gpu_ = one_gpu; }
    }
    run_distributed(name, r_rows, s_rows, type);
  }

  /// The same workload with both sides already split over the GPUs (a part of
  /// each in every GPU's memory), joined by the distributed join; the speed-ups
  /// against the single-GPU joins on inputs in one GPU's memory.
  void run_distributed(char const* name, std::int64_t r_rows, std::int64_t s_rows, type_id type) {
    auto const build = relation(r_rows, true, 0, type, a_.seed, memory_space::host);
    auto const probe = relation(s_rows, false, r_rows, type, a_.seed + 1, memory_space::host);
    for (int g : gpu_counts()) {
      auto const group = rank_group::in_process(first_gpus(g));
      auto const& comm = *group.communicator();
      auto const n = static_cast<std::size_t>(g);
      std::vector<table> bparts(n);
      std::vector<table> pparts(n);
      auto const part_of = [](table_view const& t, int r, int ranks) {
        auto const range = detail::rank_share(t.num_rows(), ranks, r);
        std::vector<column> cols;
        for (auto const& c : t) {
          auto const width = static_cast<size_type>(size_of(c.type()));
          column_view const v(c.type(), static_cast<unsigned char const*>(c.data()) + range.first * width,
                              range.last - range.first, c.space());
          cols.push_back(column::copy_of(v, device_resource()));
        }
        return table(std::move(cols));
      };
      comm.for_each_rank([&](int r) {  // each part in its own GPU's memory
        bparts[static_cast<std::size_t>(r)] = part_of(build.view(), r, g);
        pparts[static_cast<std::size_t>(r)] = part_of(probe.view(), r, g);
      });
      distributed_table_view b;
      distributed_table_view p;
      for (std::size_t r = 0; r < n; ++r) {
        b.parts.push_back(bparts[r].view());
        p.parts.push_back(pparts[r].view());
      }
      for (auto algo : {join_algorithm::multi_gpu_hash, join_algorithm::multi_gpu_sort_merge}) {
        join_options o;
        o.algorithm = algo;
        o.output = output_form::aggregate;
        o.build_payloads = {1};
        o.probe_payloads = {1};
        auto const [t, last] = log_.time([&] {
          auto const res = join(group, b, 0, p, 0, o);
          return join_line(res.aggregate, res.stats);
        });
        auto const med = median(t);
        auto j = workload_line(last, name, "distributed", std::string(to_string(algo)), g, r_rows,
                               s_rows, type, t);
        if (g == 1) { distributed_one_gpu_[std::string(to_string(algo))] = med; }
        if (g > 1 && distributed_one_gpu_.count(std::string(to_string(algo))) != 0) {
          j["speedup_over_1_gpu"] = distributed_one_gpu_[std::string(to_string(algo))] / med;
        }
        if (single_gpu_.count("radix_hash") != 0) {
          j["speedup_over_radix_hash_1_gpu"] = single_gpu_["radix_hash"] / med;
        }
        log_.record(j);
      }
      comm.for_each_rank([&](int r) {  // freed on their own GPUs
        bparts[static_cast<std::size_t>(r)] = table();
        pparts[static_cast<std::size_t>(r)] = table();
      });
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
  std::map<std::string, double> single_gpu_;          // one GPU, inputs in its memory
  std::map<std::string, double> distributed_one_gpu_;  // the distributed join on one GPU
};

}  // namespace

void run_multi_gpu_bench(multi_gpu_bench_args const& a) { multi_gpu_bench(a).run(); }

}  // namespace joinery::cli
