#pragma once
// String columns of the CSV reader and writer: a field's text as a value, the per-chunk buffers
// of the parallel parse joined into one column, and the quoting of values written out.
#include <joinery/column.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace joinery::io::detail {

/// What one parse chunk read of one string column: its characters and where each of its rows
/// ends in them (a null row is empty).
struct string_chunk {
  std::string chars;
  std::vector<std::int64_t> ends;
};

/// Appends the field [b, e) as a value: an unquoted field as written (blanks kept); a quoted one
/// without its quotes and the blanks outside them, "" inside read as one quote (`escaped`: it
/// holds one).
void append_string_field(string_chunk& out, char const* b, char const* e, bool quoted,
                         bool escaped);
/// Appends a null row to `out`.
void append_null_string(string_chunk& out);

/// One column of `rows` rows from the chunks of the parse in file order, each emptied once
/// copied: `string`, or `large_string` when `large` or when the characters pass what int32
/// offsets (or the limit set_csv_max_string_chars sets) can index.
column join_string_chunks(std::vector<string_chunk*> const& chunks, size_type rows, bool large);

/// Sets the most characters the reader puts in a `string` column before it makes it a
/// `large_string` (0: INT32_MAX) and returns the previous value; tests lower it.
std::int64_t set_csv_max_string_chars(std::int64_t chars);

/// Whether a value must be quoted to read back as itself: it is empty (unquoted, a null), holds
/// a comma, quote or line break, starts or ends with a blank, or reads like a null marker
/// (NULL, NA, \N, ...) that a reader's null literal might name.
bool csv_needs_quotes(std::string_view v);
/// Writes `v` as a CSV field at `out` (quoted when it needs it, quotes inside doubled): at most
/// 2 * v.size() + 2 bytes. Returns the end.
char* write_csv_string(char* out, std::string_view v);

}  // namespace joinery::io::detail
