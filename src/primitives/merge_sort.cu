// GPU merge sort, explicit instantiations: the four key types, ascending (sort_less) and
// descending (sort_greater). The kernels and the dispatch are in detail/merge_sort.cuh.
#include "primitives/detail/merge_sort.cuh"

#include <cstdint>

namespace joinery::detail::gpu {

#define JOINERY_INSTANTIATE_MERGE_SORT(K, C)                                                    \
  template void merge_sort_pairs<K, C>(K const*, K*, std::int64_t*, size_type, C,               \
                                       merge_sort_ids, stream_ref, memory_resource*);
#define JOINERY_INSTANTIATE_MERGE_SORT_ORDERS(K)                                                \
  JOINERY_INSTANTIATE_MERGE_SORT(K, sort_less)                                                  \
  JOINERY_INSTANTIATE_MERGE_SORT(K, sort_greater)
JOINERY_INSTANTIATE_MERGE_SORT_ORDERS(std::int32_t)
JOINERY_INSTANTIATE_MERGE_SORT_ORDERS(std::int64_t)
JOINERY_INSTANTIATE_MERGE_SORT_ORDERS(std::uint32_t)
JOINERY_INSTANTIATE_MERGE_SORT_ORDERS(std::uint64_t)
#undef JOINERY_INSTANTIATE_MERGE_SORT_ORDERS
#undef JOINERY_INSTANTIATE_MERGE_SORT

}  // namespace joinery::detail::gpu
