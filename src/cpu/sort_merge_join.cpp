// Placeholder until the CPU sort_merge join lands (issue 3); not listed in cpu::algorithms().
#include "cpu/cpu_join.hpp"

namespace joinery::detail::cpu {

template <class Key, class Sink>
void sort_merge_join(join_input<Key> const&, std::vector<Sink>&) {
  JOINERY_FAIL("the cpu sort_merge join is not implemented yet");
}

JOINERY_CPU_JOIN_INSTANTIATE(sort_merge_join)

}  // namespace joinery::detail::cpu
