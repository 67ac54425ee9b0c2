#pragma once
// The closed type lists of joinery and a host-side dispatcher over them.
#include <joinery/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace joinery {

/// Sizes, row counts and row ids are 64-bit everywhere.
using size_type = std::int64_t;

/// string and large_string are Arrow's utf8 and large_utf8: size + 1 offsets (int32 / int64)
/// into a buffer of characters (column_view::strings); every other type is fixed-width.
/// The types after large_string are stored as integers and carried with their type (Arrow's
/// layouts, except bool8: one byte per value, 0 or 1): bool8 as uint8; date32 (days since
/// 1970-01-01) as int32; timestamps (since 1970-01-01 00:00:00 UTC, in seconds, milli-, micro-
/// or nanoseconds) and decimal64 as int64; decimal128 as 16 bytes, a little-endian two's
/// complement integer. A decimal's value is its integer times 10^-scale (column_view::decimal).
enum class type_id : std::uint8_t {
  int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, string,
  large_string, bool8, date32, timestamp_s, timestamp_ms, timestamp_us, timestamp_ns, decimal64,
  decimal128
};

/// Arrow's decimal(precision, scale): `precision` significant digits (at most 18 in decimal64,
/// 38 in decimal128), `scale` of them after the point.
struct decimal_format {
  std::uint8_t precision = 18;
  std::int8_t scale = 0;
  friend constexpr bool operator==(decimal_format, decimal_format) = default;
};

constexpr bool is_string(type_id t) noexcept {
  return t == type_id::string || t == type_id::large_string;
}

constexpr bool is_timestamp(type_id t) noexcept {
  return t == type_id::timestamp_s || t == type_id::timestamp_ms || t == type_id::timestamp_us ||
         t == type_id::timestamp_ns;
}
constexpr bool is_decimal(type_id t) noexcept {
  return t == type_id::decimal64 || t == type_id::decimal128;
}
/// Types carried as another type's storage (bool8, date32, the timestamps, the decimals); the
/// algorithms see their storage (storage_type) and the results get the type back.
constexpr bool is_logical(type_id t) noexcept {
  return t == type_id::bool8 || t == type_id::date32 || is_timestamp(t) || is_decimal(t);
}
/// The integer type a logical type is stored as; decimal128 (16 bytes) and every other type are
/// their own storage.
constexpr type_id storage_type(type_id t) noexcept {
  switch (t) {
    case type_id::bool8: return type_id::uint8;
    case type_id::date32: return type_id::int32;
    case type_id::timestamp_s: case type_id::timestamp_ms: case type_id::timestamp_us:
    case type_id::timestamp_ns: case type_id::decimal64: return type_id::int64;
    default: return t;
  }
}

/// Bytes of one value; for the string types, of one offset.
constexpr std::size_t size_of(type_id t) noexcept {
  switch (t) {
    case type_id::int8: case type_id::uint8: case type_id::bool8: return 1;
    case type_id::int16: case type_id::uint16: return 2;
    case type_id::int32: case type_id::uint32: case type_id::float32: case type_id::string:
    case type_id::date32:
      return 4;
    case type_id::decimal128: return 16;
    default: return 8;
  }
}

constexpr bool is_floating(type_id t) noexcept {
  return t == type_id::float32 || t == type_id::float64;
}
constexpr bool is_signed(type_id t) noexcept {
  return t == type_id::int8 || t == type_id::int16 || t == type_id::int32 ||
         t == type_id::int64 || is_floating(t) || t == type_id::date32 || is_timestamp(t) ||
         is_decimal(t);
}
/// Join and group-by keys: 4- and 8-byte integers, signed and unsigned.
constexpr bool is_key_type(type_id t) noexcept {
  return t == type_id::int32 || t == type_id::int64 || t == type_id::uint32 ||
         t == type_id::uint64;
}

std::string_view to_string(type_id t) noexcept;
/// Parses "int32", "uint64", ... (also "i4"-style NumPy codes are handled by the readers).
type_id type_from_string(std::string_view name);

template <class T> struct type_to_id;
template <> struct type_to_id<std::int8_t> { static constexpr type_id value = type_id::int8; };
template <> struct type_to_id<std::int16_t> { static constexpr type_id value = type_id::int16; };
template <> struct type_to_id<std::int32_t> { static constexpr type_id value = type_id::int32; };
template <> struct type_to_id<std::int64_t> { static constexpr type_id value = type_id::int64; };
template <> struct type_to_id<std::uint8_t> { static constexpr type_id value = type_id::uint8; };
template <> struct type_to_id<std::uint16_t> { static constexpr type_id value = type_id::uint16; };
template <> struct type_to_id<std::uint32_t> { static constexpr type_id value = type_id::uint32; };
template <> struct type_to_id<std::uint64_t> { static constexpr type_id value = type_id::uint64; };
template <> struct type_to_id<float> { static constexpr type_id value = type_id::float32; };
template <> struct type_to_id<double> { static constexpr type_id value = type_id::float64; };
template <class T> inline constexpr type_id type_to_id_v = type_to_id<T>::value;

template <class T> struct type_tag { using type = T; };

/// Calls f(type_tag<T>{}) with the C++ type of `t`.
template <class F>
decltype(auto) dispatch_type(type_id t, F&& f) {
  switch (t) {
    case type_id::int8: return f(type_tag<std::int8_t>{});
    case type_id::int16: return f(type_tag<std::int16_t>{});
    case type_id::int32: return f(type_tag<std::int32_t>{});
    case type_id::int64: return f(type_tag<std::int64_t>{});
    case type_id::uint8: return f(type_tag<std::uint8_t>{});
    case type_id::uint16: return f(type_tag<std::uint16_t>{});
    case type_id::uint32: return f(type_tag<std::uint32_t>{});
    case type_id::uint64: return f(type_tag<std::uint64_t>{});
    case type_id::float32: return f(type_tag<float>{});
    case type_id::float64: return f(type_tag<double>{});
    default: break;
  }
  JOINERY_FAIL(is_string(t) ? std::string("a string column cannot be used here (strings are "
                                          "join and group-by keys, join payloads and "
                                          "COUNT / MIN / MAX values)")
               : is_logical(t) ? "a " + std::string(to_string(t)) +
                                   " column cannot be used here (it is read as its storage type "
                                   "at the join and group-by entry points)"
                               : std::string("unknown type id"));
}

/// Calls f(type_tag<T>{}) for the four key types; refuses any other type.
template <class F>
decltype(auto) dispatch_key_type(type_id t, F&& f) {
  switch (t) {
    case type_id::int32: return f(type_tag<std::int32_t>{});
    case type_id::int64: return f(type_tag<std::int64_t>{});
    case type_id::uint32: return f(type_tag<std::uint32_t>{});
    case type_id::uint64: return f(type_tag<std::uint64_t>{});
    default: break;
  }
  JOINERY_FAIL("key columns must be int32, int64, uint32 or uint64, got " +
               std::string(to_string(t)));
}

}  // namespace joinery
