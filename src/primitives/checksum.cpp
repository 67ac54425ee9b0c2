#include <joinery/primitives/checksum.hpp>

#if defined(JOINERY_HAS_CUDA)
#include "primitives/checksum_dispatch.hpp"
#endif

#include "primitives/string_ops.hpp"

#include <string>

namespace joinery {

std::uint64_t checksum(column_view const& c, stream_ref stream) {
  if (is_string(c.type())) { return detail::strings::checksum(c); }
  if (c.type() == type_id::decimal128) {  // the sum of both 64-bit halves, as joins add them
    JOINERY_EXPECTS(host_accessible(c.space()),
                    "checksum of a device-resident decimal128 column is not supported");
    auto const* v = static_cast<std::uint64_t const*>(c.data());
    std::uint64_t sum = 0;
    for (size_type i = 0; i < c.size(); ++i) {
      if (c.is_valid(i)) { sum += v[2 * i] + v[2 * i + 1]; }
    }
    return sum;
  }
  if (is_logical(c.type())) { return checksum(c.with_type(storage_type(c.type())), stream); }
  JOINERY_EXPECTS(!is_floating(c.type()),
                  "checksum needs an integer column, not " + std::string(to_string(c.type())));
  if (!host_accessible(c.space())) {
#if defined(JOINERY_HAS_CUDA)
    JOINERY_EXPECTS(!c.nullable(), "device checksum of nullable columns is not supported yet");
    return detail::gpu::checksum(c, stream);
#else
    (void)stream;
    JOINERY_FAIL("checksum of a device column needs the GPU backend (built without CUDA)");
#endif
  }
  return dispatch_type(c.type(), [&](auto tag) -> std::uint64_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      return 0;  // refused above
    } else {
      auto const* v = static_cast<T const*>(c.data());
      std::uint64_t sum = 0;
      auto const n = c.size();
#pragma omp parallel for schedule(static) reduction(+ : sum)
      for (size_type i = 0; i < n; ++i) {
        if (c.is_valid(i)) {
          if constexpr (std::is_signed_v<T>) {
            sum += static_cast<std::uint64_t>(static_cast<std::int64_t>(v[i]));
          } else {
            sum += static_cast<std::uint64_t>(v[i]);
          }
        }
      }
      return sum;
    }
  });
}

}  // namespace joinery
