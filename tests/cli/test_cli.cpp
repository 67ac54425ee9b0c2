// The joinery command line, end to end: generated files in, results checked against the oracle,
// and every kind of bad input refused with a one-line error and no partial output.
#include "support/oracle.hpp"

#include <joinery/io.hpp>
#include <joinery/memory.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace joinery::test {
namespace {

struct outcome {
  int status = 0;
  std::string out;
  std::string err;
};

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("joinery-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(std::string const& name) const { return (dir_ / name).string(); }

  outcome run(std::string const& args) const {
    auto const out = dir_ / ".stdout";
    auto const err = dir_ / ".stderr";
    auto const cmd = std::string(JOINERY_CLI_PATH) + " " + args + " >" + out.string() + " 2>" +
                     err.string();
    outcome o;
    int const raw = std::system(cmd.c_str());
    o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    o.out = slurp(out);
    o.err = slurp(err);
    return o;
  }

  static std::string slurp(fs::path const& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }

  void write_text(std::string const& name, std::string const& text) const {
    std::ofstream(path(name)) << text;
  }

  /// Expects a clean refusal: exit 1, one line on stderr naming `needle`, nothing on stdout.
  void expect_refused(std::string const& args, std::string const& needle) const {
    auto const o = run(args);
    EXPECT_EQ(o.status, 1) << args << "\nstderr: " << o.err;
    EXPECT_NE(o.err.find(needle), std::string::npos) << args << "\nstderr: " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_EQ(o.err.rfind("joinery: error: ", 0), 0u) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }

  /// Files in the scratch directory (to prove no partial output was left behind).
  std::vector<std::string> listing() const {
    std::vector<std::string> v;
    for (auto const& e : fs::directory_iterator(dir_)) {
      auto const n = e.path().filename().string();
      if (n != ".stdout" && n != ".stderr") { v.push_back(n); }
    }
    std::sort(v.begin(), v.end());
    return v;
  }

  fs::path dir_;
};

std::vector<size_type> all_but_key(table_view const& t) {
  std::vector<size_type> v(static_cast<std::size_t>(t.num_columns() - 1));
  std::iota(v.begin(), v.end(), 1);
  return v;
}

TEST_F(Cli, JoinSummaryAndOutputsMatchOracleOnCsvAndNpy) {
  ASSERT_EQ(run("gen --kind primary --rows 3000 --payloads 2 --match-ratio 0.8 -o " + path("r.csv")).status, 0);
  ASSERT_EQ(run("gen --kind foreign --rows 9000 --domain 3000 --zipf 1.2 --payloads 1 "
                "--payload-type int64 --seed 9 -o " + path("s_npy")).status, 0);
  auto const r = io::read_table(path("r.csv"));
  auto const s = io::read_table(path("s_npy"));
  for (auto const* kind : {"inner", "left_semi", "left_anti", "left_outer"}) {
    SCOPED_TRACE(kind);
    join_options o;
    o.kind = join_kind_from_string(kind);
    o.build_payloads = all_but_key(r.view());
    o.probe_payloads = all_but_key(s.view());
    auto const expected = oracle_join_table(r.view(), 0, s.view(), 0, o);
    auto const agg = aggregate_of(expected);

    // Build from CSV, probe from .npy, and the other way round for the summary.
    auto const sum = run(std::string("join --build ") + path("r.csv") + " --probe " + path("s_npy") +
                         " --on key --kind " + kind + " --summary");
    ASSERT_EQ(sum.status, 0) << sum.err;
    auto const j = nlohmann::json::parse(sum.out);
    EXPECT_EQ(j["rows"].get<std::uint64_t>(), agg.count);
    EXPECT_EQ(j["checksum"].get<std::uint64_t>(), agg.checksum);
    EXPECT_EQ(j["backend"], "cpu");
    EXPECT_EQ(j["algorithm"], "radix_hash");
    EXPECT_TRUE(j["seconds"].is_number());

    for (auto const* out : {"out.csv", "out_npy"}) {
      if (o.kind == join_kind::left_outer && std::string(out) == "out_npy") { continue; }  // nulls
      auto const w = run(std::string("join --build ") + path("r.csv") + " --probe " +
                         path("s_npy") + " --on key --kind " + kind + " --output " + path(out) +
                         " --summary");
      ASSERT_EQ(w.status, 0) << w.err;
      EXPECT_EQ(nlohmann::json::parse(w.out)["checksum"].get<std::uint64_t>(), agg.checksum);
      auto const back = io::read_table(path(out));
      // A .npy directory comes back ordered by file name: put the columns in output order.
      std::vector<std::string> names{"key"};
      if (o.kind == join_kind::inner || o.kind == join_kind::left_outer) {
        for (auto const& n : {"build.p0", "build.p1"}) { names.emplace_back(n); }
      }
      names.emplace_back("probe.p0");
      std::vector<column_view> ordered;
      for (auto const& n : names) { ordered.push_back(back.view().column(back.column_index(n))); }
      EXPECT_EQ(diff_rows(expected, table_rows(table_view(ordered))), "") << out;
      fs::remove_all(path(out));
    }
  }
}

TEST_F(Cli, EveryCpuAlgorithmByNameMatchesOracle) {
  ASSERT_EQ(run("gen --kind foreign --rows 700 --domain 300 --payloads 1 -o " + path("r.csv")).status, 0);
  ASSERT_EQ(run("gen --kind foreign --rows 900 --domain 300 --zipf 1 --payloads 1 --seed 5 -o " +
                path("s.csv")).status, 0);
  auto const r = io::read_table(path("r.csv"));
  auto const s = io::read_table(path("s.csv"));
  join_options o;
  o.build_payloads = {1};
  o.probe_payloads = {1};
  auto const expected = aggregate_of(oracle_join_table(r.view(), 0, s.view(), 0, o));
  for (auto algo : join_algorithms_on(backend::cpu)) {
    auto const name = std::string(to_string(algo));
    auto const out = run("join --build " + path("r.csv") + " --probe " + path("s.csv") +
                         " --on key --backend cpu --algorithm " + name + " --summary");
    ASSERT_EQ(out.status, 0) << name << ": " << out.err;
    auto const j = nlohmann::json::parse(out.out);
    EXPECT_EQ(j["algorithm"], name);
    EXPECT_EQ(j["rows"].get<std::uint64_t>(), expected.count) << name;
    EXPECT_EQ(j["checksum"].get<std::uint64_t>(), expected.checksum) << name;
  }
}

TEST_F(Cli, JoinWithDistinctKeyNamesBandAndChosenColumns) {
  write_text("b.csv", "id,w\n1,10\n5,50\n9,90\n");
  write_text("p.csv", "x,k,v\n100,3,-1\n200,5,-2\n300,12,-3\n");
  auto const o = run("join --build " + path("b.csv") + " --probe " + path("p.csv") +
                     " --build-key id --probe-key k --algorithm nested_loop --band 3 "
                     "--build-columns w --probe-columns x");
  ASSERT_EQ(o.status, 0) << o.err;
  // 1<=3<=4; 5<=5<=8; 9<=12<=12: output k, build.w, probe.x
  EXPECT_EQ(o.out, "k,build.w,probe.x\n3,10,100\n5,50,200\n12,90,300\n");
}

TEST_F(Cli, LeftOuterCsvHasEmptyNullFieldsAndNpyRefusesNulls) {
  write_text("b.csv", "key,w\n1,10\n");
  write_text("p.csv", "key,v\n1,7\n2,8\n");
  auto const o = run("join --build " + path("b.csv") + " --probe " + path("p.csv") +
                     " --on key --kind left_outer");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "key,build.w,probe.v\n1,10,7\n2,,8\n");
  expect_refused("join --build " + path("b.csv") + " --probe " + path("p.csv") +
                   " --on key --kind left_outer --output " + path("nulls_npy"),
                 "null");
  EXPECT_FALSE(fs::exists(path("nulls_npy")));
}

TEST_F(Cli, GroupbyMatchesOracle) {
  ASSERT_EQ(run("gen --kind foreign --rows 20000 --domain 300 --zipf 0.7 --payloads 2 "
                "--payload-type int64 -o " + path("g.csv")).status, 0);
  auto const in = io::read_table(path("g.csv"));
  std::vector<aggregation> aggs{{aggregation_kind::sum, 1}, {aggregation_kind::count, -1},
                                {aggregation_kind::min, 2}, {aggregation_kind::max, 2},
                                {aggregation_kind::avg, 1}};
  auto const o = run("groupby --input " + path("g.csv") +
                     " --key key --agg sum:p0,count,min:p1,max:p1,avg:p0 --output " +
                     path("out.csv"));
  ASSERT_EQ(o.status, 0) << o.err;
  auto const back = io::read_table(path("out.csv"));
  EXPECT_EQ(back.names, (std::vector<std::string>{"key", "sum_p0", "count", "min_p1", "max_p1",
                                                  "avg_p0"}));
  EXPECT_EQ(diff_groups(oracle_groupby(in.view(), 0, aggs), groupby_rows(back.view())), "");
}

TEST_F(Cli, BadInputsAreRefusedWithOneLineAndNoOutput) {
  write_text("ok.csv", "key,v\n1,2\n3,4\n");
  write_text("ragged.csv", "key,v\n1,2\n3\n");
  write_text("text.csv", "key,v\n1,2\nabc,4\n");
  write_text("wide.csv", "key:int32,v\n1,2\n");
  write_text("float.csv", "key,v\n1.5,2\n");
  fs::create_directories(path("badnpy"));
  write_text("badnpy/key.npy", "\x93NUMPY\x01\x00garbage");
  fs::create_directories(path("emptydir"));
  auto const join = [&](std::string const& b, std::string const& p, std::string const& extra) {
    return "join --build " + path(b) + " --probe " + path(p) + " --on key " + extra +
           " --output " + path("result.csv");
  };
  expect_refused(join("missing.csv", "ok.csv", ""), "missing.csv");
  expect_refused(join("ok.csv", "ragged.csv", ""), "line 3");
  expect_refused(join("ok.csv", "text.csv", ""), "abc");
  expect_refused(join("ok.csv", "float.csv", ""), "1.5");
  expect_refused(join("ok.csv", "badnpy", ""), "key.npy");
  expect_refused(join("ok.csv", "emptydir", ""), "emptydir");
  expect_refused("join --build " + path("ok.csv") + " --probe " + path("ok.csv") +
                   " --on nokey --output " + path("result.csv"),
                 "no column 'nokey'");
  expect_refused(join("ok.csv", "wide.csv", ""), "mismatched key types");
  expect_refused(join("ok.csv", "ok.csv", "--algorithm fastest"), "unknown join algorithm 'fastest'");
  expect_refused(join("ok.csv", "ok.csv", "--algorithm triton"), "not available on the cpu backend");
  expect_refused(join("ok.csv", "ok.csv", "--kind full_outer"), "unknown join kind");
  expect_refused("groupby --input " + path("ok.csv") + " --key key --agg median:v", "median");
  expect_refused("gen --kind primary --rows lots -o " + path("x.csv"), "--rows");
  // Nothing but the inputs is left: no result files, no temporaries.
  EXPECT_EQ(listing(), (std::vector<std::string>{"badnpy", "emptydir", "float.csv", "ok.csv",
                                                 "ragged.csv", "text.csv", "wide.csv"}));
}

TEST_F(Cli, UsageErrorsExitNonZero) {
  auto const o = run("join --build x.csv");
  EXPECT_NE(o.status, 0);
  EXPECT_FALSE(o.err.empty());
}

TEST_F(Cli, GpuExperimentsRefuseWithoutAGpuAndWriteNothing) {
  if (device_count() > 0) {
    GTEST_SKIP() << "a GPU is present: the GPU experiments run (scripts/device-check.sh --bench)";
  }
  for (auto const* experiment : {"gpu-joins", "gpu-groupby", "wide-joins", "primitives"}) {
    expect_refused(std::string("bench ") + experiment + " --out " + path("gpu.jsonl"),
                   std::string("bench ") + experiment + " needs a GPU");
  }
  expect_refused("bench gpu-groupby --algorithm hash,sort --groups 2^10 --out " + path("gpu.jsonl"),
                 "needs a GPU");
  EXPECT_TRUE(listing().empty());
}

TEST_F(Cli, BenchPrimitivesRefusesDigitWidthsOutOfRange) {
  // Checked before anything runs, with or without a GPU.
  for (auto const* bits : {"13", "0", "8,x", "8,", "8,,9"}) {
    expect_refused("bench primitives --algorithm swwc --bits " + std::string(bits) + " --out " +
                     path("p.jsonl"),
                   "--bits");
  }
  EXPECT_TRUE(listing().empty());
}

TEST_F(Cli, BenchSmokeWritesJsonLines) {
  auto const o = run("bench join --build-rows 2^12 --probe-rows 2^14 --runs 3 --out " +
                     path("bench.jsonl"));
  ASSERT_EQ(o.status, 0) << o.err;
  std::ifstream f(path("bench.jsonl"));
  std::string line;
  ASSERT_TRUE(std::getline(f, line));
  auto const j = nlohmann::json::parse(line);
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["seconds"].size(), 3u);
  EXPECT_EQ(j["rows_out"], 1 << 14);
  EXPECT_GT(j["throughput_gtuples_s"].get<double>(), 0.0);
  for (auto const* k : {"revision", "date", "device", "median_s", "phase_median_s", "checksum"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
}

}  // namespace
}  // namespace joinery::test
