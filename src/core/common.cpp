// Names of the types every operation shares (include/joinery/common.hpp).
#include <joinery/common.hpp>

#include "core/enum_names.hpp"

#include <array>

namespace joinery {

namespace {
constexpr std::array<std::string_view, 3> backend_names = {"automatic", "cpu", "gpu"};
}  // namespace

std::string_view to_string(backend b) noexcept { return detail::name_of(backend_names, b); }

backend backend_from_string(std::string_view s) {
  if (s == "auto") { return backend::automatic; }
  return detail::parse_name<backend>(backend_names, s, "backend");
}

}  // namespace joinery
