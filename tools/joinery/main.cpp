// joinery: joins, group-bys, workload generation and benchmarks from the command line.
#include "cli.hpp"

#include <joinery/error.hpp>

#include <cstdio>
#include <iostream>
#include <string>

namespace {
/// Library messages end with " [file:line]": useful in logs, noise on a terminal.
std::string one_line(std::string msg) {
  if (auto const p = msg.rfind(" ["); p != std::string::npos && msg.back() == ']') {
    msg.erase(p);
  }
  for (auto& c : msg) {
    if (c == '\n') { c = ' '; }
  }
  return msg;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"joinery: relational joins and grouped aggregations on GPUs and CPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "joinery 0.1.0");
  joinery::cli::add_gen(app);
  joinery::cli::add_join(app);
  joinery::cli::add_groupby(app);
  joinery::cli::add_bench(app);
  try {
    app.parse(argc, argv);
  } catch (CLI::ParseError const& e) {
    return app.exit(e);
  } catch (std::exception const& e) {
    std::cerr << "joinery: error: " << one_line(e.what()) << "\n";
    return 1;
  }
  return 0;
}
