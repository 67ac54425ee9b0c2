// Consumer of an installed joinery: a join and a group-by over host vectors, checked by hand.
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, std::string const& what) {
  if (!ok) {
    std::cerr << "consumer: MISMATCH: " << what << '\n';
    ++failures;
  }
}

}  // namespace

int main() {
  try {
    // build (R): a primary key 1..4 with a payload; probe (S): foreign keys, 9 matches nothing.
    std::vector<std::int32_t> r_key{1, 2, 3, 4};
    std::vector<std::int64_t> r_val{10, 20, 30, 40};
    std::vector<std::int32_t> s_key{2, 4, 4, 9, 1};
    std::vector<std::int64_t> s_val{100, 200, 300, 400, 500};
    joinery::table_view build({joinery::column_view::of(r_key), joinery::column_view::of(r_val)});
    joinery::table_view probe({joinery::column_view::of(s_key), joinery::column_view::of(s_val)});

    // Inner join on the CPU backend, index form: pairs (build row, probe row).
    joinery::join_options opts;
    opts.backend = joinery::backend::cpu;
    auto res = joinery::join(build, 0, probe, 0, opts);
    auto b = res.build_rows.to_vector<std::int64_t>();
    auto p = res.probe_rows.to_vector<std::int64_t>();
    check(b.size() == p.size(), "index columns differ in length");
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    for (std::size_t i = 0; i < std::min(b.size(), p.size()); ++i) pairs.emplace_back(b[i], p[i]);
    std::sort(pairs.begin(), pairs.end());
    std::vector<std::pair<std::int64_t, std::int64_t>> want{{0, 4}, {1, 0}, {3, 1}, {3, 2}};
    check(pairs == want, "join index pairs");
    check(res.num_rows() == 4, "join row count " + std::to_string(res.num_rows()) + " != 4");
    check(res.stats.backend == joinery::backend::cpu, "join backend is not cpu");

    // Aggregate form with both payloads: count and the wrapping sum of key + payloads.
    opts.output = joinery::output_form::aggregate;
    opts.build_payloads = {1};
    opts.probe_payloads = {1};
    auto agg = joinery::join(build, 0, probe, 0, opts);
    // rows (key, r_val, s_val): (2,20,100) (4,40,200) (4,40,300) (1,10,500) -> 1221
    check(agg.aggregate.count == 4, "aggregate count");
    check(agg.aggregate.checksum == 1221,
          "aggregate checksum " + std::to_string(agg.aggregate.checksum) + " != 1221");

    // Group-by on S: key -> count, sum, min, max of the payload, groups sorted by key.
    joinery::groupby_options gopts;
    gopts.backend = joinery::backend::cpu;
    gopts.sort_by_key = true;
    auto g = joinery::groupby(probe, 0,
                              {{joinery::aggregation_kind::count, 1},
                               {joinery::aggregation_kind::sum, 1},
                               {joinery::aggregation_kind::min, 1},
                               {joinery::aggregation_kind::max, 1}},
                              gopts);
    check(g.num_groups() == 4, "group count " + std::to_string(g.num_groups()) + " != 4");
    check(g.columns.num_columns() == 5, "group-by result has 5 columns");
    if (g.num_groups() == 4 && g.columns.num_columns() == 5) {
      check(g.columns.column(0).to_vector<std::int32_t>() == std::vector<std::int32_t>{1, 2, 4, 9},
            "group keys");
      check(g.columns.column(1).to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 1, 2, 1},
            "group counts");
      check(g.columns.column(2).to_vector<std::int64_t>() ==
                std::vector<std::int64_t>{500, 100, 500, 400},
            "group sums");
      check(g.columns.column(3).to_vector<std::int64_t>() ==
                std::vector<std::int64_t>{500, 100, 200, 400},
            "group mins");
      check(g.columns.column(4).to_vector<std::int64_t>() ==
                std::vector<std::int64_t>{500, 100, 300, 400},
            "group maxes");
    }
  } catch (std::exception const& e) {
    std::cerr << "consumer: exception: " << e.what() << '\n';
    return 1;
  }
  if (failures != 0) {
    std::cerr << "consumer: " << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "consumer: joinery join and groupby OK\n";
  return 0;
}
