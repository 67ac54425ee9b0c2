// One process per GPU on the command line: two `joinery join --rank R --world 2
// --rendezvous FILE` processes started together form one group (NCCL); their
// output files together are the join, both summaries give the group's totals,
// and the rendezvous file is gone afterwards. Needs two GPUs and the GPU
// backend under test; the refusals of incomplete rank options run everywhere.
#include "support/oracle.hpp"

#include <joinery/io.hpp>
#include <joinery/memory.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace fs = std::filesystem;

namespace joinery::test {
namespace {

std::string cli() {
  char const* p = std::getenv("JOINERY_CLI");
  return p != nullptr && *p != '\0' ? std::string(p) : std::string(JOINERY_CLI_PATH);
}

std::string backend_under_test() {
  char const* b = std::getenv("JOINERY_TEST_BACKEND");
  return b != nullptr && *b != '\0' ? std::string(b) : std::string("cpu");
}

std::string text_of(fs::path const& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class CliRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("joinery-cli-ranks-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  [[nodiscard]] std::string path(std::string const& name) const { return (dir_ / name).string(); }
  /// Runs a shell command line; returns its exit status.
  static int shell(std::string const& line) {
    int const raw = std::system(line.c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }
  fs::path dir_;
};

TEST_F(CliRanks, IncompleteRankOptionsAreRefused) {
  ASSERT_EQ(shell(cli() + " gen --kind primary --rows 100 --payloads 1 -o " + path("r.csv")), 0);
  auto const base = cli() + " join --build " + path("r.csv") + " --probe " + path("r.csv") +
                    " --on key --summary";
  for (auto const* partial : {" --rank 0", " --rank 0 --world 2", " --world 2 --rendezvous x"}) {
    SCOPED_TRACE(partial);
    EXPECT_EQ(shell(base + partial + " >" + path("out") + " 2>" + path("err")), 1);
    EXPECT_NE(text_of(path("err")).find("--rank, --world and --rendezvous"), std::string::npos)
      << text_of(path("err"));
    EXPECT_TRUE(text_of(path("out")).empty());
  }
}

TEST_F(CliRanks, TwoProcessesJoinAsOneGroup) {
  if (backend_under_test() != "gpu") {
    GTEST_SKIP() << "runs with JOINERY_TEST_BACKEND=gpu on a lent machine with two GPUs";
  }
  if (device_count() < 2) { GTEST_SKIP() << "needs two GPUs (a lent nvidia-h200-x2)"; }
  ASSERT_EQ(shell(cli() + " gen --kind primary --rows 50000 --payloads 1 -o " + path("r_npy")), 0);
  ASSERT_EQ(shell(cli() + " gen --kind foreign --rows 200000 --domain 60000 --zipf 1.1 "
                          "--payloads 1 --seed 5 -o " + path("s_npy")),
            0);
  auto const r = io::read_table(path("r_npy"));
  auto const s = io::read_table(path("s_npy"));
  for (auto const* algo : {"multi_gpu_hash", "multi_gpu_sort_merge"}) {
    SCOPED_TRACE(algo);
    join_options o;
    o.build_payloads = {1};
    o.probe_payloads = {1};
    auto const expected = oracle_join_table(r.view(), 0, s.view(), 0, o);
    auto const agg = aggregate_of(expected);
    auto const rank_cmd = [&](int rank) {
      return cli() + " join --build " + path("r_npy") + " --probe " + path("s_npy") +
             " --on key --backend gpu --algorithm " + algo + " --rank " + std::to_string(rank) +
             " --world 2 --rendezvous " + path("meet") + " --output " + path("out.csv") +
             " --summary >" + path("sum" + std::to_string(rank)) + " 2>" +
             path("err" + std::to_string(rank));
    };
    ASSERT_EQ(shell("(" + rank_cmd(1) + ") & (" + rank_cmd(0) + "); a=$?; wait $!; b=$?; "
                    "exit $((a + b))"),
              0)
      << text_of(path("err0")) << text_of(path("err1"));
    EXPECT_FALSE(fs::exists(path("meet"))) << "rank 0 leaves no rendezvous file";
    std::uint64_t rank_rows = 0;
    for (int rank : {0, 1}) {
      auto const j = nlohmann::json::parse(text_of(path("sum" + std::to_string(rank))));
      EXPECT_EQ(j["rank"], rank);
      EXPECT_EQ(j["world"], 2);
      EXPECT_EQ(j["rows"].get<std::uint64_t>(), agg.count);
      EXPECT_EQ(j["checksum"].get<std::uint64_t>(), agg.checksum);
      EXPECT_EQ(j["algorithm"], algo);
      rank_rows += j["rank_rows"].get<std::uint64_t>();
    }
    EXPECT_EQ(rank_rows, agg.count);
    rows together;
    for (auto const* piece : {"out.rank0.csv", "out.rank1.csv"}) {
      auto const t = io::read_table(path(piece));
      auto const got = table_rows(t.view());
      together.insert(together.end(), got.begin(), got.end());
      fs::remove(path(piece));
    }
    std::sort(together.begin(), together.end());
    EXPECT_EQ(diff_rows(expected, together), "");
  }
  // One rank's output file exists: every rank stops with an error, nothing is
  // written or removed, and no rank waits for the other.
  std::ofstream(path("out.rank1.csv")) << "a user's file\n";
  auto const rank_cmd = [&](int rank) {
    return cli() + " join --build " + path("r_npy") + " --probe " + path("s_npy") +
           " --on key --backend gpu --algorithm multi_gpu_hash --rank " + std::to_string(rank) +
           " --world 2 --rendezvous " + path("meet") + " --output " + path("out.csv") + " 2>" +
           path("err" + std::to_string(rank));
  };
  EXPECT_EQ(shell("(" + rank_cmd(1) + ") & (" + rank_cmd(0) + "); a=$?; wait $!; b=$?; "
                  "[ $a -eq 1 ] && [ $b -eq 1 ]"),
            0)
    << text_of(path("err0")) << text_of(path("err1"));
  EXPECT_NE(text_of(path("err1")).find("exists"), std::string::npos) << text_of(path("err1"));
  EXPECT_NE(text_of(path("err0")).find("rank 1"), std::string::npos) << text_of(path("err0"));
  EXPECT_EQ(text_of(path("out.rank1.csv")), "a user's file\n");
  EXPECT_FALSE(fs::exists(path("out.rank0.csv")));
  EXPECT_FALSE(fs::exists(path("meet")));
}

}  // namespace
}  // namespace joinery::test
