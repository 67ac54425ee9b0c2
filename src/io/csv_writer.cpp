// Writing CSV: a header naming each column's type unless int64, then rows formatted in parallel
// blocks written out in order. Strings are quoted where reading them back needs it
// (csv_strings.*); bool, dates, timestamps and decimals are written as typed_text.* has them.
#include "io/csv_strings.hpp"
#include "io/io_detail.hpp"
#include "io/typed_text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <system_error>

#include <omp.h>

namespace joinery::io {

namespace fs = std::filesystem;
using detail::quoted;

namespace {

// The writer formats this many bytes per thread before writing them out.
constexpr std::size_t write_block_bytes = std::size_t{4} << 20;
// Widest value the writer produces but strings (a shortest double is 24 characters).
constexpr std::size_t max_field_chars = detail::max_value_chars;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

namespace detail {

void check_csv_names(std::vector<std::string> const& names, std::string const& what) {
  for (auto const& n : names) {
    if (!n.empty() && (is_blank(n.front()) || is_blank(n.back()))) {
      throw logic_error("writing " + what + ": column name '" + n +
                        "' starts or ends with a blank, which reading would drop");
    }
  }
}

std::string csv_header(std::vector<std::string> const& names, std::vector<type_id> const& types,
                       std::vector<decimal_format> const& decimals) {
  std::string header;
  for (std::size_t j = 0; j < names.size(); ++j) {
    if (j > 0) { header += ','; }
    if (types[j] == type_id::int64) {
      header += names[j];
      continue;
    }
    auto const decimal = j < decimals.size() ? decimals[j] : decimal_format{};
    auto const field = names[j] + ':' + type_annotation(types[j], decimal);
    // "p:decimal64(12,2)" holds a comma: quoted, it is one field to any reader.
    bool const quote = field.find(',') != std::string::npos;
    header += quote ? '"' + field + '"' : field;
  }
  header += '\n';
  return header;
}

void append_csv_rows(std::FILE* f, table_view const& t, fs::path const& target) {
  // Rows are formatted in parallel blocks into per-thread buffers written out in order. A number
  // takes at most max_field_chars; a string at most two bytes a character and its quotes, so a
  // block's bound follows from its rows' offsets.
  auto const ncols = static_cast<std::size_t>(t.num_columns());
  size_type const rows = t.num_rows();
  auto const& columns = t.columns();
  for (auto const& c : columns) {  // checked here: the parallel loop below must not throw
    auto const scale = c.decimal().scale;
    JOINERY_EXPECTS(!is_decimal(c.type()) || (scale >= 0 && scale <= 38),
                    "writing CSV: a decimal column's scale is " + std::to_string(scale) +
                      ", not 0 to 38");
  }
  std::size_t const row_bound = ncols * (max_field_chars + 1) + 1;
  auto const string_chars = [&](size_type lo, size_type hi) {
    std::size_t n = 0;
    for (auto const& c : columns) {
      if (is_string(c.type())) { n += static_cast<std::size_t>(c.offset(hi) - c.offset(lo)); }
    }
    return n;
  };
  auto const bound = [&](size_type lo, size_type hi) {
    return static_cast<std::size_t>(hi - lo) * row_bound + 2 * string_chars(lo, hi);
  };
  // Blocks of about write_block_bytes, taking strings at their average length.
  std::size_t const average_row =
    rows == 0 ? row_bound : bound(0, rows) / static_cast<std::size_t>(rows);
  auto const block =
    static_cast<size_type>(std::max<std::size_t>(1, write_block_bytes / average_row));
  int const threads = std::max(1, omp_get_max_threads());
  auto const nbufs = static_cast<std::size_t>(
    std::clamp<size_type>((rows + block - 1) / block, 1, threads));
  std::vector<std::unique_ptr<char[]>> bufs(nbufs);
  std::vector<std::size_t> capacity(nbufs, 0);
  std::vector<std::size_t> used(nbufs, 0);
  for (size_type base = 0; base < rows; base += block * static_cast<size_type>(nbufs)) {
    for (std::size_t k = 0; k < nbufs; ++k) {  // allocations outside the parallel region
      size_type const lo = std::min(rows, base + static_cast<size_type>(k) * block);
      auto const need = bound(lo, std::min(rows, lo + block));
      if (need > capacity[k]) {
        bufs[k] = std::make_unique_for_overwrite<char[]>(need);
        capacity[k] = need;
      }
    }
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(nbufs))
    for (std::size_t k = 0; k < nbufs; ++k) {
      size_type const lo = std::min(rows, base + static_cast<size_type>(k) * block);
      size_type const hi = std::min(rows, lo + block);
      char* out = bufs[k].get();
      for (size_type i = lo; i < hi; ++i) {
        for (std::size_t j = 0; j < ncols; ++j) {
          if (j > 0) { *out++ = ','; }
          auto const& c = columns[j];
          if (!c.is_valid(i)) { continue; }
          if (is_string(c.type())) {
            out = write_csv_string(out, c.string_at(i));
            continue;
          }
          out = format_fixed(out, c, i);
        }
        *out++ = '\n';
      }
      used[k] = static_cast<std::size_t>(out - bufs[k].get());
    }
    for (std::size_t k = 0; k < nbufs; ++k) { write_all(f, bufs[k].get(), used[k], target); }
  }
}

}  // namespace detail

void write_csv(fs::path const& file, std::vector<std::string> const& names, table_view const& t,
               existing_output if_exists) {
  scoped_range const range("joinery::io::write_csv");
  auto const what = "CSV " + quoted(file);
  detail::check_for_writing(names, t, what, ",:\"\r\n");
  detail::check_csv_names(names, what);
  if (t.num_columns() == 1 && t.num_rows() > 0 && !t.column(0).is_valid(t.num_rows() - 1)) {
    // Its null would be an empty last line, which reading drops as a trailing blank line.
    throw logic_error("writing " + what + ": a one-column CSV cannot end with a null row (it "
                      "would read back as a blank line); write .npy, or add a column");
  }
  auto const target = detail::normalized_target(file);
  std::error_code ec;
  detail::check_output_target(target, what, if_exists, output_format::csv);
  std::vector<type_id> types;
  std::vector<decimal_format> decimals;
  for (auto const& c : t) {
    types.push_back(c.type());
    decimals.push_back(c.decimal());
  }
  auto const header = detail::csv_header(names, types, decimals);

  detail::temp_guard tmp(detail::sibling_name(target, "tmp"));
  detail::file_handle f(tmp.path(), "wbx");
  if (!f) {
    throw input_error("cannot write " + what + ": cannot create " + quoted(tmp.path()) + ": " +
                      std::strerror(errno));
  }
  detail::write_all(f.get(), header.data(), header.size(), target);
  detail::append_csv_rows(f.get(), t, target);
  detail::close_written(f, target);
  fs::rename(tmp.path(), target, ec);
  if (ec) { throw input_error("cannot write " + what + ": " + ec.message()); }
  tmp.release();
}

std::string format_value(column_view const& c, size_type row) {
  JOINERY_EXPECTS(host_accessible(c.space()), "format_value needs a host-accessible column");
  JOINERY_EXPECTS(row >= 0 && row < c.size(), "format_value: row " + std::to_string(row) +
                                                " is outside a column of " +
                                                std::to_string(c.size()) + " rows");
  if (!c.is_valid(row)) { return {}; }
  if (is_string(c.type())) { return std::string(c.string_at(row)); }
  char buf[max_field_chars];
  return {buf, detail::format_fixed(buf, c, row)};
}

}  // namespace joinery::io
