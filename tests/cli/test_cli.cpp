// The joinery command line, end to end: generated files in, results checked against the oracle,
// and every kind of bad input refused with a one-line error and no partial output.
#include "support/oracle.hpp"

#include <joinery/groupby.hpp>
#include <joinery/io.hpp>
#include <joinery/memory.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <algorithm>
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

/// The CLI under test: JOINERY_CLI when set (a binary carried to another machine), else the one
/// this build made.
std::string cli_path() {
  char const* p = std::getenv("JOINERY_CLI");
  return p != nullptr && *p != '\0' ? std::string(p) : std::string(JOINERY_CLI_PATH);
}

/// The backend the tests run joins and group-bys on: JOINERY_TEST_BACKEND (cpu or gpu; gpu on a
/// lent GPU through scripts/device-check.sh), else cpu.
std::string test_backend() {
  char const* b = std::getenv("JOINERY_TEST_BACKEND");
  return b != nullptr && *b != '\0' ? std::string(b) : std::string("cpu");
}

class Cli : public ::testing::Test {
 protected:
  /// " --backend B" for the backend under test.
  static std::string on_backend() { return " --backend " + test_backend(); }

  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("joinery-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(std::string const& name) const { return (dir_ / name).string(); }

  /// Generates r_npy (`build_rows` primary keys) and s_npy (`probe_rows` foreign keys over
  /// `domain`, Zipf-skewed by `zipf`), one payload each, and returns the oracle's table join of
  /// them (the payloads carried).
  rows generate_pk_fk(int build_rows, int probe_rows, int domain, int seed, char const* zipf = "0") {
    EXPECT_EQ(run("gen --kind primary --rows " + std::to_string(build_rows) + " --payloads 1 -o " +
                  path("r_npy")).status, 0);
    EXPECT_EQ(run("gen --kind foreign --rows " + std::to_string(probe_rows) + " --domain " +
                  std::to_string(domain) + " --zipf " + zipf + " --payloads 1 --seed " +
                  std::to_string(seed) + " -o " + path("s_npy")).status, 0);
    auto const r = io::read_table(path("r_npy"));
    auto const s = io::read_table(path("s_npy"));
    join_options o;
    o.build_payloads = {1};
    o.probe_payloads = {1};
    return oracle_join_table(r.view(), 0, s.view(), 0, o);
  }

  outcome run(std::string const& args) const {
    auto const out = dir_ / ".stdout";
    auto const err = dir_ / ".stderr";
    auto const cmd = cli_path() + " " + args + " >" + out.string() + " 2>" + err.string();
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
                         " --on key --kind " + kind + " --summary" + on_backend());
    ASSERT_EQ(sum.status, 0) << sum.err;
    auto const j = nlohmann::json::parse(sum.out);
    EXPECT_EQ(j["rows"].get<std::uint64_t>(), agg.count);
    EXPECT_EQ(j["checksum"].get<std::uint64_t>(), agg.checksum);
    EXPECT_EQ(j["backend"], test_backend());
    EXPECT_EQ(j["algorithm"], "radix_hash");
    EXPECT_TRUE(j["seconds"].is_number());

    for (auto const* out : {"out.csv", "out_npy"}) {
      if (o.kind == join_kind::left_outer && std::string(out) == "out_npy") { continue; }  // nulls
      auto const w = run(std::string("join --build ") + path("r.csv") + " --probe " +
                         path("s_npy") + " --on key --kind " + kind + " --output " + path(out) +
                         " --summary" + on_backend());
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

// --device-budget: sizes with units; on the GPU backend a budget far below the data makes
// automatic stream the probe side (the result is the same); bad sizes are refused.
TEST_F(Cli, DeviceBudgetBoundsTheGpuAndIsParsedStrictly) {
  auto const expected = aggregate_of(generate_pk_fk(20000, 400000, 20000, 3));
  auto const base = "join --build " + path("r_npy") + " --probe " + path("s_npy") +
                    " --on key --summary" + on_backend();
  for (auto const* budget : {"8GiB", "2MiB", "3000000"}) {
    SCOPED_TRACE(budget);
    auto const out = run(base + " --device-budget " + budget);
    ASSERT_EQ(out.status, 0) << out.err;
    auto const j = nlohmann::json::parse(out.out);
    EXPECT_EQ(j["rows"].get<std::uint64_t>(), expected.count);
    EXPECT_EQ(j["checksum"].get<std::uint64_t>(), expected.checksum);
    if (test_backend() == "gpu") {
      EXPECT_EQ(j["algorithm"], std::string(budget) == "8GiB" ? "radix_hash" : "streamed");
    }
  }
  for (auto const* bad : {"0", "8XB", "GiB", "1.5GiB"}) {
    expect_refused(base + " --device-budget " + bad, "--device-budget");
  }
}

// CSV exported by a database: quoted text with commas around the columns read, a NULL literal
// (--null), on both commands.
TEST_F(Cli, QuotedCsvWithANullLiteral) {
  write_text("orders.csv", "o_orderkey,o_comment,o_custkey\n1,\"rush, fragile\",10\n"
                           "2,\"say \"\"hi\"\"\",NULL\n3,\"two\nlines\",30\n");
  write_text("lineitem.csv", "l_orderkey,l_qty\n1,5\n1,7\n2,NULL\n3,1\n4,9\n");
  auto const j = run("join --build " + path("orders.csv") + " --probe " + path("lineitem.csv") +
                     " --build-key o_orderkey --probe-key l_orderkey --build-columns o_custkey"
                     " --probe-columns l_qty --null NULL --kind left_outer --summary" + on_backend());
  ASSERT_EQ(j.status, 0) << j.err;
  auto const s = nlohmann::json::parse(j.out);
  EXPECT_EQ(s["rows"], 5);
  EXPECT_EQ(s["checksum"], (1 + 10 + 5) + (1 + 10 + 7) + (2 + 0 + 0) + (3 + 30 + 1) + (4 + 0 + 9));
  auto const g = run("groupby --input " + path("lineitem.csv") +
                     " --key l_orderkey --agg count,count_valid:l_qty,sum:l_qty --sort --null NULL" +
                     on_backend());
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_EQ(g.out, "l_orderkey,count,count_valid_l_qty,sum_l_qty\n1,2,2,12\n2,1,0,\n3,1,1,1\n"
                   "4,1,1,9\n");
  expect_refused("groupby --input " + path("lineitem.csv") + " --key l_orderkey --agg sum:l_qty" +
                   on_backend(),
                 "'NULL'");
}

// String keys from CSV (`name:string`): quoted text with commas, the empty string (matches
// itself) against an empty field (NULL, matches nothing); a string group-by sorted in byte
// order, NULLs last, MIN of a string column.
TEST_F(Cli, StringKeysFromCsv) {
  write_text("nations.csv", "n_name:string,n_key\nFRANCE,1\n\"GERMANY, WEST\",2\n\"\",3\nJAPAN,4\n");
  write_text("people.csv", "p_nation:string,p_age\nFRANCE,30\n\"GERMANY, WEST\",41\n,50\n"
                           "JAPAN,22\nFRANCE,35\nPERU,60\n\"\",70\n");
  auto const j = run("join --build " + path("nations.csv") + " --probe " + path("people.csv") +
                     " --build-key n_name --probe-key p_nation --build-columns n_key"
                     " --probe-columns p_age" + on_backend());
  ASSERT_EQ(j.status, 0) << j.err;
  std::vector<std::string> lines;
  std::istringstream in(j.out);
  for (std::string l; std::getline(in, l);) { lines.push_back(l); }
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "p_nation,build.n_key,probe.p_age");
  std::sort(lines.begin() + 1, lines.end());
  EXPECT_EQ(std::vector<std::string>(lines.begin() + 1, lines.end()),
            (std::vector<std::string>{"\"\",3,70", "\"GERMANY, WEST\",2,41", "FRANCE,1,30",
                                      "FRANCE,1,35", "JAPAN,4,22"}));
  auto const g = run("groupby --input " + path("people.csv") +
                     " --key p_nation --agg count,max:p_age,min:p_nation --sort" + on_backend());
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_EQ(g.out, "p_nation,count,max_p_age,min_p_nation\n\"\",1,70,\"\"\nFRANCE,2,35,FRANCE\n"
                   "\"GERMANY, WEST\",1,41,\"GERMANY, WEST\"\nJAPAN,1,22,JAPAN\nPERU,1,60,PERU\n"
                   ",1,50,\n");
  expect_refused("groupby --input " + path("people.csv") + " --key p_age --agg sum:p_nation" +
                   on_backend(),
                 "strings take count");
}

// triton on the GPU under a budget smaller than its inputs' partitioned copies, against
// the oracle's aggregate; on the CPU backend it is refused by name.
TEST_F(Cli, TritonJoinsUnderASmallBudgetOnTheGpu) {
  auto const r = generate_pk_fk(20000, 400000, 20000, 3);
  auto const expected = aggregate_of(r);
  auto const cmd = "join --build " + path("r_npy") + " --probe " + path("s_npy") +
                   " --on key --summary --algorithm triton --device-budget 2MiB" + on_backend();
  if (test_backend() == "cpu") {
    expect_refused(cmd, "not available on the cpu backend");
    return;
  }
  auto const out = run(cmd);
  ASSERT_EQ(out.status, 0) << out.err;
  auto const j = nlohmann::json::parse(out.out);
  EXPECT_EQ(j["algorithm"], "triton");
  EXPECT_EQ(j["rows"].get<std::uint64_t>(), expected.count);
  EXPECT_EQ(j["checksum"].get<std::uint64_t>(), expected.checksum);
}

// The streamed group-by under a budget that its input's columns would not fit copied whole:
// every group's sum the same as the CPU backend's; on the CPU backend it is refused by name.
TEST_F(Cli, StreamedGroupbyUnderASmallBudgetOnTheGpu) {
  ASSERT_EQ(run("gen --kind foreign --rows 2000000 --domain 5000 --payloads 2 -o " + path("g_npy")).status, 0);
  auto const cmd = [&](std::string const& extra) {
    return "groupby --input " + path("g_npy") + " --key key --agg count,sum:p0,max:p1,avg:p1 --sort" +
           extra;
  };
  auto const streamed = cmd(" --algorithm streamed --device-budget 8MiB" + on_backend());
  if (test_backend() == "cpu") {
    expect_refused(streamed, "not available on the cpu backend");
    return;
  }
  auto const got = run(streamed);
  ASSERT_EQ(got.status, 0) << got.err;
  auto const want = run(cmd(" --backend cpu"));
  ASSERT_EQ(want.status, 0) << want.err;
  EXPECT_EQ(got.out, want.out);
  auto const summary = run(cmd(" --device-budget 8MiB --summary" + on_backend()));
  ASSERT_EQ(summary.status, 0) << summary.err;
  EXPECT_EQ(nlohmann::json::parse(summary.out)["algorithm"], "streamed");
}

// A result written batch by batch (the streamed join on the GPU delivers one per probe chunk):
// the file holds every row, CSV and .npy alike, stdout too, and a kept target stays untouched.
TEST_F(Cli, StreamedResultsAreWrittenBatchByBatch) {
  auto const expected = generate_pk_fk(20000, 300000, 30000, 5);
  ASSERT_GT(expected.size(), 0u);
  auto const base = "join --build " + path("r_npy") + " --probe " + path("s_npy") +
                    " --on key --device-budget 2MiB" + on_backend();
  for (auto const* out : {"streamed.csv", "streamed_npy"}) {
    SCOPED_TRACE(out);
    auto const w = run(base + " --output " + path(out) + " --summary");
    ASSERT_EQ(w.status, 0) << w.err;
    if (test_backend() == "gpu") { EXPECT_EQ(nlohmann::json::parse(w.out)["algorithm"], "streamed"); }
    auto const back = io::read_table(path(out));
    std::vector<column_view> ordered;
    for (auto const* n : {"key", "build.p0", "probe.p0"}) {
      ordered.push_back(back.view().column(back.column_index(n)));
    }
    EXPECT_EQ(diff_rows(expected, table_rows(table_view(ordered))), "");
    auto const before = io::read_table(path(out)).data.num_rows();
    expect_refused(base + " --output " + path(out), "exists");
    EXPECT_EQ(io::read_table(path(out)).data.num_rows(), before);
  }
  auto const printed = run(base);
  ASSERT_EQ(printed.status, 0) << printed.err;
  std::istringstream lines(printed.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "key,build.p0,probe.p0");
  std::size_t rows = 0;
  while (std::getline(lines, line)) { ++rows; }
  EXPECT_EQ(rows, expected.size());  // one header, every row once
}

// --devices lists the multi-GPU joins' ranks (a GPU may repeat); the CPU backend refuses those
// algorithms by name, and bad lists are refused on every backend.
TEST_F(Cli, DevicesListTheRanksOfTheMultiGpuJoinsAndAreParsedStrictly) {
  auto const expected = aggregate_of(generate_pk_fk(30000, 200000, 30000, 4, "1"));
  auto const base = "join --build " + path("r_npy") + " --probe " + path("s_npy") +
                    " --on key --summary" + on_backend();
  for (auto const* algo : {"multi_gpu_hash", "multi_gpu_sort_merge"}) {
    for (auto const* ranks : {"0", "0,0,0", "all"}) {
      SCOPED_TRACE(std::string(algo) + " on " + ranks);
      auto const cmd = base + " --algorithm " + algo + " --devices " + ranks +
                       " --exchange peer_copy";
      if (test_backend() != "gpu") {
        expect_refused(cmd, "not available on the cpu backend");
        continue;
      }
      auto const out = run(cmd);
      ASSERT_EQ(out.status, 0) << out.err;
      auto const j = nlohmann::json::parse(out.out);
      EXPECT_EQ(j["rows"].get<std::uint64_t>(), expected.count);
      EXPECT_EQ(j["checksum"].get<std::uint64_t>(), expected.checksum);
      EXPECT_EQ(j["algorithm"], algo);
    }
  }
  for (auto const* bad : {"x", "-1", "0,,1", "1.5", "0;1"}) {
    expect_refused(base + " --algorithm multi_gpu_hash --devices '" + bad + "'", "--devices");
  }
  expect_refused(base + " --algorithm multi_gpu_hash --exchange mpi", "exchange method");
}

TEST_F(Cli, EveryAlgorithmOfTheBackendByNameMatchesOracle) {
  ASSERT_EQ(run("gen --kind foreign --rows 700 --domain 300 --payloads 1 -o " + path("r.csv")).status, 0);
  ASSERT_EQ(run("gen --kind foreign --rows 900 --domain 300 --zipf 1 --payloads 1 --seed 5 -o " +
                path("s.csv")).status, 0);
  auto const r = io::read_table(path("r.csv"));
  auto const s = io::read_table(path("s.csv"));
  join_options o;
  o.build_payloads = {1};
  o.probe_payloads = {1};
  auto const expected = aggregate_of(oracle_join_table(r.view(), 0, s.view(), 0, o));
  auto const algorithms = join_algorithms_on(backend_from_string(test_backend()));
  ASSERT_FALSE(algorithms.empty()) << test_backend();
  for (auto algo : algorithms) {
    auto const name = std::string(to_string(algo));
    auto const out = run("join --build " + path("r.csv") + " --probe " + path("s.csv") +
                         " --on key --algorithm " + name + " --summary" + on_backend());
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
                     "--build-columns w --probe-columns x" + on_backend());
  ASSERT_EQ(o.status, 0) << o.err;
  // 1<=3<=4; 5<=5<=8; 9<=12<=12: output k, build.w, probe.x
  EXPECT_EQ(o.out, "k,build.w,probe.x\n3,10,100\n5,50,200\n12,90,300\n");
}

TEST_F(Cli, LeftOuterCsvHasEmptyNullFieldsAndNpyRefusesNulls) {
  write_text("b.csv", "key,w\n1,10\n");
  write_text("p.csv", "key,v\n1,7\n2,8\n");
  auto const o = run("join --build " + path("b.csv") + " --probe " + path("p.csv") +
                     " --on key --kind left_outer" + on_backend());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "key,build.w,probe.v\n1,10,7\n2,,8\n");
  expect_refused("join --build " + path("b.csv") + " --probe " + path("p.csv") +
                   " --on key --kind left_outer --output " + path("nulls_npy") + on_backend(),
                 "null");
  EXPECT_FALSE(fs::exists(path("nulls_npy")));
}

/// The header line, then the other lines sorted (joins promise no row order).
std::string sorted_body(std::string const& csv) {
  std::istringstream in(csv);
  std::string header;
  std::getline(in, header);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) { lines.push_back(line); }
  std::sort(lines.begin(), lines.end());
  std::string out = header + "\n";
  for (auto const& l : lines) { out += l + "\n"; }
  return out;
}

TEST_F(Cli, SeveralKeyColumnsNullKeysAndEveryJoinKind) {
  // Keys (a, b); an empty field is NULL. Build row (1,) and probe row (1,) have a NULL key.
  write_text("b.csv", "a:int8,b,w:float64\n1,10,0.5\n1,20,1.5\n2,10,\n1,,3\n");
  write_text("p.csv", "b,a:int8,v\n10,1,7\n10,2,8\n30,2,9\n,1,6\n");
  auto const join_with = [&](std::string const& extra) {
    return run("join --build " + path("b.csv") + " --probe " + path("p.csv") +
               " --build-key a,b --probe-key a,b " + extra + on_backend());
  };
  auto o = join_with("--kind full_outer");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(sorted_body(o.out), "a,b,build.w,probe.v\n"
                                "1,,,6\n1,,3,\n1,10,0.5,7\n1,20,1.5,\n2,10,,8\n2,30,,9\n");
  o = join_with("--kind full_outer --nulls-equal");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(sorted_body(o.out), "a,b,build.w,probe.v\n"
                                "1,,3,6\n1,10,0.5,7\n1,20,1.5,\n2,10,,8\n2,30,,9\n");
  o = join_with("--kind right_anti");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(sorted_body(o.out), "a,b,build.w\n1,,3\n1,20,1.5\n");
  o = join_with("--kind right_semi --summary");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("\"rows\":2"), std::string::npos) << o.out;
  expect_refused("join --build " + path("b.csv") + " --probe " + path("p.csv") +
                   " --build-key a,b --probe-key a" + on_backend(),
                 "give both the same number");
}

TEST_F(Cli, GroupbyOnSeveralKeysWithNullKeysAndValues) {
  write_text("g.csv", "a:int8,b,v\n1,10,5\n1,10,\n1,,7\n,10,2\n1,10,3\n");
  auto const o = run("groupby --input " + path("g.csv") +
                     " --key a,b --agg count,count_valid:v,sum:v,min:v --sort" + on_backend());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "a,b,count,count_valid_v,sum_v,min_v\n1,10,3,2,8,3\n1,,1,1,7,7\n,10,1,1,2,2\n");
}

TEST_F(Cli, GroupbyCountsDistinctValuesAndChecksSumsWhenAsked) {
  // 2^62 + 2^62 leaves int64: wrapped by default, refused with --sum-overflow error (no output).
  write_text("d.csv", "k,v:int64\n1,4611686018427387904\n1,4611686018427387904\n2,3\n2,\n2,3\n"
                      "2,-5\n3,\n");
  auto const agg = " --key k --agg count_distinct:v,sum:v,count --sort" + on_backend();
  auto const o = run("groupby --input " + path("d.csv") + agg);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "k,count_distinct_v,sum_v,count\n1,1,-9223372036854775808,2\n2,2,1,4\n3,0,,1\n");
  expect_refused("groupby --input " + path("d.csv") + agg + " --sum-overflow error --output " +
                   path("out.csv"),
                 "overflows int64");
  EXPECT_FALSE(fs::exists(path("out.csv")));
  write_text("fits.csv", "k,v:int64\n1,9223372036854775807\n1,-9223372036854775807\n1,-9\n");
  auto const f = run("groupby --input " + path("fits.csv") + " --key k --agg sum:v,count_distinct:v"
                     " --sum-overflow error" + on_backend());
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(f.out, "k,sum_v,count_distinct_v\n1,-9,3\n");
  expect_refused("groupby --input " + path("d.csv") + " --key k --agg sum:v --sum-overflow maybe",
                 "unknown sum overflow policy 'maybe'");
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
                     path("out.csv") + on_backend());
  ASSERT_EQ(o.status, 0) << o.err;
  auto const back = io::read_table(path("out.csv"));
  EXPECT_EQ(back.names, (std::vector<std::string>{"key", "sum_p0", "count", "min_p1", "max_p1",
                                                  "avg_p0"}));
  EXPECT_EQ(diff_groups(oracle_groupby(in.view(), 0, aggs), groupby_rows(back.view())), "");
}

// The multi-GPU group-by with three ranks on one GPU (on the GPU backend): the same bytes as the
// CPU backend, sorted by key, with an exact average of 8-byte integers; refused by name on the CPU.
TEST_F(Cli, MultiGpuGroupbyWritesWhatTheCpuDoes) {
  ASSERT_EQ(run("gen --kind foreign --rows 60000 --domain 3000 --zipf 1.2 --payloads 2 "
                "--payload-type int64 --seed 9 -o " + path("in_npy")).status, 0);
  std::string const base = "groupby --input " + path("in_npy") +
                           " --key key --agg 'sum:p0, count,min:p1 , max:p1,avg:p0' --sort";
  auto const cpu_out = run(base + " --backend cpu");
  ASSERT_EQ(cpu_out.status, 0) << cpu_out.err;
  for (auto const* ranks : {"0,0,0", "all"}) {
    SCOPED_TRACE(ranks);
    auto const cmd = base + " --algorithm multi_gpu --devices " + ranks + on_backend();
    if (test_backend() != "gpu") {
      expect_refused(cmd, "not available on the cpu backend");
      continue;
    }
    auto const out = run(cmd);
    ASSERT_EQ(out.status, 0) << out.err;
    EXPECT_EQ(out.out, cpu_out.out);
  }
  expect_refused(base + " --algorithm multi_gpu --devices 0,x", "--devices");
}

TEST_F(Cli, GroupbyOnTheBackendPrintsSummarizesAndWritesWhatTheCpuDoes) {
  // The GPU backend's results live in device memory until the CLI copies them: every output
  // (stdout, --summary, CSV, .npy) must equal the CPU backend's, byte for byte.
  ASSERT_EQ(run("gen --kind foreign --rows 50000 --domain 2000 --zipf 0.8 --payloads 2 "
                "--payload-type int64 --seed 3 -o " + path("in_npy")).status, 0);
  std::string const base = "groupby --input " + path("in_npy") +
                           " --key key --agg 'sum:p0, count,min:p1 , max:p1,avg:p0' --sort";
  auto const cpu_out = run(base + " --backend cpu");
  auto const out = run(base + on_backend());
  ASSERT_EQ(cpu_out.status, 0) << cpu_out.err;
  ASSERT_EQ(out.status, 0) << out.err;
  EXPECT_EQ(std::count(out.out.begin(), out.out.end(), '\n'), 2001);  // header + 2000 groups
  EXPECT_EQ(out.out, cpu_out.out);

  auto const cpu_sum = run(base + " --summary --backend cpu");
  auto const sum = run(base + " --summary" + on_backend());
  ASSERT_EQ(sum.status, 0) << sum.err;
  auto const j = nlohmann::json::parse(sum.out);
  auto const jc = nlohmann::json::parse(cpu_sum.out);
  EXPECT_EQ(j["rows"], 2000);
  EXPECT_EQ(j["rows"], jc["rows"]);
  EXPECT_EQ(j["checksum"], jc["checksum"]);
  EXPECT_EQ(j["backend"], test_backend());

  for (auto const* out_name : {"g.csv", "g_npy"}) {
    SCOPED_TRACE(out_name);
    auto const cpu_file = std::string("cpu_") + out_name;
    ASSERT_EQ(run(base + " --backend cpu --output " + path(cpu_file)).status, 0);
    auto const w = run(base + " --output " + path(out_name) + on_backend());
    ASSERT_EQ(w.status, 0) << w.err;
    if (fs::is_directory(path(out_name))) {
      for (auto const& e : fs::directory_iterator(path(cpu_file))) {
        EXPECT_EQ(slurp(fs::path(path(out_name)) / e.path().filename()), slurp(e.path()))
          << e.path().filename();
      }
      EXPECT_EQ(std::distance(fs::directory_iterator(path(out_name)), fs::directory_iterator{}),
                6);
    } else {
      EXPECT_EQ(slurp(path(out_name)), slurp(path(cpu_file)));
    }
  }
}

TEST_F(Cli, AnExistingOutputIsKeptUnlessOverwriteAndThenOnlyJoinerysOwn) {
  write_text("b.csv", "key,w\n1,10\n2,20\n");
  write_text("p.csv", "key,v\n1,7\n2,8\n2,9\n");
  auto const join_to = [&](std::string const& out, std::string const& extra = "") {
    return "join --build " + path("b.csv") + " --probe " + path("p.csv") + " --on key --output " +
           out + extra + on_backend();
  };
  // A directory of the user's: refused, with or without --overwrite, and left as it was.
  fs::create_directories(path("mine"));
  write_text("mine/notes.txt", "keep me");
  expect_refused(join_to(path("mine")), "exists");
  expect_refused(join_to(path("mine"), " --overwrite"), "notes.txt");
  EXPECT_EQ(slurp(path("mine/notes.txt")), "keep me");
  // "--output ." in the directory of the inputs: refused, the inputs stay.
  for (auto const* extra : {"", " --overwrite"}) {
    auto const cmd = "cd " + dir_.string() + " && " + cli_path() + " " + join_to(".", extra) +
                     " >/dev/null 2>" + path(".err");
    EXPECT_NE(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_EQ(slurp(path("b.csv")), "key,w\n1,10\n2,20\n");
    EXPECT_EQ(slurp(path("p.csv")), "key,v\n1,7\n2,8\n2,9\n");
  }
  fs::remove(path(".err"));
  // An existing result file: refused without --overwrite, replaced with it.
  write_text("r.csv", "old");
  expect_refused(join_to(path("r.csv")), "--overwrite");
  EXPECT_EQ(slurp(path("r.csv")), "old");
  auto const o = run(join_to(path("r.csv"), " --overwrite"));
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(slurp(path("r.csv")), "key,build.w,probe.v\n1,10,7\n2,20,8\n2,20,9\n");
  // A .npy result directory is replaced with --overwrite; a directory named like a CSV is not.
  ASSERT_EQ(run(join_to(path("r_npy"))).status, 0);
  expect_refused(join_to(path("r_npy")), "exists");
  ASSERT_EQ(run(join_to(path("r_npy"), " --overwrite")).status, 0);
  EXPECT_EQ(io::read_table(path("r_npy")).data.num_rows(), 3);
  fs::create_directories(path("d.csv"));
  expect_refused(join_to(path("d.csv"), " --overwrite"), "not a regular file");
  // gen and groupby keep existing outputs too.
  expect_refused("gen --kind primary --rows 10 -o " + path("r.csv"), "exists");
  expect_refused("groupby --input " + path("p.csv") + " --key key --agg count --output " +
                   path("r.csv") + on_backend(),
                 "exists");
  EXPECT_EQ(slurp(path("r.csv")), "key,build.w,probe.v\n1,10,7\n2,20,8\n2,20,9\n");
}

TEST_F(Cli, OutputNamesOfOtherFormatsAreRefusedAndHelpSaysWhatIsWritten) {
  write_text("b.csv", "key,w\n1,10\n");
  for (auto const* name : {"out.txt", "out.parquet", "out.json", "out.npy", "OUT.TSV"}) {
    expect_refused("join --build " + path("b.csv") + " --probe " + path("b.csv") +
                     " --on key --output " + path(name) + on_backend(),
                   ".csv");
    expect_refused("gen --kind primary --rows 10 -o " + path(name), "directory of .npy");
  }
  EXPECT_EQ(listing(), (std::vector<std::string>{"b.csv"}));
  for (auto const* cmd : {"join", "groupby", "gen"}) {
    auto const h = run(std::string(cmd) + " --help");
    EXPECT_EQ(h.status, 0);
    EXPECT_NE(h.out.find(".npy files"), std::string::npos) << cmd << h.out;
    EXPECT_NE(h.out.find("--overwrite"), std::string::npos) << cmd;
  }
}

TEST_F(Cli, CsvWithCarriageReturnsBlankLinesAndOneLongLineJoin) {
  write_text("cr.csv", "key,v\r1,10\r2,20\r");
  write_text("crlf.csv", "key,w\r\n2,5\r\n1,6\r\n\r\n\r\n");
  auto const j = run("join --build " + path("crlf.csv") + " --probe " + path("cr.csv") +
                     " --on key --summary" + on_backend());
  ASSERT_EQ(j.status, 0) << j.err;
  auto const js = nlohmann::json::parse(j.out);
  EXPECT_EQ(js["rows"], 2);
  EXPECT_EQ(js["checksum"], 1 + 2 + 5 + 6 + 10 + 20);
  // One row longer than the parallel reader's chunks (a 1 MB field of leading zeros).
  write_text("long.csv", "key,v\n1,2\n3," + std::string(1 << 20, '0') + "4\n");
  auto const l = run("groupby --input " + path("long.csv") + " --key key --agg sum:v --sort" +
                     on_backend());
  ASSERT_EQ(l.status, 0) << l.err;
  EXPECT_EQ(l.out, "key,sum_v\n1,2\n3,4\n");
}

TEST_F(Cli, NegativeBandAndBlanksInListsAreHandled) {
  write_text("b.csv", "key,w\n1,10\n");
  expect_refused("join --build " + path("b.csv") + " --probe " + path("b.csv") +
                   " --on key --algorithm nested_loop --band -3" + on_backend(),
                 "--band -3 is negative");
  auto const o = run("join --build " + path("b.csv") + " --probe " + path("b.csv") +
                     " --on key --build-columns ' w ' --probe-columns '' --kind inner" +
                     on_backend());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "key,build.w\n1,10\n");
  auto const g = run("groupby --input " + path("b.csv") + " --key key --agg 'sum:w, count , max: w'" +
                     on_backend());
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_EQ(g.out, "key,sum_w,count,max_w\n1,10,1,10\n");
}

TEST_F(Cli, OnlyTheColumnsAnOperationUsesAreRead) {
  // Column "note" holds text that is no integer: reading it would fail, so these succeed only if
  // the column is never parsed.
  write_text("b.csv", "key,note,w\n1,hello,10\n2,world,20\n");
  write_text("p.csv", "note,key,v\nxx,2,7\nyy,1,8\n");
  auto const o = run("join --build " + path("b.csv") + " --probe " + path("p.csv") +
                     " --on key --build-columns w --probe-columns v --summary" + on_backend());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out)["checksum"], 2 + 1 + 20 + 10 + 7 + 8);
  auto const g = run("groupby --input " + path("b.csv") + " --key key --agg sum:w --sort" +
                     on_backend());
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_EQ(g.out, "key,sum_w\n1,10\n2,20\n");
  // In a .npy directory a broken column that is not asked for is not opened.
  ASSERT_EQ(run("gen --kind primary --rows 100 --payloads 1 -o " + path("t_npy")).status, 0);
  write_text("t_npy/broken.npy", "\x93NUMPY garbage");
  auto const n = run("groupby --input " + path("t_npy") + " --key key --agg count --summary" +
                     on_backend());
  ASSERT_EQ(n.status, 0) << n.err;
  EXPECT_EQ(nlohmann::json::parse(n.out)["rows"], 100);
  // Asking for the text column still gets a clear refusal naming it.
  expect_refused("groupby --input " + path("b.csv") + " --key key --agg sum:note" + on_backend(),
                 "hello");
}

TEST_F(Cli, ReadmeStatusTableListsWhatEachBackendHas) {
  // Every algorithm a backend of this build registers is marked "yes" in that backend's column.
  std::ifstream f(JOINERY_README_PATH);
  ASSERT_TRUE(f) << JOINERY_README_PATH;
  std::vector<std::string> table;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("| join |", 0) == 0 || line.rfind("| group-by |", 0) == 0) {
      table.push_back(line);
    }
  }
  ASSERT_FALSE(table.empty());
  auto const marked = [&](std::string const& op, std::string const& name, int column) {
    for (auto const& row : table) {
      if (row.rfind("| " + op + " |", 0) != 0 || row.find("`" + name + "`") == std::string::npos) {
        continue;
      }
      // Cells: | op | algorithms | CPU | GPU |
      std::vector<std::string> cells;
      std::size_t at = 1;
      for (auto next = row.find(" | ", at); next != std::string::npos; next = row.find(" | ", at)) {
        cells.push_back(row.substr(at, next - at));
        at = next + 3;
      }
      cells.push_back(row.substr(at));
      return cells.size() >= 4 && cells[static_cast<std::size_t>(column)].rfind("yes", 0) == 0;
    }
    return false;
  };
  std::vector<std::pair<backend, int>> backends{{backend::cpu, 2}};
  if (built_with_cuda()) { backends.emplace_back(backend::gpu, 3); }
  for (auto [be, column] : backends) {
    for (auto a : join_algorithms_on(be)) {
      EXPECT_TRUE(marked("join", std::string(to_string(a)), column)) << to_string(be) << " " << to_string(a);
    }
    for (auto a : groupby_algorithms_on(be)) {
      EXPECT_TRUE(marked("group-by", std::string(to_string(a)), column))
        << to_string(be) << " " << to_string(a);
    }
  }
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
           " --output " + path("result.csv") + on_backend();
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
  if (test_backend() == "cpu") {
    expect_refused(join("ok.csv", "ok.csv", "--algorithm triton"),
                   "not available on the cpu backend");
  }
  expect_refused(join("ok.csv", "ok.csv", "--kind sideways"), "unknown join kind");
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

TEST_F(Cli, BenchTuningOptionsAreCheckedBeforeAnythingRuns) {
  // The A/B knobs of the benchmarks are options (the library reads no environment variable):
  // bad names and values are refused with the option named, whatever the machine.
  expect_refused("bench join --css-search diagonal --out " + path("j.jsonl"), "diagonal");
  expect_refused("bench join --radix-partition sideways --out " + path("j.jsonl"), "sideways");
  expect_refused("bench groupby --css-search binary --out " + path("j.jsonl"), "--css-search");
  expect_refused("bench join --device-bandwidths 1,2 --out " + path("j.jsonl"),
                 "--device-bandwidths");
  expect_refused("bench gpu-groupby --tuning bogus=1 --out " + path("g.jsonl"),
                 built_with_cuda() ? "unknown key 'bogus'" : "--tuning needs a build with CUDA");
  if (built_with_cuda()) {
    expect_refused("bench gpu-groupby --tuning dense_batch=7 --out " + path("g.jsonl"),
                   "dense_batch");
  }
  expect_refused("bench gpu-groupby --shapes max2,median --out " + path("g.jsonl"),
                 "unknown shape 'median'");
  expect_refused("bench primitives --algorithm swwc --swwc-policy round --out " + path("p.jsonl"),
                 "--swwc-policy");
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
