#include <joinery/types.hpp>

#include <array>
#include <string>

namespace joinery {

namespace {
constexpr std::array<std::string_view, 12> type_names = {
  "int8",   "int16",  "int32",   "int64",   "uint8",  "uint16",
  "uint32", "uint64", "float32", "float64", "string", "large_string"};
}

std::string_view to_string(type_id t) noexcept {
  auto const i = static_cast<std::size_t>(t);
  return i < type_names.size() ? type_names[i] : std::string_view("unknown");
}

type_id type_from_string(std::string_view name) {
  for (std::size_t i = 0; i < type_names.size(); ++i) {
    if (type_names[i] == name) { return static_cast<type_id>(i); }
  }
  JOINERY_FAIL("unknown type '" + std::string(name) +
               "'; known: int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 "
               "string large_string");
}

}  // namespace joinery
