// The command line on bool, date and decimal columns: a typed CSV grouped, printed in the
// formats the CSV writer uses, written and read back with its types.
#include <joinery/io.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace fs = std::filesystem;

namespace joinery::test {
namespace {

/// Runs `joinery ARGS` (JOINERY_CLI, else this build's binary; on JOINERY_TEST_BACKEND, else
/// cpu) with stdout to `out`; returns the exit status.
int run_cli(std::string const& args, fs::path const& out) {
  char const* bin = std::getenv("JOINERY_CLI");
  char const* backend = std::getenv("JOINERY_TEST_BACKEND");
  auto const cmd = std::string(bin != nullptr && *bin != '\0' ? bin : JOINERY_CLI_PATH) + " " +
                   args + " --backend " +
                   (backend != nullptr && *backend != '\0' ? backend : "cpu") + " >" +
                   out.string() + " 2>&1";
  int const raw = std::system(cmd.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

std::string file_text(fs::path const& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(CliLogical, GroupByDateSumsDecimalsAndTakesMaxOfBools) {
  auto const dir =
    fs::temp_directory_path() / ("joinery-cli-logical-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // The decimal annotation unquoted, as people write it: its field runs on to the ')'.
  std::ofstream(dir / "in.csv") << "d:date32,p:decimal64(12,2),b:bool\n"
                                   "2021-01-01,1.50,true\n"
                                   "2021-01-01,2.25,false\n"
                                   "1969-12-31,-0.05,false\n"
                                   "2021-01-01,,\n"
                                   "2000-02-29,0.10,\n";
  auto const input =
    " --input " + (dir / "in.csv").string() + " --key d --agg sum:p,max:b,count --sort";
  ASSERT_EQ(run_cli("groupby" + input, dir / "stdout"), 0) << file_text(dir / "stdout");
  EXPECT_EQ(file_text(dir / "stdout"),
            "d,sum_p,max_b,count\n"
            "1969-12-31,-0.05,false,1\n"
            "2000-02-29,0.10,,1\n"
            "2021-01-01,3.75,true,3\n");

  ASSERT_EQ(run_cli("groupby" + input + " -o " + (dir / "out.csv").string(), dir / "stdout"), 0)
    << file_text(dir / "stdout");
  auto const back = io::read_csv(dir / "out.csv");
  ASSERT_EQ(back.names, (std::vector<std::string>{"d", "sum_p", "max_b", "count"}));
  auto const v = back.view();
  EXPECT_EQ(v.column(0).type(), type_id::date32);
  EXPECT_TRUE(is_decimal(v.column(1).type()));
  EXPECT_EQ(v.column(1).decimal().scale, 2);
  EXPECT_EQ(v.column(2).type(), type_id::bool8);
  std::vector<std::string> rows;
  for (size_type r = 0; r < v.num_rows(); ++r) {
    std::string row;
    for (size_type c = 0; c < v.num_columns(); ++c) {
      row += (c > 0 ? "," : "") + io::format_value(v.column(c), r);
    }
    rows.push_back(row);
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"1969-12-31,-0.05,false,1", "2000-02-29,0.10,,1",
                                            "2021-01-01,3.75,true,3"}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace joinery::test
