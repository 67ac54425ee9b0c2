// Names of the group-by's enums, shared by the C++ API, the CLI and the statistics.
#include <joinery/groupby.hpp>

#include "core/enum_names.hpp"

#include <array>

namespace joinery {

namespace {
constexpr std::array<std::string_view, 10> groupby_algorithm_names = {
  "automatic", "global_hash", "hash", "sort", "sort_transformed", "sort_dictionary", "partition",
  "partition_transformed", "multi_gpu", "streamed"};
constexpr std::array<std::string_view, 7> aggregation_names = {
  "count", "sum", "min", "max", "avg", "count_valid", "count_distinct"};
constexpr std::array<std::string_view, 2> overflow_policy_names = {"wrap", "error"};
}  // namespace

std::string_view to_string(overflow_policy p) noexcept {
  return detail::name_of(overflow_policy_names, p);
}
overflow_policy overflow_policy_from_string(std::string_view s) {
  return detail::parse_name<overflow_policy>(overflow_policy_names, s, "sum overflow policy");
}
std::string_view to_string(groupby_algorithm a) noexcept {
  return detail::name_of(groupby_algorithm_names, a);
}
std::string_view to_string(aggregation_kind k) noexcept {
  return detail::name_of(aggregation_names, k);
}
groupby_algorithm groupby_algorithm_from_string(std::string_view s) {
  return detail::parse_name<groupby_algorithm>(groupby_algorithm_names, s, "group-by algorithm");
}
aggregation_kind aggregation_kind_from_string(std::string_view s) {
  return detail::parse_name<aggregation_kind>(aggregation_names, s, "aggregation");
}

}  // namespace joinery
