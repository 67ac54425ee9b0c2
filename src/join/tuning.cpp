// Names of join_tuning's enums (join.hpp), for the C++ API and the benchmark's options.
#include <joinery/error.hpp>
#include <joinery/join.hpp>

#include <string>

namespace joinery {

std::string_view to_string(css_node_search s) noexcept {
  switch (s) {
    case css_node_search::binary: return "binary";
    case css_node_search::sequential: return "sequential";
  }
  return "unknown";
}

std::string_view to_string(radix_join_partitioning p) noexcept {
  switch (p) {
    case radix_join_partitioning::automatic: return "automatic";
    case radix_join_partitioning::cub: return "cub";
  }
  return "unknown";
}

css_node_search css_node_search_from_string(std::string_view name) {
  for (auto s : {css_node_search::binary, css_node_search::sequential}) {
    if (to_string(s) == name) { return s; }
  }
  JOINERY_FAIL("unknown CSS-tree node search '" + std::string(name) + "'; known: binary, sequential");
}

radix_join_partitioning radix_join_partitioning_from_string(std::string_view name) {
  for (auto p : {radix_join_partitioning::automatic, radix_join_partitioning::cub}) {
    if (to_string(p) == name) { return p; }
  }
  JOINERY_FAIL("unknown radix join partitioning '" + std::string(name) +
               "'; known: automatic, cub");
}

}  // namespace joinery
