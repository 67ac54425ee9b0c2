#pragma once
// Reading and writing tables: CSV with a header row, or a directory of .npy column files.
#include <joinery/table.hpp>

#include <filesystem>
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

/// CSV: a header row of names, then integer rows. A header field may carry its type as
/// `name:int32` (int8..int64, uint8..uint64; also float32/float64); unannotated columns are int64,
/// or uint64 when a value needs it. An empty field is a null. Throws input_error with the file,
/// line and column on a missing file, a ragged row, a non-integer or out-of-range value.
named_table read_csv(std::filesystem::path const& file);
/// Writes to a temporary name in the same directory and renames it when complete. Nulls are
/// empty fields; columns other than int64 carry their type in the header; floats are written in
/// their shortest round-trip form.
void write_csv(std::filesystem::path const& file, std::vector<std::string> const& names,
               table_view const& t);

/// NumPy .npy format 1.0/2.0/3.0, little-endian integers (i1..i8, u1..u8) and floats (f4, f8).
column read_npy(std::filesystem::path const& file);
void write_npy(std::filesystem::path const& file, column_view const& c);
/// A directory of `<name>.npy` files, one per column, columns ordered by name.
named_table read_npy_dir(std::filesystem::path const& dir);
/// Written into a temporary directory renamed into place when complete. Refuses columns with nulls
/// (.npy has no nulls).
void write_npy_dir(std::filesystem::path const& dir, std::vector<std::string> const& names,
                   table_view const& t);

/// A directory is read as .npy columns, anything else as CSV.
named_table read_table(std::filesystem::path const& path);
/// A path ending in ".csv" is written as CSV, anything else as a directory of .npy files.
void write_table(std::filesystem::path const& path, std::vector<std::string> const& names,
                 table_view const& t);

}  // namespace joinery::io
