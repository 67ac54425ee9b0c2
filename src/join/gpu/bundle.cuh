#pragma once
// Internal (CUDA): the columns of a GFTR payload bundle (join/materialize_model.hpp,
// payload_bundles) as kernel arguments, and the per-field loads, stores and sums that pack,
// gather and the radix join's fused table output share.
#include <joinery/error.hpp>
#include <joinery/types.hpp>

#include <cstdint>
#include <vector>

namespace joinery::detail::gpu {

/// Up to 8 columns of a bundle: column c sits at bit `shift[c]` of the packed value.
struct bundle_fields {
  static constexpr int max_fields = 8;
  void const* in[max_fields];
  void* out[max_fields];
  int width[max_fields];
  int shift[max_fields];  // bits
  unsigned signed_mask;   // bit c: column c is signed (its sum sign-extends it)
  int count;
  bool all_4_bytes;  // one or two 4-byte columns: the common case, written without the loop
};

__device__ __forceinline__ std::uint64_t load_field(void const* col, int width, size_type i) {
  switch (width) {
    case 1: return static_cast<std::uint8_t const*>(col)[i];
    case 2: return static_cast<std::uint16_t const*>(col)[i];
    case 4: return static_cast<std::uint32_t const*>(col)[i];
    default: return static_cast<std::uint64_t const*>(col)[i];
  }
}

__device__ __forceinline__ void store_field(void* col, int width, size_type i, std::uint64_t v) {
  switch (width) {
    case 1: static_cast<std::uint8_t*>(col)[i] = static_cast<std::uint8_t>(v); break;
    case 2: static_cast<std::uint16_t*>(col)[i] = static_cast<std::uint16_t>(v); break;
    case 4: static_cast<std::uint32_t*>(col)[i] = static_cast<std::uint32_t>(v); break;
    default: static_cast<std::uint64_t*>(col)[i] = v; break;
  }
}

/// Writes the fields of packed value v to row i of their output columns and returns their sum,
/// each sign- or zero-extended to 64 bits, as the table form's checksum adds payloads.
__device__ __forceinline__ std::uint64_t store_fields(bundle_fields const& f, size_type i,
                                                      std::uint64_t v) {
  auto widen4 = [](std::uint32_t x, bool is_signed) {
    auto const wide = static_cast<std::int64_t>(static_cast<std::int32_t>(x));
    return is_signed ? static_cast<std::uint64_t>(wide) : static_cast<std::uint64_t>(x);
  };
  if (f.all_4_bytes) {  // warp-uniform: no per-field switch, shifts or masks
    auto const lo = static_cast<std::uint32_t>(v);
    static_cast<std::uint32_t*>(f.out[0])[i] = lo;
    std::uint64_t sum = widen4(lo, (f.signed_mask & 1u) != 0);
    if (f.count > 1) {
      auto const hi = static_cast<std::uint32_t>(v >> 32);
      static_cast<std::uint32_t*>(f.out[1])[i] = hi;
      sum += widen4(hi, (f.signed_mask & 2u) != 0);
    }
    return sum;
  }
  std::uint64_t sum = 0;
  for (int c = 0; c < f.count; ++c) {
    int const bits = 8 * f.width[c];
    std::uint64_t const x = v >> f.shift[c];
    store_field(f.out[c], f.width[c], i, x);
    int const drop = 64 - bits;
    sum += ((f.signed_mask >> c) & 1u) != 0
             ? static_cast<std::uint64_t>(static_cast<std::int64_t>(x << drop) >> drop)
             : (bits == 64 ? x : x & ((std::uint64_t{1} << bits) - 1));
  }
  return sum;
}

/// The fields of a bundle of columns of `widths` bytes (1/2/4/8, in order, at most value_width
/// bytes together) packed into `value_width` (4 or 8) bytes; in/out pointers left to the caller.
inline bundle_fields fields_of(std::vector<int> const& widths, int value_width) {
  JOINERY_EXPECTS(!widths.empty() && widths.size() <= bundle_fields::max_fields,
                  "a bundle holds 1 to 8 columns");
  JOINERY_EXPECTS(value_width == 4 || value_width == 8, "bundles are 4 or 8 bytes wide");
  bundle_fields f{};
  f.count = static_cast<int>(widths.size());
  int offset = 0;
  for (int c = 0; c < f.count; ++c) {
    int const w = widths[static_cast<std::size_t>(c)];
    JOINERY_EXPECTS(w == 1 || w == 2 || w == 4 || w == 8, "bundle columns are 1, 2, 4 or 8 bytes");
    f.width[c] = w;
    f.shift[c] = 8 * offset;
    offset += w;
  }
  JOINERY_EXPECTS(offset <= value_width, "a bundle's columns must fit its value");
  f.all_4_bytes = offset == 4 * f.count;  // every column 4 bytes wide
  return f;
}

}  // namespace joinery::detail::gpu
