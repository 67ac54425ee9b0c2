#pragma once
// Helpers shared by the CSV and .npy readers and writers: files, temporary names, name checks.
#include <joinery/io.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace joinery::io::detail {

/// The path in quotes, for messages.
std::string quoted(std::filesystem::path const& p);

/// Owning FILE*; closing is explicit where errors matter (writes), silent in the destructor.
class file_handle {
 public:
  file_handle() = default;
  file_handle(std::filesystem::path const& p, char const* mode) : f_(std::fopen(p.c_str(), mode)) {}
  ~file_handle() {
    if (f_ != nullptr) { std::fclose(f_); }
  }
  file_handle(file_handle const&) = delete;
  file_handle& operator=(file_handle const&) = delete;
  file_handle(file_handle&& o) noexcept : f_(std::exchange(o.f_, nullptr)) {}
  file_handle& operator=(file_handle&&) = delete;
  [[nodiscard]] std::FILE* get() const noexcept { return f_; }
  explicit operator bool() const noexcept { return f_ != nullptr; }
  /// Closes and reports whether everything written reached the OS.
  bool close() noexcept {
    if (f_ == nullptr) { return true; }
    bool const ok = std::fclose(f_) == 0;
    f_ = nullptr;
    return ok;
  }

 private:
  std::FILE* f_ = nullptr;
};

/// Opens `p` for reading; throws input_error (naming `what` and the file) when it cannot.
file_handle open_for_reading(std::filesystem::path const& p, std::string_view what);
/// Reads exactly `bytes` bytes or throws input_error.
void read_exactly(std::FILE* f, void* dst, std::size_t bytes, std::filesystem::path const& p,
                  std::string_view what);
/// Writes all bytes or throws input_error.
void write_all(std::FILE* f, void const* src, std::size_t bytes, std::filesystem::path const& p);
/// Flushes and closes a written file or throws input_error.
void close_written(file_handle& f, std::filesystem::path const& p);

/// `target` made absolute with its trailing separator dropped (so that it has a file name).
std::filesystem::path normalized_target(std::filesystem::path const& target);
/// A fresh hidden name next to `target`: `<dir>/.<name>.<tag>.<pid>.<random>`.
std::filesystem::path sibling_name(std::filesystem::path const& target, std::string_view tag);

/// Checks a normalized write target against `if_exists` (see existing_output): returns whether
/// it exists (and may be replaced); throws input_error naming `what` when it must be kept.
bool check_output_target(std::filesystem::path const& target, std::string_view what,
                         existing_output if_exists, output_format format);

/// Removes a temporary file or directory when it goes out of scope, unless released.
class temp_guard {
 public:
  explicit temp_guard(std::filesystem::path p) : path_(std::move(p)) {}
  ~temp_guard();
  temp_guard(temp_guard const&) = delete;
  temp_guard& operator=(temp_guard const&) = delete;
  void release() noexcept { armed_ = false; }
  [[nodiscard]] std::filesystem::path const& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
  bool armed_ = true;
};

/// The wording of named_table::column_index for a missing `name`: "no column 'x'; columns are:
/// a, b".
std::string no_column_message(std::string_view name, std::vector<std::string> const& names);
/// Positions in `have` of the names in `wanted`, in the order wanted, a repeated name once.
/// Throws input_error ("cannot read <what>: no column ...") for a name `have` lacks, and
/// logic_error for an empty `wanted` (a table of no columns has no rows to count).
std::vector<std::size_t> pick_columns(std::vector<std::string> const& have,
                                      std::vector<std::string> const& wanted,
                                      std::string_view what);
/// Sets the smallest chunk the CSV reader's parallel parse cuts (0: the default, 64 KiB) and
/// returns the previous value; tests shrink it so that small files span many chunks.
std::size_t set_csv_min_chunk_bytes(std::size_t bytes);

/// Checks what every writer needs: one name per column, names unique and not empty, host data.
/// `forbidden` lists characters a name may not contain in that format.
void check_for_writing(std::vector<std::string> const& names, table_view const& t,
                       std::string_view format, std::string_view forbidden);

/// Throws logic_error for a type .npy cannot hold (strings, decimals), naming `what` and
/// suggesting CSV.
void check_npy_type(type_id type, std::string_view what);
/// Writes one column in .npy format to `p` (not atomically: callers write to temporary names).
void write_npy_file(std::filesystem::path const& p, column_view const& c);
/// Appends the values of `c` to an open .npy file `f` (`p`): its bytes, or for date32 the days
/// widened to NumPy's 8-byte datetime64[D].
void write_npy_data(std::FILE* f, column_view const& c, std::filesystem::path const& p);
/// The .npy preamble and header of a 1-D array of `rows` values, padded to at least `min_bytes`
/// (a header rewritten in place once the row count is known keeps its length).
std::string npy_header(type_id type, size_type rows, std::size_t min_bytes = 0);
/// Renames a finished temporary directory to `target` (moving an existing one aside first and
/// removing it after when `replace`); throws input_error naming `dir_name`.
void move_directory_into_place(temp_guard& tmp, std::filesystem::path const& target, bool replace,
                               std::string const& dir_name);
/// Throws logic_error for a CSV column name that starts or ends with a blank.
void check_csv_names(std::vector<std::string> const& names, std::string const& what);
/// The header line: names, each annotated with its type unless int64 (decimals with their
/// precision and scale from `decimals`, one per column, or the default format when it is
/// shorter; such a field holds a comma and is quoted).
std::string csv_header(std::vector<std::string> const& names, std::vector<type_id> const& types,
                       std::vector<decimal_format> const& decimals);
/// Appends the rows of `t` (host data) to `f`; nulls are empty fields.
void append_csv_rows(std::FILE* f, table_view const& t, std::filesystem::path const& target);

}  // namespace joinery::io::detail
