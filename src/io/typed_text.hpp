#pragma once
// Text of the types stored as integers (bool8, date32, the timestamps, the decimals) and of the
// CSV header's type annotations: what the CSV reader parses and the writer formats, so that a
// written file reads back as the same table.
#include <joinery/column.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace joinery::io::detail {

/// The longest text format_fixed writes: a decimal128 holds up to 39 digits, with a sign, a
/// point and a leading zero; a timestamp_s far from 1970 has a 12-digit year.
inline constexpr std::size_t max_value_chars = 48;

/// A day of the proleptic Gregorian calendar (month 1..12, day 1..31).
struct civil_date {
  std::int64_t year = 1970;
  unsigned month = 1;
  unsigned day = 1;
};
/// Days since 1970-01-01 of a valid date (negative before it), and back; exact for years of up
/// to 15 digits.
std::int64_t days_from_civil(civil_date d) noexcept;
civil_date civil_from_days(std::int64_t days) noexcept;

// Parsing: each returns an empty string when `text` is a value (stored in `out`), else why it
// is not one, naming the text, e.g. "'2021-02-30' is not a date: 2021-02 has 28 days".

/// true/false, True/False, TRUE/FALSE, t/f, 1/0.
std::string parse_bool(std::string_view text, std::uint8_t& out);
/// YYYY-MM-DD: the year has four or more digits (astronomical numbering, '-' before year 0).
std::string parse_date32(std::string_view text, std::int32_t& out);
/// YYYY-MM-DD, optionally followed by ' ' or 'T' and HH:MM:SS[.fraction] with at most the
/// unit's digits of fraction (none for seconds, 3, 6, 9); `unit` is one of the timestamp types.
std::string parse_timestamp(std::string_view text, type_id unit, std::int64_t& out);
/// [+-]digits[.digits] ("7." and ".5" too): at most `f.scale` digits after the point (more is an
/// error, never rounded) and at most f.precision digits once scaled; the result is the value
/// times 10^scale.
std::string parse_decimal(std::string_view text, decimal_format f, __int128& out);
/// A value of any type after large_string, into size_of(type) bytes at `out`.
std::string parse_logical(std::string_view text, type_id type, decimal_format f, void* out);

// Formatting: each writes at most max_value_chars at `out` and returns the end.

/// "true" for any nonzero byte, else "false".
char* format_bool(char* out, std::uint8_t v);
/// YYYY-MM-DD.
char* format_date32(char* out, std::int32_t days);
/// YYYY-MM-DD HH:MM:SS, then the fraction with the unit's digits (3, 6, 9) when it is not zero.
char* format_timestamp(char* out, type_id unit, std::int64_t v);
/// The integer `v` times 10^-scale with exactly `scale` digits after the point (none at 0).
char* format_decimal(char* out, __int128 v, int scale);
/// Row `row` (valid) of a host column of any fixed-width type, as the CSV writer writes it.
char* format_fixed(char* out, column_view const& c, size_type row);

/// The CSV header annotation of a type: its name, with "(precision,scale)" for decimals.
std::string type_annotation(type_id type, decimal_format f);
/// Parses an annotation: a type name or alias (type_from_string's), decimals as
/// decimal64(precision[,scale]) (precision 1..18; 1..38 for decimal128; 0 <= scale <=
/// precision). Returns an empty string, or why not in words that follow "column 'x' ".
std::string parse_type_annotation(std::string_view text, type_id& type, decimal_format& f);

/// `text` for a message: its first 40 characters, then "..." when longer.
std::string shown_text(std::string_view text);

}  // namespace joinery::io::detail
