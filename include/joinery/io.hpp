#pragma once
// Reading and writing tables: CSV with a header row, or a directory of .npy column files.
#include <joinery/table.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace joinery::io {

/// A host table with column names, as files carry them.
struct named_table {
  std::vector<std::string> names;
  table data;
  /// Index of the column called `name`; throws input_error naming the columns that exist.
  [[nodiscard]] size_type column_index(std::string_view name) const;
  [[nodiscard]] table_view view() const { return data.view(); }
};

/// What a writer does when its target path exists already.
enum class existing_output : std::uint8_t {
  refuse,   ///< throw input_error and change nothing (the default)
  /// Replace a regular file (CSV), or a directory that holds only .npy files (a .npy result);
  /// never another directory, nor one holding the working directory.
  replace,
};
std::string_view to_string(existing_output e) noexcept;

/// The two result formats write_table chooses between.
enum class output_format : std::uint8_t { csv, npy_directory };
/// CSV for a name ending in ".csv" (any case), else a directory of .npy files; a name ending in
/// the extension of another format (.txt, .parquet, .json, .npy, ...) is refused (input_error).
output_format output_format_of(std::filesystem::path const& path);

/// How CSV is read beyond its format.
struct csv_options {
  /// Not an aggregate, so that `{"a"}` stays a list of column names (an empty list must be
  /// spelled std::vector<std::string>{} beside these overloads).
  csv_options() = default;
  /// An unquoted field that reads exactly this (after blanks around it are dropped; in a string
  /// column, as written) is a null, as an empty field is; empty: only empty fields are. A quoted
  /// field is never a null in a string column.
  std::string null_literal;
};

/// CSV: a header row of names, then rows. A header field may carry its type as `name:int32`
/// (int8..int64, uint8..uint64, float32, float64, string, large_string, and the types stored as
/// integers below); unannotated columns are int64, or uint64 when a value needs it (text is
/// never inferred: a column of text must be annotated `name:string`, which the error for a
/// non-number suggests). An empty field is a null (and one reading csv_options::null_literal,
/// unquoted). Fields may be quoted as RFC 4180 has it:
/// `"..."` with `""` for a quote inside, holding commas and line breaks (a quoted number is read as
/// the number; in a number column a quoted empty field is a null); names may be quoted too.
///
/// String columns (Arrow's utf8, int32 offsets; large_string, int64 offsets, when annotated so or
/// when the column's characters pass 2^31 - 1 bytes) hold a field's bytes as they are (UTF-8 or
/// not, nothing decoded): an unquoted field as written, blanks included; a quoted field without
/// its quotes (and blanks outside them), `""` inside read as `"`. A null is an unquoted empty
/// field or an unquoted field equal to the null literal; a quoted empty field `""` is the empty
/// string, not a null (as DuckDB and Arrow read it).
///
/// The types stored as integers, each read from text (an empty field or the null literal is a
/// null, as for numbers):
/// - `name:bool` (also bool8, boolean): true/false, True/False, TRUE/FALSE, t/f, 1/0.
/// - `name:date32` (also date): YYYY-MM-DD, proleptic Gregorian (2021-02-30 is an error).
/// - `name:timestamp_s`, `_ms`, `_us` (also timestamp), `_ns`: YYYY-MM-DD HH:MM:SS[.fraction]
///   in UTC, 'T' or ' ' between date and time, or a bare date (midnight); at most the unit's
///   digits of fraction (none, 3, 6, 9), more being an error.
/// - `name:decimal64(precision,scale)` (precision 1..18), `name:decimal128(precision,scale)`
///   (1..38), 0 <= scale <= precision (`(precision)` alone is scale 0): fixed point such as
///   123.45, -0.5, +3 or 7.; more digits after the point than the scale, or more in all than
///   the precision, is an error (never rounded). The annotation holds a comma, so the header
///   field may be quoted ("p:decimal64(12,2)"), or not: an unquoted one runs on to its ')'.
///
/// Lines end in '\n', "\r\n" or a lone '\r' (mixed freely); every record after the header is a
/// row, except that empty lines at the end of the file are dropped (as DuckDB and pandas do): an
/// empty line inside is an error naming it, or in a one-column file a null, but in a one-column
/// file trailing nulls (empty last lines) are dropped too. Throws input_error with the file, line
/// and column on a missing file, a ragged or blank row, a non-integer or out-of-range value, a
/// quote left open or text after a closing quote, a first line over 1 MiB.
named_table read_csv(std::filesystem::path const& file);
named_table read_csv(std::filesystem::path const& file, csv_options const& options);
/// Only the named columns, in the order named (a name repeated is read once): the other fields
/// are counted (a ragged row is still an error) but neither parsed nor stored. Throws input_error
/// for a name the header lacks, listing the columns it has; logic_error for an empty list.
named_table read_csv(std::filesystem::path const& file, std::vector<std::string> const& columns);
named_table read_csv(std::filesystem::path const& file, std::vector<std::string> const& columns,
                     csv_options const& options);
/// Writes to a temporary name in the same directory and renames it when complete. Nulls are
/// empty fields; columns other than int64 carry their type in the header (`name:string`,
/// `name:date32`, `"name:decimal64(12,2)"` quoted for its comma, ...), so that the file reads
/// back as the same table; floats are written in their shortest round-trip form; bools as
/// true/false, dates as YYYY-MM-DD, timestamps as YYYY-MM-DD HH:MM:SS with the fraction (all
/// the unit's digits) only when it is not zero, decimals with exactly `scale` digits after the
/// point (format_value). A string is quoted (quotes inside doubled) when it is empty
/// (`""`, the empty string, which an empty field is not), holds a comma, quote, '\r' or '\n',
/// starts or ends with a blank, or reads like a null marker a reader might be told of (NULL,
/// null, NA, N/A, #N/A, NaN, None, \N in any case). A one-column table whose last row is null is
/// refused (logic_error): that row would read back as a trailing blank line (an empty string is
/// written `""` and reads back). An existing `file` is kept (input_error) unless `if_exists` is
/// replace.
void write_csv(std::filesystem::path const& file, std::vector<std::string> const& names,
               table_view const& t, existing_output if_exists = existing_output::refuse);
/// Row `row` of a host-accessible column as write_csv writes it, without quotes: "" for a null,
/// a string as it is.
std::string format_value(column_view const& c, size_type row);

/// NumPy .npy format 1.0/2.0/3.0, little-endian integers (i1..i8, u1..u8) and floats (f4, f8);
/// bool8 as NumPy's bool (|b1, bytes 0 or 1); date32 as datetime64[D] (<M8[D], 8 bytes a value
/// in the file: widened on writing, and on reading refused when out of date32's range);
/// timestamp_s.._ns as <M8[s], <M8[ms], <M8[us], <M8[ns]. A datetime64 NaT is refused on
/// reading (input_error naming its row), as a column read from .npy has no nulls.
/// Strings and decimals are not: writing one throws logic_error (write CSV instead); reading a
/// dtype of strings or objects ('O', '<U..', '|S..') throws input_error.
/// Data of 1 MiB or more is a private memory mapping of the file rather than a copy: pages are
/// read as they are first touched, writes to the column stay out of the file, and the file must
/// not be truncated while the column lives (bool and datetime64 data is read through once to
/// check it; dates are narrowed into a copy).
column read_npy(std::filesystem::path const& file);
void write_npy(std::filesystem::path const& file, column_view const& c);
/// A directory of `<name>.npy` files, one per column, columns ordered by name.
named_table read_npy_dir(std::filesystem::path const& dir);
/// Only the named columns, in the order named (a name repeated is read once); only their files
/// are opened, so other .npy files there may be anything. Throws input_error for a name without
/// a file, listing the columns the directory has; logic_error for an empty list.
named_table read_npy_dir(std::filesystem::path const& dir, std::vector<std::string> const& columns);
/// Written into a temporary directory renamed into place when complete. Refuses columns with nulls
/// (.npy has no nulls) and string columns (logic_error naming the column).
void write_npy_dir(std::filesystem::path const& dir, std::vector<std::string> const& names,
                   table_view const& t, existing_output if_exists = existing_output::refuse);

/// Writes a table batch by batch, so that a result larger than memory never has to exist in one
/// piece: CSV rows are appended to one file; each column's .npy file grows and gets its row
/// count when the writer finishes. Like write_table, the target appears only complete: batches
/// go to a temporary name beside it, renamed into place by finish(); a writer destroyed before
/// finish() removes what it wrote and leaves the target as it was. Every batch holds the
/// columns `types` names (host memory); .npy refuses nulls, and string and decimal columns when
/// the writer is made. A CSV's header is written with the first batch: its decimal columns give
/// the header their precision and scale, which later batches must share.
class table_writer {
 public:
  /// Checks the path (format, an existing target to keep) and the names at once.
  table_writer(std::filesystem::path const& path, std::vector<std::string> names,
               std::vector<type_id> types, existing_output if_exists = existing_output::refuse);
  ~table_writer();
  table_writer(table_writer const&) = delete;
  table_writer& operator=(table_writer const&) = delete;
  void append(table_view const& batch);
  /// Completes the files and renames them into place; appending after it is an error.
  void finish();
  [[nodiscard]] size_type rows_written() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

/// A directory is read as .npy columns, anything else as CSV.
named_table read_table(std::filesystem::path const& path);
/// Only the named columns, in the order named: read_csv or read_npy_dir with `columns`.
named_table read_table(std::filesystem::path const& path, std::vector<std::string> const& columns);
/// The same with CSV's options (a .npy directory ignores them).
named_table read_table(std::filesystem::path const& path, csv_options const& options);
named_table read_table(std::filesystem::path const& path, std::vector<std::string> const& columns,
                       csv_options const& options);
/// Throws what write_table would throw about `path` itself (its format, an existing target to
/// keep), so that a caller can refuse before doing the work whose result it would write.
void check_output_path(std::filesystem::path const& path,
                       existing_output if_exists = existing_output::refuse);
/// Written in the format output_format_of(path) names.
void write_table(std::filesystem::path const& path, std::vector<std::string> const& names,
                 table_view const& t, existing_output if_exists = existing_output::refuse);

}  // namespace joinery::io
