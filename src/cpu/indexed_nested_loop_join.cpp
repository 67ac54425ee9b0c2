// Placeholder until the CPU indexed_nested_loop join lands (issue 3); not listed in cpu::algorithms().
#include "cpu/cpu_join.hpp"

namespace joinery::detail::cpu {

template <class Key, class Sink>
void indexed_nested_loop_join(join_input<Key> const&, std::vector<Sink>&) {
  JOINERY_FAIL("the cpu indexed_nested_loop join is not implemented yet");
}

JOINERY_CPU_JOIN_INSTANTIATE(indexed_nested_loop_join)

}  // namespace joinery::detail::cpu
