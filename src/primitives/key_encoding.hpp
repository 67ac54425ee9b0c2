#pragma once
// Internal: how the general key path turns up to 8 key columns of any integer or floating-point
// type, NULLs included, into one integer key that every join algorithm takes (DESIGN.md, "Keys
// users have"). Each column's values become codes 0..range (range + 1 for NULL where NULLs are
// equal); the codes of all columns are packed side by side when their widths add up to at most
// 64 bits (Wu et al.'s key transform, ranges from min/max of both sides), else hashed into 64
// bits and every match checked against the columns. Host and device share these functions.
#include "core/hash.hpp"

#include <joinery/types.hpp>

#include <cstdint>
#include <cstring>

namespace joinery::detail::keys {

inline constexpr int max_key_columns = 8;

enum class value_class : std::uint8_t { signed_int, unsigned_int, floating };

/// One key column as the encoders read it.
struct key_column {
  void const* data = nullptr;
  std::uint8_t const* mask = nullptr;  ///< Arrow validity bitmap; null: every row valid
  std::uint8_t width = 4;              ///< bytes per value
  value_class cls = value_class::signed_int;
};

/// Where one column's code sits in the packed key; the same on both sides.
struct key_field {
  std::uint64_t min = 0;        ///< smallest ordered value over both sides
  std::uint64_t null_code = 0;  ///< the code of a NULL where NULLs are equal (range + 1)
  int shift = 0;                ///< bit offset of the code in the packed key
  int bits = 0;                 ///< bits of the code (0: one value)
  bool null_coded = false;      ///< NULLs are equal and occur: null_code is in use
};

/// The key columns of one side and how their codes combine. Column 0 takes the highest bits, so
/// packed keys order as the key columns do, lexicographically (NULL after every value).
struct key_layout {
  key_column columns[max_key_columns];
  key_field fields[max_key_columns];
  int count = 0;
  bool packed = true;  ///< false: the key is a hash and matches are checked
  bool nulls_equal = false;
  bool nans_equal = false;
};

JOINERY_HOST_DEVICE inline bool valid_at(key_column const& c, size_type row) {
  return c.mask == nullptr || ((c.mask[row >> 3] >> (row & 7)) & 1U) != 0;
}

/// The raw bits of row `row`, integers sign- or zero-extended to 64 bits.
JOINERY_HOST_DEVICE inline std::uint64_t load_bits(key_column const& c, size_type row) {
  bool const sign = c.cls == value_class::signed_int;
  switch (c.width) {
    case 1: {
      auto const v = static_cast<std::uint8_t const*>(c.data)[row];
      return sign ? static_cast<std::uint64_t>(static_cast<std::int8_t>(v)) : v;
    }
    case 2: {
      auto const v = static_cast<std::uint16_t const*>(c.data)[row];
      return sign ? static_cast<std::uint64_t>(static_cast<std::int16_t>(v)) : v;
    }
    case 4: {
      auto const v = static_cast<std::uint32_t const*>(c.data)[row];
      return sign ? static_cast<std::uint64_t>(static_cast<std::int32_t>(v)) : v;
    }
    default: return static_cast<std::uint64_t>(static_cast<std::uint64_t const*>(c.data)[row]);
  }
}

/// The value at ids_a[i] of `a` when valid, else at ids_b[i] of `b` (when given), as the
/// checksum adds it (load_bits: integers sign- or zero-extended, floats as their bits); 0 for
/// NULL.
JOINERY_HOST_DEVICE inline std::uint64_t coalesced_bits(key_column const& a,
                                                        std::int64_t const* ids_a,
                                                        key_column const& b,
                                                        std::int64_t const* ids_b, size_type i) {
  auto const ra = ids_a[i];
  if (ra >= 0 && valid_at(a, ra)) { return load_bits(a, ra); }
  if (ids_b != nullptr && ids_b[i] >= 0 && valid_at(b, ids_b[i])) { return load_bits(b, ids_b[i]); }
  return 0;
}

/// Whether the value at `row` is a floating-point NaN (false for integers).
JOINERY_HOST_DEVICE inline bool is_nan_at(key_column const& c, size_type row) {
  if (c.cls != value_class::floating) { return false; }
  auto const bits = load_bits(c, row);
  if (c.width == 4) {
    return (bits & 0x7f800000ULL) == 0x7f800000ULL && (bits & 0x007fffffULL) != 0;
  }
  return (bits & 0x7ff0000000000000ULL) == 0x7ff0000000000000ULL &&
         (bits & 0x000fffffffffffffULL) != 0;
}

/// The value as an unsigned number whose order is the values' order and in which equal keys are
/// equal: signed integers with the sign bit flipped; floats with -0.0 as 0.0 and one NaN (above
/// +infinity), negative ones bit-inverted and positive ones with the sign bit set.
JOINERY_HOST_DEVICE inline std::uint64_t ordered_value(key_column const& c, size_type row) {
  auto bits = load_bits(c, row);
  switch (c.cls) {
    case value_class::signed_int: return bits ^ 0x8000000000000000ULL;
    case value_class::unsigned_int: return bits;
    case value_class::floating: {
      bool const wide = c.width == 8;
      std::uint64_t const sign = wide ? 0x8000000000000000ULL : 0x80000000ULL;
      std::uint64_t const all = wide ? ~0ULL : 0xffffffffULL;
      if ((bits & (sign - 1)) == 0) { bits = 0; }
      if (is_nan_at(c, row)) { bits = wide ? 0x7ff8000000000000ULL : 0x7fc00000ULL; }
      return (bits & sign) != 0 ? (~bits & all) : (bits | sign);
    }
  }
  return bits;
}

/// The value bits (as load_bits gives them, truncated to the column's width) of an ordered value.
JOINERY_HOST_DEVICE inline std::uint64_t value_bits_of(key_column const& c, std::uint64_t ordered) {
  std::uint64_t const all = c.width == 8 ? ~0ULL : (1ULL << (8 * c.width)) - 1;
  switch (c.cls) {
    case value_class::signed_int: return (ordered ^ 0x8000000000000000ULL) & all;
    case value_class::unsigned_int: return ordered & all;
    case value_class::floating: {
      std::uint64_t const sign = c.width == 8 ? 0x8000000000000000ULL : 0x80000000ULL;
      return (ordered & sign) != 0 ? (ordered ^ sign) : (~ordered & all);
    }
  }
  return ordered;
}

/// Whether a row can match any row: no NULL key unless NULLs are equal, no NaN unless NaNs are.
JOINERY_HOST_DEVICE inline bool matchable(key_layout const& k, size_type row) {
  for (int i = 0; i < k.count; ++i) {
    if (!valid_at(k.columns[i], row)) {
      if (!k.nulls_equal) { return false; }
    } else if (!k.nans_equal && is_nan_at(k.columns[i], row)) {
      return false;
    }
  }
  return true;
}

/// Whether some row may fail matchable(): a column with NULLs, or floats with NaNs unequal.
inline bool may_hold_unmatchable_rows(key_layout const& k) {
  for (int i = 0; i < k.count; ++i) {
    if (k.columns[i].mask != nullptr) { return true; }
    if (k.columns[i].cls == value_class::floating && !k.nans_equal) { return true; }
  }
  return false;
}

/// The code of column i at `row`: its ordered value less the minimum, or the NULL code.
JOINERY_HOST_DEVICE inline std::uint64_t field_code(key_layout const& k, int i, size_type row) {
  if (!valid_at(k.columns[i], row)) { return k.fields[i].null_code; }
  return ordered_value(k.columns[i], row) - k.fields[i].min;
}

/// The row's key: the packed codes, or a 64-bit hash of them (of a matchable row).
JOINERY_HOST_DEVICE inline std::uint64_t encode_key(key_layout const& k, size_type row) {
  std::uint64_t key = 0;
  if (k.packed) {
    for (int i = 0; i < k.count; ++i) {
      auto const shift = k.fields[i].shift;
      if (shift < 64) { key |= field_code(k, i, row) << shift; }
    }
    return key;
  }
  key = 0x243f6a8885a308d3ULL;  // any nonzero seed
  for (int i = 0; i < k.count; ++i) {
    bool const valid = valid_at(k.columns[i], row);
    key = mix64(key ^ (valid ? ordered_value(k.columns[i], row) : 0x9e3779b97f4a7c15ULL));
    key += static_cast<std::uint64_t>(valid) + static_cast<std::uint64_t>(i);
  }
  return key;
}

/// Whether build row `b` and probe row `p` (both matchable) have equal keys in every column.
JOINERY_HOST_DEVICE inline bool keys_equal(key_layout const& build, size_type b,
                                           key_layout const& probe, size_type p) {
  for (int i = 0; i < build.count; ++i) {
    bool const vb = valid_at(build.columns[i], b);
    bool const vp = valid_at(probe.columns[i], p);
    if (vb != vp) { return false; }
    if (vb && ordered_value(build.columns[i], b) != ordered_value(probe.columns[i], p)) {
      return false;
    }
  }
  return true;
}

/// Min and max ordered value of a column's valid, non-NaN-unless-equal values, and whether it
/// holds a NULL; min > max when it has no such value.
struct column_range {
  std::uint64_t min = ~std::uint64_t{0};
  std::uint64_t max = 0;
  bool has_null = false;
};

}  // namespace joinery::detail::keys
