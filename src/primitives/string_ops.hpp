#pragma once
// Internal: host operations on string columns (Arrow's layout) that let joins and group-bys run
// on strings through their integer paths: a dictionary shared by several columns (codes in the
// strings' byte order), gathers of strings by row id or code, and a hash per string.
#include <joinery/column.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace joinery::detail::strings {

/// 64-bit hash of a string's bytes (the checksum of a string value).
std::uint64_t hash_bytes(std::string_view s) noexcept;

/// Codes of several string columns over one dictionary: codes[i] is uint32 per row of column i
/// (its validity mask copied; NULL rows hold 0), `values` the distinct valid strings, value c
/// being the string of code c.
struct dictionary {
  std::vector<column> codes;
  column values;
};

/// Whether codes must follow the strings' order (sorting, MIN / MAX) or only their equality.
enum class code_order : std::uint8_t { any, byte_order };

/// One pass of hashing and a partitioned distinct pass; with byte_order, a sort of the distinct
/// strings (values ascending). The columns must be host-accessible.
dictionary encode(std::vector<column_view> const& columns, code_order order);

/// out[i] = src[ids[i]]; NULL where ids[i] is NULL or negative. `ids` is any integer column
/// (host-accessible); `src` a host-accessible string column. The result is `src`'s type, or
/// large_string when its characters pass 2^31 - 1 bytes.
column gather(column_view const& src, column_view const& ids);

/// Codes of a join's key pair without a dictionary of both sides: build's rows encoded as
/// encode() does (no order), probe's rows looked up among them in one pass in row order (the
/// number of build's distinct strings where absent: it equals no build code). No values are
/// assembled; a join decodes its keys by row.
struct looked_up {
  column build_codes;
  column probe_codes;
};
looked_up encode_and_look_up(column_view const& build, column_view const& probe);

/// out[i] = a[ids_a[i]] where that id is valid and non-negative and a's value there is not
/// NULL, else b[ids_b[i]] the same way (when ids_b is not empty), else NULL: SQL's COALESCE of
/// two gathers. large_string when either source is, or past 2^31 - 1 characters.
column coalesce(column_view const& a, column_view const& ids_a, column_view const& b,
                column_view const& ids_b);

/// uint64 hash_bytes of every row (the string's mask copied).
column hashes(column_view const& src);

/// int64 0..n-1 with the string column's mask: a stand-in payload that a join carries as row ids.
column row_ordinals(column_view const& src);

/// The wrapping sum of hash_bytes over the valid rows.
std::uint64_t checksum(column_view const& src);

/// Throws logic_error unless `c` (a string column) is host-accessible; `what` names it.
void expect_host(column_view const& c, std::string_view what);

}  // namespace joinery::detail::strings
