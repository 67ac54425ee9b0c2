// Names of the types every operation shares (include/joinery/common.hpp).
#include <joinery/common.hpp>

#include "core/backend_check.hpp"
#include "core/enum_names.hpp"

#include <joinery/memory.hpp>

#include <array>

namespace joinery {

namespace {
constexpr std::array<std::string_view, 3> backend_names = {"automatic", "cpu", "gpu"};
constexpr std::array<std::string_view, 3> exchange_names = {"automatic", "peer_copy", "nccl"};
}  // namespace

std::string_view to_string(backend b) noexcept { return detail::name_of(backend_names, b); }

backend backend_from_string(std::string_view s) {
  if (s == "auto") { return backend::automatic; }
  return detail::parse_name<backend>(backend_names, s, "backend");
}

std::string_view to_string(exchange_method m) noexcept { return detail::name_of(exchange_names, m); }

exchange_method exchange_method_from_string(std::string_view s) {
  return detail::parse_name<exchange_method>(exchange_names, s, "exchange method");
}

namespace detail {

void expect_gpu_backend_available() {
  JOINERY_EXPECTS(built_with_cuda(), "the GPU backend was requested but joinery was built "
                                     "without CUDA; use the cpu backend");
  JOINERY_EXPECTS(device_count() > 0, "the GPU backend was requested but no GPU is present; "
                                      "use the cpu backend");
}

}  // namespace detail

}  // namespace joinery
