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
/// empty (that rank with its own message) or when the ranks' parts of a table
/// differ in column types; else where this rank's `parts` lie.
part_rows agree_on_parts(communicator const& comm, int rank, std::string const& why,
                         std::vector<table_view> const& parts, std::string const& operation);

}  // namespace joinery::detail
