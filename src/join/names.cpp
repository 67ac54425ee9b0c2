// Names of the enums, shared by the C++ API, the CLI and the statistics.
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <array>
#include <string>

namespace joinery {

namespace {
constexpr std::array<std::string_view, 9> join_algorithm_names = {
  "automatic", "nested_loop", "indexed_nested_loop", "sort_merge", "radix_hash",
  "no_partition_hash", "streamed", "triton", "multi_gpu_sort_merge"};
constexpr std::array<std::string_view, 3> backend_names = {"automatic", "cpu", "gpu"};
constexpr std::array<std::string_view, 4> join_kind_names = {"inner", "left_semi", "left_anti",
                                                             "left_outer"};
constexpr std::array<std::string_view, 3> output_form_names = {"index", "table", "aggregate"};
constexpr std::array<std::string_view, 3> materialization_names = {"automatic", "gfur", "gftr"};
constexpr std::array<std::string_view, 2> output_writer_names = {"direct", "three_phase"};
constexpr std::array<std::string_view, 8> groupby_algorithm_names = {
  "automatic", "global_hash", "hash", "sort", "sort_transformed", "sort_dictionary", "partition",
  "partition_transformed"};
constexpr std::array<std::string_view, 5> aggregation_names = {"count", "sum", "min", "max",
                                                               "avg"};

template <class E, std::size_t N>
std::string_view name_of(std::array<std::string_view, N> const& names, E e) noexcept {
  auto const i = static_cast<std::size_t>(e);
  return i < N ? names[i] : std::string_view("unknown");
}

template <class E, std::size_t N>
E parse(std::array<std::string_view, N> const& names, std::string_view s, char const* what) {
  std::string known;
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == s) { return static_cast<E>(i); }
    known += (i ? ", " : "") + std::string(names[i]);
  }
  JOINERY_FAIL("unknown " + std::string(what) + " '" + std::string(s) + "'; known: " + known);
}
}  // namespace

std::string_view to_string(join_algorithm a) noexcept { return name_of(join_algorithm_names, a); }
std::string_view to_string(backend b) noexcept { return name_of(backend_names, b); }
std::string_view to_string(join_kind k) noexcept { return name_of(join_kind_names, k); }
std::string_view to_string(output_form f) noexcept { return name_of(output_form_names, f); }
std::string_view to_string(materialization m) noexcept {
  return name_of(materialization_names, m);
}
std::string_view to_string(output_writer w) noexcept { return name_of(output_writer_names, w); }
std::string_view to_string(groupby_algorithm a) noexcept {
  return name_of(groupby_algorithm_names, a);
}
std::string_view to_string(aggregation_kind k) noexcept { return name_of(aggregation_names, k); }

join_algorithm join_algorithm_from_string(std::string_view s) {
  return parse<join_algorithm>(join_algorithm_names, s, "join algorithm");
}
backend backend_from_string(std::string_view s) {
  if (s == "auto") { return backend::automatic; }
  return parse<backend>(backend_names, s, "backend");
}
join_kind join_kind_from_string(std::string_view s) {
  return parse<join_kind>(join_kind_names, s, "join kind");
}
materialization materialization_from_string(std::string_view s) {
  return parse<materialization>(materialization_names, s, "materialization strategy");
}
output_writer output_writer_from_string(std::string_view s) {
  return parse<output_writer>(output_writer_names, s, "output writer");
}
groupby_algorithm groupby_algorithm_from_string(std::string_view s) {
  return parse<groupby_algorithm>(groupby_algorithm_names, s, "group-by algorithm");
}
aggregation_kind aggregation_kind_from_string(std::string_view s) {
  return parse<aggregation_kind>(aggregation_names, s, "aggregation");
}

std::vector<join_algorithm> all_join_algorithms() {
  std::vector<join_algorithm> v;
  for (std::size_t i = 1; i < join_algorithm_names.size(); ++i) {
    v.push_back(static_cast<join_algorithm>(i));
  }
  return v;
}

}  // namespace joinery
