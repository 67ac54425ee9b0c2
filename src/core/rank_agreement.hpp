#pragma once
// Internal, host-only: how the ranks of a distributed operation agree to start
// (rank_agreement.cpp). Each rank checks its own parts; a refusal on any rank
// must stop every rank before the first exchange, or the others would wait for
// it forever.
#include "core/communicator.hpp"

#include <joinery/table.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace joinery::detail {

/// A fingerprint of a table's column types: equal for parts of one table.
std::uint64_t schema_of(table_view const& t);

/// Where this rank's parts lie in the group's tables: rows of the ranks before
/// it, and rows in all, one entry per table.
struct part_rows {
  std::vector<std::uint64_t> first;
  std::vector<std::uint64_t> total;
};

/// A collective: throws logic_error on every rank when any rank's `why` is not
/// empty (that rank with its own message), when the ranks' parts of a table
/// differ in column types, or when their `request`s (a fingerprint of the
/// arguments that decide which collectives run) differ; else where this rank's
/// `parts` lie.
part_rows agree_on_parts(communicator const& comm, int rank, std::string const& why,
                         std::vector<table_view> const& parts, std::uint64_t request,
                         std::string const& operation);

/// Folds a value into a fingerprint.
constexpr std::uint64_t fingerprint(std::uint64_t h, std::uint64_t v) noexcept {
  return (h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2))) * 0x100000001b3ULL;
}

}  // namespace joinery::detail
