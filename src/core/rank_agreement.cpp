// The ranks' agreement before a distributed operation (rank_agreement.hpp).
#include "core/rank_agreement.hpp"

#include <joinery/error.hpp>

namespace joinery::detail {

std::uint64_t schema_of(table_view const& t) {
  std::uint64_t h = static_cast<std::uint64_t>(t.num_columns()) * 0x9e3779b97f4a7c15ULL;
  for (auto const& c : t) { h = (h ^ static_cast<std::uint64_t>(c.type())) * 0x100000001b3ULL; }
  return h;
}

part_rows agree_on_parts(communicator const& comm, int rank, std::string const& why,
                         std::vector<table_view> const& parts, std::string const& operation) {
  std::vector<std::uint64_t> mine{why.empty() ? 0U : 1U};
  for (auto const& t : parts) {
    mine.push_back(schema_of(t));
    mine.push_back(static_cast<std::uint64_t>(t.num_rows()));
  }
  auto const every = comm.all_gather(rank, mine);
  JOINERY_EXPECTS(why.empty(), why);
  part_rows at;
  at.first.assign(parts.size(), 0);
  at.total.assign(parts.size(), 0);
  for (int r = 0; r < comm.size(); ++r) {
    auto const* v = &every[static_cast<std::size_t>(r) * mine.size()];
    JOINERY_EXPECTS(v[0] == 0, "rank " + std::to_string(r) + " refused its part of the " +
                                 operation + " (that rank's error says why)");
    for (std::size_t t = 0; t < parts.size(); ++t) {
      JOINERY_EXPECTS(v[1 + 2 * t] == every[1 + 2 * t],
                      "the parts of a distributed table must have the same column types on "
                      "every rank; rank " + std::to_string(r) + "'s differ from rank 0's");
      if (r < rank) { at.first[t] += v[2 + 2 * t]; }
      at.total[t] += v[2 + 2 * t];
    }
  }
  return at;
}

}  // namespace joinery::detail
