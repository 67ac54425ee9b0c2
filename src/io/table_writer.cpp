// Results written batch by batch (table_writer): one CSV file, or .npy files whose headers are
// completed when the writer finishes; everything under a temporary name until then. A CSV's
// header is written with the first batch, whose decimal columns give their precision and scale.
#include "io/io_detail.hpp"

#include <cerrno>
#include <cstring>
#include <optional>

namespace joinery::io {

namespace fs = std::filesystem;
using detail::quoted;

namespace {
// Room for any row count in a .npy header written before the count is known.
constexpr size_type widest_row_count = std::numeric_limits<size_type>::max();
}  // namespace

struct table_writer::state {
  fs::path path;
  fs::path target;
  std::vector<std::string> names;
  std::vector<type_id> types;
  std::vector<decimal_format> decimals;  // CSV: set by the first batch, with the header
  output_format format = output_format::csv;
  bool replace = false;
  std::optional<detail::temp_guard> tmp;
  std::vector<detail::file_handle> files;  // one (CSV) or one per column (.npy)
  std::vector<fs::path> file_paths;
  std::size_t npy_header_bytes = 0;
  size_type rows = 0;
  bool finished = false;
  bool last_row_null = false;  // a one-column CSV must not end with a null row

  [[nodiscard]] std::string what() const {
    return (format == output_format::csv ? "CSV " : "the .npy directory ") + quoted(path);
  }

  /// Writes the CSV header with the decimal formats of `batch` (none: the types' defaults) the
  /// first time; later, checks that `batch` agrees with it.
  void write_csv_header(table_view const& batch) {
    if (!decimals.empty()) {
      for (std::size_t j = 0; j < types.size(); ++j) {
        JOINERY_EXPECTS(!is_decimal(types[j]) ||
                          batch.column(static_cast<size_type>(j)).decimal() == decimals[j],
                        "table_writer: column '" + names[j] +
                          "' changes its decimal precision or scale between batches");
      }
      return;
    }
    for (std::size_t j = 0; j < types.size(); ++j) {
      if (batch.num_columns() > 0) {
        decimals.push_back(batch.column(static_cast<size_type>(j)).decimal());
      } else {
        decimals.push_back(types[j] == type_id::decimal128 ? decimal_format{38, 0}
                                                           : decimal_format{});
      }
    }
    auto const header = detail::csv_header(names, types, decimals);
    detail::write_all(files[0].get(), header.data(), header.size(), target);
  }
};

table_writer::table_writer(fs::path const& path, std::vector<std::string> names,
                           std::vector<type_id> types, existing_output if_exists)
    : state_(std::make_unique<state>()) {
  auto& s = *state_;
  s.path = path;
  s.format = output_format_of(path);
  s.target = detail::normalized_target(path);
  JOINERY_EXPECTS(!names.empty() && names.size() == types.size(),
                  "table_writer needs one name per column type and at least one column");
  s.names = std::move(names);
  s.types = std::move(types);
  // The writers' own name checks, on an empty table of these types.
  static constexpr std::int64_t no_rows_offset = 0;  // the one offset of an empty string column
  std::vector<column_view> empty;
  for (auto t : s.types) {
    empty.push_back(is_string(t) ? column_view::strings(t, &no_rows_offset, nullptr, 0,
                                                        memory_space::host)
                                 : column_view(t, nullptr, 0, memory_space::host));
  }
  table_view const shape{std::move(empty)};
  if (s.format == output_format::csv) {
    detail::check_for_writing(s.names, shape, s.what(), ",:\"\r\n");
    detail::check_csv_names(s.names, s.what());
  } else {
    detail::check_for_writing(s.names, shape, s.what(), "/\\");
    for (std::size_t j = 0; j < s.names.size(); ++j) {
      auto const& n = s.names[j];
      JOINERY_EXPECTS(n != "." && n != "..", "writing " + s.what() + ": '" + n +
                                               "' cannot be a file name");
      detail::check_npy_type(s.types[j], "column '" + n + "' to " + s.what());
    }
  }
  s.replace = detail::check_output_target(s.target, s.what(), if_exists, s.format);
  s.tmp.emplace(detail::sibling_name(s.target, "tmp"));
  auto const& tmp = s.tmp->path();
  if (s.format == output_format::csv) {
    s.file_paths.push_back(tmp);
  } else {
    std::error_code ec;
    if (!fs::create_directory(tmp, ec) || ec) {
      throw input_error("cannot write " + s.what() + ": cannot create a temporary directory " +
                        quoted(tmp) + ": " + (ec ? ec.message() : "it exists"));
    }
    for (auto const& n : s.names) { s.file_paths.push_back(tmp / (n + ".npy")); }
  }
  for (auto const& p : s.file_paths) {
    s.files.emplace_back(p, "wbx");
    if (!s.files.back()) {
      throw input_error("cannot write " + s.what() + ": cannot create " + quoted(p) + ": " +
                        std::strerror(errno));
    }
  }
  if (s.format == output_format::npy_directory) {
    // Headers sized for the largest count, rewritten in place by finish().
    for (std::size_t j = 0; j < s.files.size(); ++j) {
      auto const header = detail::npy_header(s.types[j], widest_row_count);
      s.npy_header_bytes = header.size();
      detail::write_all(s.files[j].get(), header.data(), header.size(), s.file_paths[j]);
    }
  }
}

table_writer::~table_writer() = default;  // an unfinished temporary goes with its guard

size_type table_writer::rows_written() const noexcept { return state_->rows; }

void table_writer::append(table_view const& batch) {
  auto& s = *state_;
  JOINERY_EXPECTS(!s.finished, "table_writer: append after finish");
  JOINERY_EXPECTS(batch.num_columns() == static_cast<size_type>(s.types.size()),
                  "table_writer: a batch of " + std::to_string(batch.num_columns()) +
                    " columns for " + std::to_string(s.types.size()) + " names");
  for (std::size_t j = 0; j < s.types.size(); ++j) {
    auto const& c = batch.column(static_cast<size_type>(j));
    JOINERY_EXPECTS(c.type() == s.types[j], "table_writer: column '" + s.names[j] + "' is " +
                                              std::string(to_string(s.types[j])) +
                                              " but a batch holds " + std::string(to_string(c.type())));
    JOINERY_EXPECTS(host_accessible(c.space()), "table_writer: batches must be in host memory");
    if (s.format == output_format::npy_directory) {
      JOINERY_EXPECTS(c.null_count() == 0, "writing " + s.what() + ": column '" + s.names[j] +
                                             "' has nulls, which .npy cannot hold; write CSV");
    }
  }
  if (s.format == output_format::csv) { s.write_csv_header(batch); }
  if (batch.num_rows() == 0) { return; }
  if (s.format == output_format::csv) {
    detail::append_csv_rows(s.files[0].get(), batch, s.target);
    auto const& only = batch.column(0);
    s.last_row_null = s.types.size() == 1 && !only.is_valid(batch.num_rows() - 1);
  } else {
    for (std::size_t j = 0; j < s.files.size(); ++j) {
      auto const& c = batch.column(static_cast<size_type>(j));
      detail::write_npy_data(s.files[j].get(), c, s.file_paths[j]);
    }
  }
  s.rows += batch.num_rows();
}

void table_writer::finish() {
  auto& s = *state_;
  JOINERY_EXPECTS(!s.finished, "table_writer: finish called twice");
  if (s.format == output_format::csv && s.decimals.empty()) {  // no batch: decimals as default
    s.write_csv_header(table_view{});
  }
  if (s.format == output_format::csv && s.last_row_null) {
    throw logic_error("writing " + s.what() + ": a one-column CSV cannot end with a null row (it "
                      "would read back as a blank line); write .npy, or add a column");
  }
  if (s.format == output_format::npy_directory) {
    for (std::size_t j = 0; j < s.files.size(); ++j) {
      auto const header = detail::npy_header(s.types[j], s.rows, s.npy_header_bytes);
      if (header.size() != s.npy_header_bytes || std::fseek(s.files[j].get(), 0, SEEK_SET) != 0) {
        throw input_error("cannot complete " + quoted(s.file_paths[j]));
      }
      detail::write_all(s.files[j].get(), header.data(), header.size(), s.file_paths[j]);
    }
  }
  for (std::size_t j = 0; j < s.files.size(); ++j) { detail::close_written(s.files[j], s.file_paths[j]); }
  if (s.format == output_format::csv) {
    std::error_code ec;
    fs::rename(s.tmp->path(), s.target, ec);
    if (ec) { throw input_error("cannot write " + s.what() + ": " + ec.message()); }
    s.tmp->release();
  } else {
    detail::move_directory_into_place(*s.tmp, s.target, s.replace, quoted(s.path));
  }
  s.finished = true;
}

}  // namespace joinery::io
