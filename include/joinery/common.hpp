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

/// How the multi-GPU algorithms move buckets between GPUs: CUDA peer copies (any set of
/// ranks, several ranks may share a GPU) or NCCL's grouped send / receive (one rank per GPU,
/// NCCL loaded at run time). automatic: peer copies (the faster where both serve, measured on
/// NVLink: BENCHMARKS.md, "Several GPUs").
enum class exchange_method : std::uint8_t { automatic, peer_copy, nccl };

/// One timed phase of an operation (statistics of joins and group-bys).
struct phase_time {
  std::string name;
  double seconds = 0;
};

std::string_view to_string(backend b) noexcept;
/// "auto", "automatic", "cpu" or "gpu"; logic_error for another name.
backend backend_from_string(std::string_view name);
std::string_view to_string(exchange_method m) noexcept;
/// "automatic", "peer_copy" or "nccl"; logic_error for another name.
exchange_method exchange_method_from_string(std::string_view name);

}  // namespace joinery
