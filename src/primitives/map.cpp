// Public map primitive: argument checks, NVTX range, then the GPU dispatch layer (map.cu). Built
// without CUDA, it refuses.
#include <joinery/primitives/map.hpp>

#if defined(JOINERY_HAS_CUDA)
#include "primitives/map_dispatch.hpp"
#endif
#include "primitives/checks.hpp"

#include <cstdint>
#include <string>

namespace joinery {

column hash_keys(column_view const& keys, hash_function fn, stream_ref stream,
                 memory_resource_ref mr) {
  constexpr char const* name = "hash_keys";
  detail::expect_cuda(name);
  JOINERY_EXPECTS(fn == hash_function::murmur || fn == hash_function::multiply_shift,
                  std::string(name) + ": unknown hash function");
  detail::expect_keys(keys, name);
  detail::expect_device(keys, name, "key");
  auto* res = detail::result_resource(mr, name);
  scoped_range range("joinery::hash_keys");
  bool const wide = size_of(keys.type()) == 8;
  column out(wide ? type_id::uint64 : type_id::uint32, keys.size(), res, stream);
#if defined(JOINERY_HAS_CUDA)
  if (wide) {
    detail::gpu::hash_map(static_cast<std::uint64_t const*>(keys.data()), keys.size(), fn,
                          out.data_as<std::uint64_t>(), stream);
  } else {
    detail::gpu::hash_map(static_cast<std::uint32_t const*>(keys.data()), keys.size(), fn,
                          out.data_as<std::uint32_t>(), stream);
  }
#endif
  return out;
}

}  // namespace joinery
