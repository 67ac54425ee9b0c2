#pragma once
// What the experiment drivers share: the JSON-lines record of each measurement
// (the common fields added, appended to --out and printed), the sections asked
// for, and timed runs.
#include "timing.hpp"

#include <joinery/error.hpp>
#include <joinery/memory.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace joinery::cli {

/// The run settings every experiment records.
struct bench_run {
  std::string experiment;
  std::string out;    // append JSON lines here ("" = none)
  std::string parts;  // sections to run, comma-separated (empty: all)
  int runs = 3;
  int warmup = 1;
  std::string revision;
  std::string date;
  nlohmann::json extra = nlohmann::json::object();  // more fields for every line
};

class bench_log {
 public:
  explicit bench_log(bench_run run) : run_(std::move(run)) {
    if (!run_.out.empty()) {
      file_.open(run_.out, std::ios::app);
      if (!file_) { throw input_error("cannot open benchmark output " + run_.out); }
    }
  }

  [[nodiscard]] bool wants(std::string const& part) const { return wants_part(run_.parts, part); }

  /// Seconds of each timed call after the warm-up; the last call's JSON.
  std::pair<std::vector<double>, nlohmann::json> time(
    std::function<nlohmann::json()> const& f) const {
    return wall_runs(run_.warmup, run_.runs, f);
  }

  /// Adds the experiment, revision, date, device and run counts to `j` and
  /// writes it.
  void record(nlohmann::json j) {
    j["experiment"] = run_.experiment;
    j["revision"] = run_.revision;
    j["date"] = run_.date;
    j["device"] = device_count() > 0 ? get_device_info(0).name : std::string("none");
    j["runs"] = run_.runs;
    j["warmup"] = run_.warmup;
    for (auto const& [k, v] : run_.extra.items()) { j[k] = v; }
    if (file_.is_open()) { file_ << j.dump() << "\n" << std::flush; }
    std::cout << j.dump() << "\n" << std::flush;
  }

 private:
  bench_run run_;
  std::ofstream file_;
};

}  // namespace joinery::cli
