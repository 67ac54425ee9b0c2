// Placeholder until the CPU radix_hash join lands (issue 3); not listed in cpu::algorithms().
#include "cpu/cpu_join.hpp"

namespace joinery::detail::cpu {

template <class Key, class Sink>
void radix_hash_join(join_input<Key> const&, std::vector<Sink>&) {
  JOINERY_FAIL("the cpu radix_hash join is not implemented yet");
}

JOINERY_CPU_JOIN_INSTANTIATE(radix_hash_join)

}  // namespace joinery::detail::cpu
