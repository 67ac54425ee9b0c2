#pragma once
// Types every operation shares: the backend that runs it and the phases its statistics report.
#include <joinery/table.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace joinery {

/// Where an operation runs; automatic: the GPU when one is present and the backend has the
/// algorithm, else the CPU.
enum class backend : std::uint8_t { automatic, cpu, gpu };

/// One timed phase of an operation (statistics of joins and group-bys).
struct phase_time {
  std::string name;
  double seconds = 0;
};

std::string_view to_string(backend b) noexcept;
/// "auto", "automatic", "cpu" or "gpu"; logic_error for another name.
backend backend_from_string(std::string_view name);

}  // namespace joinery
