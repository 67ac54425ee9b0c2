#include <joinery/types.hpp>

#include <array>
#include <string>

namespace joinery {

namespace {
constexpr std::array<std::string_view, 20> type_names = {
  "int8",         "int16",        "int32",        "int64",        "uint8",
  "uint16",       "uint32",       "uint64",       "float32",      "float64",
  "string",       "large_string", "bool",         "date32",       "timestamp_s",
  "timestamp_ms", "timestamp_us", "timestamp_ns", "decimal64",    "decimal128"};
}

std::string_view to_string(type_id t) noexcept {
  auto const i = static_cast<std::size_t>(t);
  return i < type_names.size() ? type_names[i] : std::string_view("unknown");
}

type_id type_from_string(std::string_view name) {
  for (std::size_t i = 0; i < type_names.size(); ++i) {
    if (type_names[i] == name) { return static_cast<type_id>(i); }
  }
  if (name == "bool8" || name == "boolean") { return type_id::bool8; }
  if (name == "date") { return type_id::date32; }
  if (name == "timestamp") { return type_id::timestamp_us; }  // DuckDB's TIMESTAMP
  JOINERY_FAIL("unknown type '" + std::string(name) +
               "'; known: int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 "
               "string large_string bool date32 timestamp_s timestamp_ms timestamp_us "
               "timestamp_ns decimal64 decimal128");
}

}  // namespace joinery
