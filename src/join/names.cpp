// Names of the join's enums, shared by the C++ API, the CLI and the statistics.
#include <joinery/join.hpp>

#include "core/enum_names.hpp"

#include <array>
#include <string>

namespace joinery {

namespace {
constexpr std::array<std::string_view, 10> join_algorithm_names = {
  "automatic", "nested_loop", "indexed_nested_loop", "sort_merge", "radix_hash",
  "no_partition_hash", "streamed", "triton", "multi_gpu_sort_merge", "multi_gpu_hash"};
constexpr std::array<std::string_view, 8> join_kind_names = {
  "inner", "left_semi", "left_anti", "left_outer", "right_semi", "right_anti", "right_outer",
  "full_outer"};
constexpr std::array<std::string_view, 2> null_equality_names = {"unequal", "equal"};
constexpr std::array<std::string_view, 3> output_form_names = {"index", "table", "aggregate"};
constexpr std::array<std::string_view, 3> materialization_names = {"automatic", "gfur", "gftr"};
constexpr std::array<std::string_view, 2> output_writer_names = {"direct", "three_phase"};
}  // namespace

std::string_view to_string(join_algorithm a) noexcept {
  return detail::name_of(join_algorithm_names, a);
}
std::string_view to_string(join_kind k) noexcept { return detail::name_of(join_kind_names, k); }
std::string_view to_string(output_form f) noexcept { return detail::name_of(output_form_names, f); }
std::string_view to_string(materialization m) noexcept {
  return detail::name_of(materialization_names, m);
}
std::string_view to_string(output_writer w) noexcept { return detail::name_of(output_writer_names, w); }

join_algorithm join_algorithm_from_string(std::string_view s) {
  return detail::parse_name<join_algorithm>(join_algorithm_names, s, "join algorithm");
}
join_kind join_kind_from_string(std::string_view s) {
  return detail::parse_name<join_kind>(join_kind_names, s, "join kind");
}
std::string_view to_string(null_equality n) noexcept {
  return detail::name_of(null_equality_names, n);
}
null_equality null_equality_from_string(std::string_view s) {
  return detail::parse_name<null_equality>(null_equality_names, s, "null equality");
}
materialization materialization_from_string(std::string_view s) {
  return detail::parse_name<materialization>(materialization_names, s, "materialization strategy");
}
output_writer output_writer_from_string(std::string_view s) {
  return detail::parse_name<output_writer>(output_writer_names, s, "output writer");
}

std::vector<join_algorithm> all_join_algorithms() {
  std::vector<join_algorithm> v;
  for (std::size_t i = 1; i < join_algorithm_names.size(); ++i) {
    v.push_back(static_cast<join_algorithm>(i));
  }
  return v;
}

}  // namespace joinery
