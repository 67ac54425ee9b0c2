// rank_group: a handle on a communicator (core/communicator.hpp).
#include "core/communicator.hpp"
#include "core/rank_agreement.hpp"

#include <joinery/distributed.hpp>
#include <joinery/error.hpp>

namespace joinery {

rank_group rank_group::in_process(std::vector<int> const& devices, exchange_method exchange) {
  return rank_group(std::make_shared<detail::communicator>(devices, exchange));
}

rank_group rank_group::joined(int rank, int world, int device, std::string const& rendezvous_file,
                              double timeout_seconds) {
  detail::process_rank me;
  me.rank = rank;
  me.world = world;
  me.device = device;
  me.rendezvous_file = rendezvous_file;
  me.timeout_seconds = timeout_seconds;
  return rank_group(std::make_shared<detail::communicator>(me));
}

int rank_group::size() const { return comm_->size(); }

std::vector<int> const& rank_group::local_ranks() const { return comm_->local_ranks(); }

int rank_group::device_of(int rank) const { return comm_->device_of(rank); }

void rank_group::agree(std::string const& refusal) const {
  comm_->for_each_rank(
    [&](int rank) { (void)detail::agree_on_parts(*comm_, rank, refusal, {}, 0, "operation"); });
}

}  // namespace joinery
