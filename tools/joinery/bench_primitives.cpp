// joinery bench primitives: CUDA-event timings (median of --runs after --warmup) of the radix
// primitives and the sorts at --rows elements, each against the device-to-device copy of the same
// data.
#include "bench_primitives.hpp"
#include "timing.hpp"

#include <joinery/gen.hpp>
#include <joinery/primitives/checksum.hpp>
#include <joinery/primitives/gather.hpp>
#include <joinery/primitives/map.hpp>
#include <joinery/primitives/partition.hpp>
#include <joinery/primitives/sort.hpp>

#include <nlohmann/json.hpp>

#if defined(JOINERY_HAS_CUDA)
#include "core/cuda_try.hpp"
#include "core/hash.hpp"

#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace joinery::cli {

namespace {

/// An integer option within [lo, hi]; `what` says what it takes when it is not.
int int_option(std::string const& text, char const* option, int lo, int hi,
               std::string const& what) {
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (std::exception const&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < lo || v > hi) {
    throw input_error(std::string(option) + " takes " + what + ", not '" + text + "'");
  }
  return v;
}

std::string range(int lo, int hi) { return std::to_string(lo) + ".." + std::to_string(hi); }

}  // namespace

detail::gpu::swwc_tuning parse_swwc_tuning(swwc_options const& o) {
  using detail::gpu::swwc_tuning;
  using detail::gpu::swwc_variant;
  swwc_tuning t;
  if (!o.policy.empty()) {
    for (auto v : {swwc_variant::base, swwc_variant::wide, swwc_variant::long_tile,
                   swwc_variant::wide_long}) {
      if (detail::gpu::swwc_variant_name(v) == o.policy) { t.variant = v; }
    }
    if (!t.variant) {
      throw input_error("--swwc-policy takes base, wide, long_tile or wide_long, not '" +
                        o.policy + "'");
    }
  }
  if (!o.align.empty()) {
    if (o.align != "on" && o.align != "off") {
      throw input_error("--swwc-align takes on or off, not '" + o.align + "'");
    }
    t.aligned_flushes = o.align == "on";
  }
  if (!o.log2b.empty()) {
    t.log2_buffer = int_option(o.log2b, "--swwc-log2b", 0, swwc_tuning::max_log2_buffer,
                               "N in " + range(0, swwc_tuning::max_log2_buffer) +
                                 " (buffers of 2^N tuples a digit)");
  }
  if (!o.b.empty()) {
    auto const what = "a multiple of 16 in " +
                      range(swwc_tuning::min_buffer_tuples, swwc_tuning::max_buffer_tuples) +
                      " (tuples a digit)";
    t.buffer_tuples = int_option(o.b, "--swwc-b", swwc_tuning::min_buffer_tuples,
                                 swwc_tuning::max_buffer_tuples, what);
    if (*t.buffer_tuples % 16 != 0) {
      throw input_error("--swwc-b takes " + what + ", not '" + o.b + "'");
    }
  }
  if (!o.log2c.empty()) {
    t.log2_chunk = int_option(o.log2c, "--hswwc-log2c", swwc_tuning::min_log2_chunk,
                              swwc_tuning::max_log2_chunk,
                              "N in " + range(swwc_tuning::min_log2_chunk,
                                              swwc_tuning::max_log2_chunk) +
                                " (staged chunks of 2^N rows)");
  }
  if (!o.log2r.empty()) {
    t.log2_ring = int_option(o.log2r, "--hswwc-log2r", 0, swwc_tuning::max_log2_ring,
                             "N in " + range(0, swwc_tuning::max_log2_ring) +
                               " (rings of 2^N staging slots a digit)");
  }
  return t;
}

#if !defined(JOINERY_HAS_CUDA)

void run_primitives_bench(primitives_bench_args const&) {
  JOINERY_FAIL("bench primitives needs a GPU, and this joinery was built without CUDA");
}

#else

namespace {

/// The fields of `t` that are set, by name (empty object: none).
nlohmann::json swwc_tuning_json(detail::gpu::swwc_tuning const& t) {
  auto j = nlohmann::json::object();
  if (t.variant) { j["policy"] = std::string(detail::gpu::swwc_variant_name(*t.variant)); }
  if (t.aligned_flushes) { j["aligned_flushes"] = *t.aligned_flushes; }
  if (t.log2_buffer) { j["log2_buffer"] = *t.log2_buffer; }
  if (t.buffer_tuples) { j["buffer_tuples"] = *t.buffer_tuples; }
  if (t.log2_chunk) { j["log2_chunk"] = *t.log2_chunk; }
  if (t.log2_ring) { j["log2_ring"] = *t.log2_ring; }
  return j;
}

class primitives_bench {
 public:
  explicit primitives_bench(primitives_bench_args const& a) : a_(a) {
    JOINERY_EXPECTS(a.runs >= 1, "--runs must be at least 1");
    JOINERY_EXPECTS(a.rows >= 1, "--rows must be at least 1");
    JOINERY_EXPECTS(device_count() > 0, "bench primitives needs a GPU, and none is present");
    device_ = get_device_info(0).name;
    if (!a.out.empty()) {
      auto const parent = std::filesystem::path(a.out).parent_path();
      if (!parent.empty()) { std::filesystem::create_directories(parent); }
      file_.open(a.out, std::ios::app);
      if (!file_) { throw input_error("cannot open benchmark output " + a.out); }
    }
  }
  primitives_bench(primitives_bench const&) = delete;
  primitives_bench& operator=(primitives_bench const&) = delete;

  void run() {
    for (int width : {4, 8}) { run_width(width); }
  }

 private:
  /// Seconds of each timed call (CUDA events on the bench's stream).
  std::vector<double> time(std::function<void()> const& f) {
    for (int i = 0; i < a_.warmup; ++i) { f(); }
    std::vector<double> t;
    for (int i = 0; i < a_.runs; ++i) { t.push_back(time_call(true, stream_.ref(), f)); }
    return t;
  }

  /// Times `f`, which moves `bytes` (read + written), and records one JSON line.
  double measure(nlohmann::json params, double bytes, std::function<void()> const& f) {
    auto const times = time(f);
    double const med = median(times);
    double const gbps = bytes / med / 1e9;
    nlohmann::json j = std::move(params);
    j["experiment"] = "primitives";
    j["revision"] = a_.revision;
    j["date"] = a_.date;
    j["backend"] = "gpu";
    j["device"] = device_;
    j["rows"] = a_.rows;
    j["warmup"] = a_.warmup;
    j["runs"] = a_.runs;
    j["seconds"] = times;
    j["median_s"] = med;
    j["min_s"] = *std::min_element(times.begin(), times.end());
    j["max_s"] = *std::max_element(times.begin(), times.end());
    j["bytes"] = bytes;
    j["gbps"] = gbps;
    if (copy_gbps_ > 0) {
      j["copy_gbps"] = copy_gbps_;
      j["fraction_of_copy"] = gbps / copy_gbps_;
    }
    if (file_) { file_ << j.dump() << "\n" << std::flush; }
    char line[256];
    std::snprintf(line, sizeof(line), "%-16s %-14s %2s bits  %d+%d B  %9.3f ms  %7.1f GB/s  %5.1f%% of copy\n",
                  j.value("primitive", std::string()).c_str(),
                  j.value("algorithm", std::string("-")).c_str(),
                  j.contains("bits") ? std::to_string(j["bits"].get<int>()).c_str() : "-",
                  j.value("key_bytes", 0), j.value("payload_bytes", 0), med * 1e3, gbps,
                  copy_gbps_ > 0 ? 100.0 * gbps / copy_gbps_ : 100.0);
    std::cout << line;
    if (a_.zipf > 0) { std::cout << "  (keys Zipf " << a_.zipf << " over 2^24 values)\n"; }
    std::cout << std::flush;
    return gbps;
  }

  void run_width(int width) {
    auto const s = stream_.ref();
    auto const cs = static_cast<cudaStream_t>(s.handle());
    auto const n = a_.rows;
    auto const type = width == 4 ? type_id::uint32 : type_id::uint64;
    // Fresh random keys over the whole key range and random payloads.
    gen::relation_spec spec;
    spec.rows = n;
    spec.kind = gen::key_kind::foreign;
    spec.key_type = type;
    spec.domain = width == 4 ? (std::int64_t{1} << 32) - 2 : std::int64_t{1} << 62;
    if (a_.zipf > 0) {
      spec.domain = std::int64_t{1} << 24;
      spec.zipf = a_.zipf;
    }
    spec.payload_types = {type};
    spec.seed = a_.seed + static_cast<std::uint64_t>(width);
    column keys, payload;
    {
      auto const host = gen::generate(spec);
      keys = column::copy_of(host.view().column(0), device_resource(), s);
      payload = column::copy_of(host.view().column(1), device_resource(), s);
    }
    auto const w = static_cast<double>(width);
    auto const nd = static_cast<double>(n);
    double const tuple_bytes = 2 * w;
    nlohmann::json base{{"key_bytes", width}, {"payload_bytes", width}, {"zipf", a_.zipf}};

    // Roofline: copy the tuples (keys and payloads) device to device.
    {
      column k2(type, n, device_resource(), s), p2(type, n, device_resource(), s);
      auto const bytes = static_cast<std::size_t>(n) * static_cast<std::size_t>(width);
      copy_gbps_ = 0;
      auto params = base;
      params["primitive"] = "copy";
      copy_gbps_ = measure(params, 2 * nd * tuple_bytes, [&] {
        JOINERY_CUDA_TRY(cudaMemcpyAsync(k2.data(), keys.data(), bytes, cudaMemcpyDeviceToDevice, cs));
        JOINERY_CUDA_TRY(cudaMemcpyAsync(p2.data(), payload.data(), bytes, cudaMemcpyDeviceToDevice, cs));
      });
    }
    // One partitioning pass (histogram + scan + reorder / sort + bounds), tuples read + written.
    auto const key_sum = checksum(keys.view(), s);
    std::vector<partition_algorithm> algos;
    bool with_split = a_.partition_algorithms.empty();
    bool with_access = a_.partition_algorithms.empty();  // map, gather, scatter
    bool with_tuples = a_.partition_algorithms.empty();  // radix_partition_tuples
    for (auto const& name : a_.partition_algorithms) {
      if (name == "tuples") {
        with_tuples = true;
      } else if (name == "split") {
        with_split = true;
      } else if (name == "access") {
        with_access = true;
      } else {
        algos.push_back(partition_algorithm_from_string(name));
      }
    }
    if (a_.partition_algorithms.empty()) {
      algos = {partition_algorithm::stable_cub, partition_algorithm::shared_atomic,
               partition_algorithm::block_scatter, partition_algorithm::swwc,
               partition_algorithm::hierarchical};
    }
    // The swwc tuning (A/B runs) goes to the swwc and hierarchical rows, and into their lines.
    auto const tuned = swwc_tuning_json(a_.swwc);
    for (auto algo : algos) {
      bool const swwc_family =
        algo == partition_algorithm::swwc || algo == partition_algorithm::hierarchical;
      auto const tuning = swwc_family ? a_.swwc : detail::gpu::swwc_tuning{};
      for (int bits : a_.bits) {
        {  // Not timed: the result is a permutation of the input.
          auto const r =
            detail::radix_partition(keys.view(), {payload.view()}, 0, bits, algo, tuning, s);
          JOINERY_EXPECTS(checksum(r.keys.view(), s) == key_sum,
                          "bench primitives: radix_partition lost keys");
        }
        auto params = base;
        params["primitive"] = "radix_partition";
        params["algorithm"] = std::string(to_string(algo));
        params["bits"] = bits;
        if (swwc_family && !tuned.empty()) { params["swwc_tuning"] = tuned; }
        measure(params, 2 * nd * tuple_bytes, [&] {
          auto const r =
            detail::radix_partition(keys.view(), {payload.view()}, 0, bits, algo, tuning, s);
        });
      }
    }
    // The same pass into interleaved (key, payload) tuples (chunked write-combining).
    if (with_tuples) {
      auto const pay_sum = checksum(payload.view(), s);
      for (int bits : a_.bits) {
        {  // Not timed: the tuples are a permutation of the input's keys and payloads.
          auto const r = radix_partition_tuples(keys.view(), payload.view(), 0, bits, s);
          column_view const all(type, r.tuples.data(), 2 * n, memory_space::device);
          JOINERY_EXPECTS(checksum(all, s) == key_sum + pay_sum,
                          "bench primitives: radix_partition_tuples lost tuples");
        }
        auto params = base;
        params["primitive"] = "radix_partition_tuples";
        params["algorithm"] = "chunked_swwc";
        params["bits"] = bits;
        measure(params, 2 * nd * tuple_bytes, [&] {
          auto const r = radix_partition_tuples(keys.view(), payload.view(), 0, bits, s);
        });
      }
    }
    // Sorts of (key, payload) pairs: CUB's radix sort and the merge path merge sort (payload
    // gathered by row ids). GB/s counts one read and one write of the tuples, so the fraction of
    // copy is the sort's cost in copies of its input.
    struct sort_row {
      char const* primitive;
      char const* algorithm;
      table (*run)(column_view const&, column_view const&, stream_ref);
    };
    sort_row const sorts[] = {
      {"sort_pairs", "radix_cub",
       [](column_view const& k, column_view const& p, stream_ref st) {
         return sort_pairs(k, {p}, st);
       }},
      {"merge_sort_pairs", "merge_path",
       [](column_view const& k, column_view const& p, stream_ref st) {
         return merge_sort_pairs(k, {p}, sort_order::ascending, st);
       }},
    };
    for (auto const& row : sorts) {
      if (!a_.partition_algorithms.empty()) { break; }
      {  // Not timed: the result is a permutation of the input.
        auto const r = row.run(keys.view(), payload.view(), s);
        JOINERY_EXPECTS(checksum(r.column(0).view(), s) == key_sum,
                        std::string("bench primitives: ") + row.primitive + " lost keys");
      }
      auto params = base;
      params["primitive"] = row.primitive;
      params["algorithm"] = row.algorithm;
      measure(params, 2 * nd * tuple_bytes,
              [&] { auto const r = row.run(keys.view(), payload.view(), s); });
    }
    // He et al.'s split by 256 ids (the keys' low byte, computed on the host) moving the payload:
    // ids and payload read, payload written (the sort of the ids inside it is the split's own cost).
    if (with_split) {
      column ids;
      {
        std::vector<std::uint32_t> host_ids(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {
          host_ids[static_cast<std::size_t>(i)] =
            static_cast<std::uint32_t>(detail::fmix64(static_cast<std::uint64_t>(i) + a_.seed) & 255U);
        }
        ids = column::copy_of(column_view::of(host_ids), device_resource(), s);
      }
      auto const pay_sum = checksum(payload.view(), s);
      {  // Not timed: the result is a permutation of the payload.
        auto const r = split(ids.view(), 256, {payload.view()}, s);
        JOINERY_EXPECTS(checksum(r.columns[0].view(), s) == pay_sum,
                        "bench primitives: split lost rows");
      }
      auto params = base;
      params["primitive"] = "split";
      params["algorithm"] = "stable_cub";  // 4- and 8-byte columns move in CUB's stable pass
      params["bits"] = 8;
      measure(params, nd * 4 + 2 * nd * w,
              [&] { auto const r = split(ids.view(), 256, {payload.view()}, s); });
    }
    if (with_access) { run_access(width, keys, payload); }
    // The histogram reads the keys once.
    for (int bits : {8, 11}) {
      auto params = base;
      params["primitive"] = "radix_histogram";
      params["payload_bytes"] = 0;
      params["bits"] = bits;
      measure(params, nd * w, [&] { auto const h = radix_histogram(keys.view(), 0, bits, s); });
    }
    // The scan of int64 counts (the payload's bits), read + written.
    if (width == 8) {
      column_view const counts(type_id::int64, payload.data(), n, memory_space::device);
      auto params = base;
      params["primitive"] = "prefix_scan";
      params["key_bytes"] = 8;
      params["payload_bytes"] = 0;
      measure(params, 2 * nd * 8, [&] { auto const o = prefix_scan(counts, s); });
    }
    s.synchronize();
  }

  /// He et al.'s map, gather and scatter: the map hashes the keys (read + written); gather and
  /// scatter move the payload through int64 row ids (ids read, values read + written), once in
  /// order ("clustered", Wu et al. 4.1.1) and once through a pseudo-random permutation
  /// ("unclustered": every warp's 32 values lie in 32 different lines).
  void run_access(int width, column const& keys, column const& payload) {
    auto const s = stream_.ref();
    auto const n = a_.rows;
    auto const nd = static_cast<double>(n);
    auto const w = static_cast<double>(width);
    nlohmann::json base{{"key_bytes", width}, {"payload_bytes", 0}, {"zipf", a_.zipf}};
    {
      auto params = base;
      params["primitive"] = "map";
      params["algorithm"] = "hash_murmur";
      measure(params, 2 * nd * w, [&] { auto const h = hash_keys(keys.view(), hash_function::murmur, s); });
    }
    auto const pay_sum = checksum(payload.view(), s);
    column target(payload.type(), n, device_resource(), s);
    for (bool clustered : {true, false}) {
      column ids;
      {
        // A bijection of [0, 2^k) (odd multiplies and xor-shifts, mod 2^k), cycle-walked into
        // [0, n): a permutation of the rows.
        int k = 1;
        while ((std::int64_t{1} << k) < n) { ++k; }
        std::uint64_t const mask = (std::uint64_t{1} << k) - 1;
        auto const perm = [&](std::uint64_t x) {
          do {
            x = (x * 0x9e3779b97f4a7c15ULL) & mask;
            x ^= x >> (k / 2 + 1);
            x = (x * 0xbf58476d1ce4e5b9ULL) & mask;
            x ^= x >> (k / 3 + 1);
          } while (x >= static_cast<std::uint64_t>(n));
          return x;
        };
        std::vector<std::int64_t> host_ids(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {
          host_ids[static_cast<std::size_t>(i)] =
            clustered ? i : static_cast<std::int64_t>(perm(static_cast<std::uint64_t>(i)));
        }
        ids = column::copy_of(column_view::of(host_ids), device_resource(), s);
      }
      char const* algorithm = clustered ? "clustered" : "unclustered";
      {  // Not timed: both move a permutation of the payload.
        JOINERY_EXPECTS(checksum(gather(payload.view(), ids.view(), bounds_check::checked, s).view(), s) == pay_sum,
                        "bench primitives: gather lost values");
        scatter(payload.view(), ids.view(), target, bounds_check::checked, s);
        JOINERY_EXPECTS(checksum(target.view(), s) == pay_sum, "bench primitives: scatter lost values");
      }
      auto params = base;  // the values are payloads: 0 + w bytes
      params["key_bytes"] = 0;
      params["payload_bytes"] = width;
      params["algorithm"] = algorithm;
      params["primitive"] = "gather";
      measure(params, nd * (8 + 2 * w), [&] { auto const g = gather(payload.view(), ids.view(), bounds_check::unchecked, s); });
      params["primitive"] = "scatter";
      measure(params, nd * (8 + 2 * w), [&] { scatter(payload.view(), ids.view(), target, bounds_check::unchecked, s); });
    }
  }

  primitives_bench_args const& a_;
  std::string device_;
  std::ofstream file_;
  cuda_stream stream_;
  double copy_gbps_ = 0;
};

}  // namespace

void run_primitives_bench(primitives_bench_args const& a) {
  primitives_bench b(a);
  std::cout << "bench primitives: " << a.rows << " rows, median of " << a.runs
            << " runs; GB/s = bytes read + written per second\n";
  b.run();
}

#endif

}  // namespace joinery::cli
