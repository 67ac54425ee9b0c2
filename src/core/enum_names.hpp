#pragma once
// Internal: names of the public enums (for to_string / *_from_string), shared by every family.
#include <joinery/error.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace joinery::detail {

/// names[e], or "unknown" for a value past the table.
template <class E, std::size_t N>
std::string_view name_of(std::array<std::string_view, N> const& names, E e) noexcept {
  auto const i = static_cast<std::size_t>(e);
  return i < N ? names[i] : std::string_view("unknown");
}

/// The enum value named `s`; logic_error listing the known names (`what`: "join kind", ...).
template <class E, std::size_t N>
E parse_name(std::array<std::string_view, N> const& names, std::string_view s, char const* what) {
  std::string known;
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == s) { return static_cast<E>(i); }
    known += (i ? ", " : "") + std::string(names[i]);
  }
  JOINERY_FAIL("unknown " + std::string(what) + " '" + std::string(s) + "'; known: " + known);
}

}  // namespace joinery::detail
