// joinery bench general-keys (BENCHMARKS.md, "general-keys").
#include "bench_keys.hpp"
#include "bench_log.hpp"

#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <nlohmann/json.hpp>
#include <omp.h>

#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace joinery::cli {

namespace {

/// A host column of n values f(i); NULL where null(i) when `null` is given.
template <class T>
column host_column(std::int64_t n, std::function<T(std::int64_t)> const& f,
                   std::function<bool(std::int64_t)> const& null = {}) {
  column c(type_to_id_v<T>, n);
  auto* d = c.data_as<T>();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) { d[i] = f(i); }
  if (null) {
    auto* mask = c.make_nullable();
    std::int64_t nulls = 0;
#pragma omp parallel for schedule(static) reduction(+ : nulls)
    for (std::int64_t byte = 0; byte < (n + 7) / 8; ++byte) {
      std::uint8_t m = 0;
      for (std::int64_t b = 0; b < 8 && byte * 8 + b < n; ++b) {
        bool const is_null = null(byte * 8 + b);
        m = static_cast<std::uint8_t>(m | ((is_null ? 0U : 1U) << b));
        nulls += is_null ? 1 : 0;
      }
      mask[byte] = m;
    }
    c.set_null_count(nulls);
  }
  return c;
}

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x9e3779b97f4a7c15ULL;
  return x ^ (x >> 29);
}

class keys_bench {
 public:
  explicit keys_bench(keys_bench_args const& a)
      : a_(a),
        gpu_(a.backend == "gpu"),
        log_({"general-keys", a.out, a.parts, a.runs, a.warmup, a.revision, a.date,
              {{"threads", omp_get_max_threads()}, {"backend", a.backend}}}) {
    JOINERY_EXPECTS(a.backend == "gpu" || a.backend == "cpu",
                    "general-keys runs on --backend gpu or cpu, not " + a.backend);
  }

  void run() {
    if (log_.wants("join")) { joins(); }
    if (log_.wants("nulls")) { nulls(); }
    if (log_.wants("groupby")) { groupbys(); }
    if (log_.wants("strings")) { strings(); }
  }

 private:
  /// The table in the benchmark's memory (device memory on the GPU backend).
  table placed(std::vector<column>&& host) const {
    if (!gpu_) { return table(std::move(host)); }
    std::vector<column> out;
    for (auto const& c : host) { out.push_back(column::copy_of(c.view(), device_resource())); }
    return table(std::move(out));
  }

  /// Median seconds of a join, recorded with its shape and the baseline's seconds.
  double time_join(std::string const& section, std::string const& shape, table const& build,
                   std::vector<size_type> const& bk, table const& probe,
                   std::vector<size_type> const& pk, std::vector<size_type> const& bp,
                   std::vector<size_type> const& pp, output_form form, double baseline) {
    join_options o;
    o.backend = gpu_ ? backend::gpu : backend::cpu;
    o.output = form;
    o.build_payloads = bp;
    o.probe_payloads = pp;
    auto const [t, last] = log_.time([&] {
      auto const r = join(build, bk, probe, pk, o);
      nlohmann::json phases = nlohmann::json::object();
      for (auto const& ph : r.stats.phases) { phases[ph.name] = ph.seconds; }
      return nlohmann::json{{"rows_out", r.aggregate.count},
                            {"checksum", r.aggregate.checksum},
                            {"algorithm", std::string(to_string(r.stats.algorithm))},
                            {"phases", phases}};
    });
    auto const s = median(t);
    auto j = last;
    j["section"] = section;
    j["shape"] = shape;
    j["form"] = std::string(to_string(form));
    j["build_rows"] = build.num_rows();
    j["probe_rows"] = probe.num_rows();
    j["inputs"] = gpu_ && section != "strings" ? "device" : "host";
    j["seconds"] = s;
    j["g_tuples_per_s"] = static_cast<double>(build.num_rows() + probe.num_rows()) / s / 1e9;
    if (baseline > 0) { j["vs_baseline"] = s / baseline; }
    log_.record(j);
    return s;
  }

  void joins() {
    auto const s_rows = a_.rows;
    auto const r_rows = a_.rows / 2;
    // Build keys: a permutation of 0..R-1; probe keys: uniform over them (every row matches).
    std::vector<std::int64_t> ids(static_cast<std::size_t>(r_rows));
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), std::mt19937_64(a_.seed));
    auto const probe_id = [&](std::int64_t i) {
      return static_cast<std::int64_t>(mix(a_.seed + static_cast<std::uint64_t>(i)) %
                                       static_cast<std::uint64_t>(r_rows));
    };
    auto const side = [&](std::int64_t n, std::function<std::int64_t(std::int64_t)> const& id) {
      std::vector<column> c;
      c.push_back(host_column<std::int64_t>(n, [&](std::int64_t i) { return id(i); }));
      c.push_back(host_column<std::int32_t>(n, [&](std::int64_t i) {
        return static_cast<std::int32_t>(id(i) >> 16); }));
      c.push_back(host_column<std::int32_t>(n, [&](std::int64_t i) {
        return static_cast<std::int32_t>(id(i) & 0xffff); }));
      // Full-range int64 pairs: a bijection of the id spread over 128 bits.
      c.push_back(host_column<std::int64_t>(n, [&](std::int64_t i) {
        return static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(id(i)) * 2 + 1)); }));
      c.push_back(host_column<std::int64_t>(n, [&](std::int64_t i) {
        return static_cast<std::int64_t>(mix(~static_cast<std::uint64_t>(id(i)))); }));
      c.push_back(host_column<std::int32_t>(n, [&](std::int64_t i) {
        return static_cast<std::int32_t>(mix(static_cast<std::uint64_t>(i) + 7) & 0x3fffffff); }));
      return placed(std::move(c));
    };
    auto const build = side(r_rows, [&](std::int64_t i) { return ids[static_cast<std::size_t>(i)]; });
    auto const probe = side(s_rows, probe_id);
    for (auto form : {output_form::aggregate, output_form::table}) {
      auto const base = time_join("join", "one_int64", build, {0}, probe, {0}, {5}, {5}, form, 0);
      time_join("join", "two_int32", build, {1, 2}, probe, {1, 2}, {5}, {5}, form, base);
      time_join("join", "two_int64_hashed", build, {3, 4}, probe, {3, 4}, {5}, {5}, form, base);
    }
  }

  void nulls() {
    auto const s_rows = a_.rows;
    auto const r_rows = a_.rows / 2;
    auto const build_key = [&](std::int64_t i) {
      return static_cast<std::int32_t>(mix(a_.seed * 3 + static_cast<std::uint64_t>(i)) %
                                       static_cast<std::uint64_t>(r_rows));
    };
    auto const probe_key = [&](std::int64_t i) {
      return static_cast<std::int32_t>(mix(a_.seed * 5 + static_cast<std::uint64_t>(i)) %
                                       static_cast<std::uint64_t>(r_rows));
    };
    auto const one_in_ten = [&](std::uint64_t salt) {
      return [salt](std::int64_t i) { return mix(salt + static_cast<std::uint64_t>(i)) % 10 == 0; };
    };
    auto const side = [&](std::int64_t n, std::function<std::int32_t(std::int64_t)> const& key,
                          bool with_nulls, std::uint64_t salt) {
      std::vector<column> c;
      std::function<bool(std::int64_t)> none;
      c.push_back(host_column<std::int32_t>(n, key, with_nulls ? one_in_ten(salt) : none));
      c.push_back(host_column<std::int32_t>(n, [](std::int64_t i) {
        return static_cast<std::int32_t>(i & 0x3fffffff); }, with_nulls ? one_in_ten(salt + 1) : none));
      return placed(std::move(c));
    };
    for (auto form : {output_form::aggregate, output_form::table}) {
      auto const b0 = side(r_rows, build_key, false, 11);
      auto const p0 = side(s_rows, probe_key, false, 13);
      auto const base = time_join("nulls", "int32_no_nulls", b0, {0}, p0, {0}, {1}, {1}, form, 0);
      auto const b1 = side(r_rows, build_key, true, 11);
      auto const p1 = side(s_rows, probe_key, true, 13);
      time_join("nulls", "int32_10pct_nulls", b1, {0}, p1, {0}, {1}, {1}, form, base);
    }
  }

  double time_groupby(std::string const& shape, table const& t, std::vector<size_type> const& keys,
                      double baseline) {
    groupby_options o;
    o.backend = gpu_ ? backend::gpu : backend::cpu;
    std::vector<aggregation> aggs{{aggregation_kind::sum, t.num_columns() - 1}};
    auto const [tm, last] = log_.time([&] {
      auto const r = groupby(t, keys, aggs, o);
      nlohmann::json phases = nlohmann::json::object();
      for (auto const& ph : r.stats.phases) { phases[ph.name] = ph.seconds; }
      return nlohmann::json{{"groups", r.num_groups()},
                            {"algorithm", std::string(to_string(r.stats.algorithm))},
                            {"phases", phases}};
    });
    auto const s = median(tm);
    auto j = last;
    j["section"] = "groupby";
    j["shape"] = shape;
    j["rows"] = t.num_rows();
    j["inputs"] = gpu_ && shape.find("_host") == std::string::npos ? "device" : "host";
    j["seconds"] = s;
    j["g_rows_per_s"] = static_cast<double>(t.num_rows()) / s / 1e9;
    if (baseline > 0) { j["vs_baseline"] = s / baseline; }
    log_.record(j);
    return s;
  }

  void groupbys() {
    auto const n = a_.rows;
    auto const group = [&](std::int64_t i) {
      return static_cast<std::int64_t>(mix(a_.seed * 7 + static_cast<std::uint64_t>(i)) & 0xffff);
    };
    auto const value = [](std::int64_t i) { return static_cast<std::int32_t>(i & 0xfffff); };
    auto const make = [&](bool two_keys, bool with_nulls) {
      std::vector<column> c;
      if (two_keys) {
        c.push_back(host_column<std::int32_t>(n, [&](std::int64_t i) {
          return static_cast<std::int32_t>(group(i) >> 8) * 1000; }));
        c.push_back(host_column<std::int32_t>(n, [&](std::int64_t i) {
          return static_cast<std::int32_t>(group(i) & 0xff) - 128; }));
      } else {
        c.push_back(host_column<std::int64_t>(n, [&](std::int64_t i) { return group(i) * 7919; }));
      }
      std::function<bool(std::int64_t)> none;
      c.push_back(host_column<std::int32_t>(n, value, with_nulls ? std::function<bool(std::int64_t)>(
        [](std::int64_t i) { return mix(static_cast<std::uint64_t>(i) + 99) % 10 == 0; }) : none));
      return placed(std::move(c));
    };
    auto const one = make(false, false);
    auto const base = time_groupby("one_int64_key", one, {0}, 0);
    time_groupby("two_int32_keys", make(true, false), {0, 1}, base);
    time_groupby("one_int64_key_10pct_null_values", make(false, true), {0}, base);
  }

  /// Random ASCII strings of 8..24 characters (mean 16), one per id: six characters spell a
  /// bijective scramble of the id (unique), the rest follow from its hash.
  static column id_strings(std::int64_t n, std::function<std::int64_t(std::int64_t)> const& id) {
    static constexpr char alphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";
    auto const length = [&](std::int64_t i) { return 8 + static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(id(i))) % 17); };
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t i = 0; i < n; ++i) { offsets[static_cast<std::size_t>(i) + 1] = offsets[static_cast<std::size_t>(i)] + length(i); }
    auto c = column::strings(type_id::string, n, static_cast<std::size_t>(offsets.back()));
    auto* o = static_cast<std::int32_t*>(c.data());
    char* chars = c.chars();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i <= n; ++i) {
      o[i] = static_cast<std::int32_t>(offsets[static_cast<std::size_t>(i)]);
      if (i == n) { continue; }
      auto const v = static_cast<std::uint64_t>(id(i));
      auto scrambled = (v * 0x9E3779B97ULL) & ((std::uint64_t{1} << 36) - 1);  // odd: bijective mod 2^36
      char* out = chars + offsets[static_cast<std::size_t>(i)];
      for (int k = 0; k < 6; ++k, scrambled >>= 6) { out[k] = alphabet[scrambled & 63]; }
      auto h = mix(v ^ 0x5bd1e995);
      for (std::int64_t k = 6; k < length(i); ++k) {
        out[k] = alphabet[h & 63];
        h = h >> 6 == 0 ? mix(h + static_cast<std::uint64_t>(k)) : h >> 6;
      }
    }
    return c;
  }

  /// strings: a PK-FK join on string keys (|R| = rows / 2, |S| = rows, mean length 16) against
  /// the same join on int64 ids, and a group-by of `rows` rows over 2^16 string keys against
  /// int64 keys; every column in host memory (string columns are read on the host).
  void strings() {
    auto const s_rows = a_.rows;
    auto const r_rows = a_.rows / 2;
    auto const probe_id = [&](std::int64_t i) {
      return static_cast<std::int64_t>(mix(a_.seed + static_cast<std::uint64_t>(i)) %
                                       static_cast<std::uint64_t>(r_rows));
    };
    auto const build_id = [&](std::int64_t i) { return (i * 7919) % r_rows; };
    auto const side = [&](std::int64_t n, std::function<std::int64_t(std::int64_t)> const& id) {
      std::vector<column> c;
      c.push_back(host_column<std::int64_t>(n, [&](std::int64_t i) { return id(i); }));
      c.push_back(id_strings(n, id));
      c.push_back(host_column<std::int32_t>(n, [&](std::int64_t i) {
        return static_cast<std::int32_t>(mix(static_cast<std::uint64_t>(i) + 7) & 0x3fffffff); }));
      return table(std::move(c));
    };
    auto const build = side(r_rows, build_id);
    auto const probe = side(s_rows, probe_id);
    for (auto form : {output_form::aggregate, output_form::table}) {
      auto const base = time_join("strings", "one_int64_host", build, {0}, probe, {0}, {2}, {2},
                                  form, 0);
      time_join("strings", "string_mean16_host", build, {1}, probe, {1}, {2}, {2}, form, base);
    }
    auto const group = [&](std::int64_t i) {
      return static_cast<std::int64_t>(mix(a_.seed * 7 + static_cast<std::uint64_t>(i)) & 0xffff);
    };
    std::vector<column> g;
    g.push_back(host_column<std::int64_t>(s_rows, group));
    g.push_back(id_strings(s_rows, group));
    g.push_back(host_column<std::int32_t>(s_rows, [](std::int64_t i) {
      return static_cast<std::int32_t>(i & 0xfffff); }));
    table const t(std::move(g));
    auto const base = time_groupby("one_int64_key_host", t, {0}, 0);
    time_groupby("string_key_mean16_host", t, {1}, base);
  }

  keys_bench_args a_;
  bool gpu_;
  bench_log log_;
};

}  // namespace

void run_keys_bench(keys_bench_args const& a) { keys_bench(a).run(); }

}  // namespace joinery::cli
