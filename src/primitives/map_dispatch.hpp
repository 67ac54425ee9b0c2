#pragma once
// Internal: host-callable dispatch layer of the map primitive (map.cu, explicitly instantiated
// there). Arguments are checked by the public layer (map.cpp). K: std::uint32_t or
// std::uint64_t (keys by bit pattern); the output has the key's width.
#include <joinery/memory.hpp>
#include <joinery/primitives/hash_table.hpp>
#include <joinery/types.hpp>

namespace joinery::detail::gpu {

template <class K>
void hash_map(K const* keys, size_type n, hash_function fn, K* out, stream_ref stream);

}  // namespace joinery::detail::gpu
