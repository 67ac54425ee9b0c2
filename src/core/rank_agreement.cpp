// The ranks' agreement before a distributed operation (rank_agreement.hpp).
#include "core/rank_agreement.hpp"

#include <joinery/error.hpp>

namespace joinery::detail {

std::uint64_t schema_of(table_view const& t) {
  auto h = fingerprint(0, static_cast<std::uint64_t>(t.num_columns()));
  for (auto const& c : t) { h = fingerprint(h, static_cast<std::uint64_t>(c.type())); }
  return h;
}

part_rows agree_on_parts(communicator const& comm, int rank, std::string const& why,
                         std::vector<table_view> const& parts, std::uint64_t request,
                         std::string const& operation) {
  std::vector<std::uint64_t> mine{why.empty() ? 0U : 1U, request};
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
    JOINERY_EXPECTS(v[1] == every[1], "every rank must ask for the same " + operation +
                                        " (options, key and columns); rank " + std::to_string(r) +
                                        " asked for another than rank 0");
    for (std::size_t t = 0; t < parts.size(); ++t) {
      JOINERY_EXPECTS(v[2 + 2 * t] == every[2 + 2 * t],
                      "the parts of a distributed table must have the same column types on "
                      "every rank; rank " + std::to_string(r) + "'s differ from rank 0's");
      if (r < rank) { at.first[t] += v[3 + 2 * t]; }
      at.total[t] += v[3 + 2 * t];
    }
  }
  return at;
}

}  // namespace joinery::detail
