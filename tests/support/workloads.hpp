#pragma once
// The workload families of the conformance suite (DESIGN.md section 4), built once by name.
#include <joinery/gen.hpp>
#include <joinery/table.hpp>

#include <string>
#include <vector>

namespace joinery::test {

struct join_workload {
  std::string name;
  table build;
  table probe;
  /// Nested-loop algorithms are quadratic; large workloads are skipped for them.
  bool large = false;
};

/// Every join workload name (uniform PK-FK, Zipf, match ratios, m:n, all-equal, hot key, empty,
/// one row, tile edges, extreme keys, each key type, 0..8 payloads of mixed widths).
std::vector<std::string> join_workload_names();
/// Every column of `t` but the key (column 0): the payloads the conformance joins carry.
std::vector<size_type> payloads_of(table const& t);
/// Built on first use and cached; host tables, key in column 0.
join_workload const& join_workload_named(std::string const& name);

struct groupby_workload {
  std::string name;
  table input;  // key in column 0, then value columns
};
std::vector<std::string> groupby_workload_names();
groupby_workload const& groupby_workload_named(std::string const& name);

}  // namespace joinery::test
