// Reading CSV of numbers, strings, bools, dates, timestamps and decimals (their text in
// typed_text.*) with a header row (csv_writer.cpp writes it). The reader
// loads the whole file, cuts it into chunks at record boundaries and parses the chunks in
// parallel (OpenMP) straight into the output columns. Lines end in '\n', "\r\n" or a lone '\r',
// mixed freely. Fields may be quoted as RFC 4180 has it ("" inside is a quote; a quoted field may
// hold commas and line breaks): a file with quotes has its record boundaries found by one
// sequential pass that follows them, one without by the parallel count of line ends. String
// columns (csv_strings.*) gather their characters per chunk and are joined into one column after
// the parse.
#include "io/csv_strings.hpp"
#include "io/io_detail.hpp"
#include "io/typed_text.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <system_error>
#include <type_traits>

#include <omp.h>

namespace joinery::io {

namespace fs = std::filesystem;
using detail::quoted;

namespace {

// Chunks are big enough that finding their boundaries costs nothing, and several per thread so
// that uneven lines still balance. Tests shrink the size (detail::set_csv_min_chunk_bytes) to cut
// small files into many chunks.
constexpr std::size_t default_min_chunk_bytes = std::size_t{64} << 10;
std::atomic<std::size_t> min_chunk_bytes{default_min_chunk_bytes};
constexpr std::size_t chunks_per_thread = 4;
// A header row of names is far shorter (150,000 columns of 5-letter names fit). A longer first
// line is a file that is not CSV or ends its lines in something we don't read ('\n',
// "\r\n" and a lone '\r' are read); reading it as a header would give a table of no rows.
constexpr std::size_t max_header_line_bytes = std::size_t{1} << 20;

enum class field_status : std::uint8_t { ok, invalid, out_of_range };

bool is_blank(char c) { return c == ' ' || c == '\t'; }

void trim(char const*& b, char const*& e) {
  while (b != e && is_blank(*b)) { ++b; }
  while (e != b && is_blank(e[-1])) { --e; }
}

std::string shown(char const* b, char const* e) {
  return detail::shown_text(std::string_view(b, static_cast<std::size_t>(e - b)));
}

template <class T>
field_status parse_value(char const* b, char const* e, T& v) {
  // from_chars takes no '+'; a lone sign after it is still invalid below.
  if (*b == '+') {
    ++b;
    if (b == e || *b == '+' || *b == '-') { return field_status::invalid; }
  }
  if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    if (*b == '-') {
      // A negative number is out of range for an unsigned column; "-0" is zero.
      bool zero = true;
      if (b + 1 == e) { return field_status::invalid; }
      for (auto const* q = b + 1; q != e; ++q) {
        if (*q < '0' || *q > '9') { return field_status::invalid; }
        zero = zero && *q == '0';
      }
      v = 0;
      return zero ? field_status::ok : field_status::out_of_range;
    }
  }
  auto const r = std::from_chars(b, e, v);
  if (r.ptr != e) { return field_status::invalid; }
  if (r.ec == std::errc::result_out_of_range) { return field_status::out_of_range; }
  return r.ec == std::errc{} ? field_status::ok : field_status::invalid;
}

struct csv_column {
  std::string name;
  type_id type = type_id::int64;
  decimal_format decimal{};
  bool annotated = false;  // unannotated: int64, widened to uint64 when a value needs it
  bool read = false;       // false: a column whose fields are only counted
  void* data = nullptr;    // numbers: the output column's values
};

/// The first '\n' or '\r' in [p, end), or end. Eight bytes a step: a CR-only file has no '\n'
/// for memchr to find, and this is as cheap as memchr on the short lines of numbers.
char const* find_line_end(char const* p, char const* end) {
  constexpr std::uint64_t ones = 0x0101010101010101u;
  constexpr std::uint64_t highs = 0x8080808080808080u;
  for (; end - p >= 8; p += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, sizeof w);
    auto const lf = w ^ (ones * '\n');
    auto const cr = w ^ (ones * '\r');
    // Flags the zero bytes; borrows only run upwards, so the lowest flag is exact.
    auto const hit = (((lf - ones) & ~lf) | ((cr - ones) & ~cr)) & highs;
    if (hit != 0) { return p + (std::countr_zero(hit) >> 3); }
  }
  while (p != end && *p != '\n' && *p != '\r') { ++p; }
  return p;
}

/// The start of the line after the line end at `e` ("\r\n" is one line end).
char const* after_line_end(char const* e, char const* end) {
  if (e == end) { return end; }
  return *e == '\r' && e + 1 != end && e[1] == '\n' ? e + 2 : e + 1;
}

/// Follows RFC 4180's quotes through records: a quote opens a quoted field only at the field's
/// start (after blanks); inside, "" is a quote and a lone quote closes it. A quote anywhere else
/// is text, and a line end outside quotes ends the record.
struct quote_state {
  bool in_quotes = false;
  bool field_start = true;
  /// Steps over the character at p (and the second quote of a ""); true when it is a line end
  /// that ends the record.
  bool step(char const*& p, char const* end) {
    auto const c = *p;
    if (in_quotes) {
      if (c == '"') {
        if (p + 1 != end && p[1] == '"') {
          ++p;
        } else {
          in_quotes = false;
        }
      }
      return false;
    }
    if (c == '\n' || c == '\r') {
      field_start = true;
      return true;
    }
    if (c == '"' && field_start) {
      in_quotes = true;
    } else if (c == ',') {
      field_start = true;
      return false;
    } else if (!is_blank(c)) {
      field_start = false;
    }
    if (c == '"') { field_start = false; }
    return false;
  }
};

/// The end of the record that starts at p: its first line end outside quotes, or `end`; adds the
/// line ends inside its quotes to `inner_lines`.
char const* find_record_end(char const* p, char const* end, size_type& inner_lines) {
  quote_state q;
  for (; p != end; ++p) {
    bool const quoted = q.in_quotes;
    if (q.step(p, end)) { return p; }
    if (quoted && (*p == '\n' || (*p == '\r' && (p + 1 == end || p[1] != '\n')))) {
      ++inner_lines;
    }
  }
  return end;
}

/// The end of the field that starts at p (at ',' or e): a quoted field ends after its closing
/// quote (and any blanks); nullptr when text follows the closing quote. `quoted` and `escaped`
/// say whether it was quoted and holds "" inside.
char const* find_field_end(char const* p, char const* e, bool& quoted, bool& escaped) {
  quoted = false;
  escaped = false;
  auto const* q = p;
  while (q != e && is_blank(*q)) { ++q; }
  if (q == e || *q != '"') {
    while (p != e && *p != ',') { ++p; }
    return p;
  }
  quoted = true;
  for (++q; q != e; ++q) {
    if (*q != '"') { continue; }
    if (q + 1 != e && q[1] == '"') {
      escaped = true;
      ++q;
      continue;
    }
    ++q;  // past the closing quote
    while (q != e && is_blank(*q)) { ++q; }
    return q == e || *q == ',' ? q : nullptr;
  }
  return nullptr;  // no closing quote in the record (the layout pass makes this rare)
}

/// The text of a field [b, e): without blanks around it, and without its quotes when quoted.
void field_text(char const*& b, char const*& e, bool quoted) {
  trim(b, e);
  if (quoted) {
    ++b;
    --e;
    trim(b, e);
  }
}

/// Line ends in [b, e) that are not split from a '\n' after them. Reads e[0]: callers keep a
/// byte after the data.
size_type count_line_ends(char const* b, char const* e) {
  size_type n = 0;
  for (auto const* p = b; p != e; ++p) {
    n += static_cast<size_type>((p[0] == '\n') | ((p[0] == '\r') & (p[1] != '\n')));
  }
  return n;
}

/// What parsing one chunk found besides the values.
struct chunk_result {
  std::vector<std::vector<size_type>> nulls;  // per column, rows
  std::vector<detail::string_chunk> strings;  // per column, the values of string columns
  std::vector<size_type> first_big;           // per column, line of the first value above INT64_MAX
  std::vector<size_type> first_negative;      // per column, line of the first negative value
  size_type error_row = -1;
  std::string error;
};

class csv_parser {
 public:
  csv_parser(fs::path const& file, std::vector<csv_column>& cols, bool quoted_fields,
             std::string null_literal)
      : file_(file), cols_(cols), ncols_(cols.size()), quoted_fields_(quoted_fields),
        null_literal_(std::move(null_literal)) {}

  /// Parses the records [p, end) holding rows first_row.. (the first on line first_line) into
  /// the columns; stops at the first error.
  void parse_chunk(char const* p, char const* end, size_type first_row, size_type rows,
                   size_type first_line, chunk_result& r) const {
    r.nulls.assign(ncols_, {});
    r.first_big.assign(ncols_, -1);
    r.first_negative.assign(ncols_, -1);
    r.strings.assign(ncols_, {});
    for (std::size_t j = 0; j < ncols_; ++j) {
      if (cols_[j].read && is_string(cols_[j].type)) {
        r.strings[j].ends.reserve(static_cast<std::size_t>(rows));
      }
    }
    auto line = first_line;
    for (size_type row = first_row; row < first_row + rows; ++row) {
      size_type inner = 0;
      auto const* e = quoted_fields_ ? find_record_end(p, end, inner) : find_line_end(p, end);
      if (!parse_line(p, e, row, line, r)) { return; }
      p = after_line_end(e, end);
      line += 1 + inner;
    }
  }

 private:
  bool fail(chunk_result& r, size_type row, size_type line, std::string msg) const {
    r.error_row = row;
    r.error = "cannot read CSV " + quoted(file_) + ": line " + std::to_string(line) + ": " +
              std::move(msg);
    return false;
  }

  bool ragged(chunk_result& r, size_type row, size_type line, char const* b, char const* e) const {
    if (b == e) {
      return fail(r, row, line, "is blank but the header has " + std::to_string(ncols_) +
                                  " columns (blank lines may only end the file)");
    }
    std::size_t fields = 0;
    bool quoted = false, escaped = false;
    for (auto const* p = b;; ++fields) {
      auto const* f = find_field_end(p, e, quoted, escaped);
      if (f == nullptr) { break; }
      if (f == e) {
        ++fields;
        break;
      }
      p = f + 1;
    }
    return fail(r, row, line, "has " + std::to_string(fields) + " fields but the header has " +
                                std::to_string(ncols_));
  }

  /// One record without its line end.
  bool parse_line(char const* const record, char const* e, size_type row, size_type line,
                  chunk_result& r) const {
    auto const* p = record;
    for (std::size_t j = 0; j < ncols_; ++j) {
      bool quoted = false, escaped = false;
      auto const* f = quoted_fields_ ? find_field_end(p, e, quoted, escaped) : p;
      if (f == nullptr) {
        return fail(r, row, line, "field " + std::to_string(j + 1) + " ('" + cols_[j].name +
                                    "'): text after its closing quote, or no closing quote");
      }
      while (f != e && *f != ',') { ++f; }
      bool const last = j + 1 == ncols_;
      if (last ? f != e : f == e) { return ragged(r, row, line, record, e); }
      auto const* b = p;
      auto const* fe = f;
      p = f + 1;
      if (!cols_[j].read) { continue; }
      if (is_string(cols_[j].type)) {
        string_field(b, fe, quoted, escaped, j, row, r);
        continue;
      }
      field_text(b, fe, quoted);
      if (escaped) {
        auto const type = cols_[j].type;
        return fail(r, row, line, "column '" + cols_[j].name + "': '" + shown(b, fe) +
                                    "' is not a " +
                                    (is_logical(type) ? std::string(to_string(type)) : "number") +
                                    text_hint(cols_[j]));
      }
      if (!parse_field(b, fe, quoted, j, row, line, r)) { return false; }
    }
    return true;
  }

  /// A field of a string column: its text as written. Empty or the null literal, unquoted, is a
  /// null; a quoted empty field is the empty string.
  void string_field(char const* b, char const* e, bool quoted, bool escaped, std::size_t j,
                    size_type row, chunk_result& r) const {
    auto& out = r.strings[j];
    bool const null = !quoted && (b == e || (!null_literal_.empty() &&
                                             std::string_view(b, static_cast<std::size_t>(e - b)) ==
                                               null_literal_));
    if (null) {
      detail::append_null_string(out);
      r.nulls[j].push_back(row);
    } else {
      detail::append_string_field(out, b, e, quoted, escaped);
    }
  }

  /// For a column read as a number by default: how to read it as text instead.
  static std::string text_hint(csv_column const& c) {
    return c.annotated ? std::string()
                       : "; to read it as text, annotate the header field as '" + c.name +
                           ":string'";
  }

  bool parse_field(char const* b, char const* e, bool quoted, std::size_t j, size_type row,
                   size_type line, chunk_result& r) const {
    auto const& c = cols_[j];
    auto const i = static_cast<std::size_t>(row);
    bool const null_text = !quoted && !null_literal_.empty() &&
                           std::string_view(b, static_cast<std::size_t>(e - b)) == null_literal_;
    if (b == e || null_text) {
      // A null: a defined value underneath keeps the data deterministic.
      std::memset(static_cast<char*>(c.data) + i * size_of(c.type), 0, size_of(c.type));
      r.nulls[j].push_back(row);
      return true;
    }
    if (is_logical(c.type)) {
      auto why = detail::parse_logical(std::string_view(b, static_cast<std::size_t>(e - b)),
                                       c.type, c.decimal,
                                       static_cast<char*>(c.data) + i * size_of(c.type));
      return why.empty() || fail(r, row, line, "column '" + c.name + "': " + std::move(why));
    }
    field_status st{};
    if (!c.annotated) {
      auto* out = static_cast<std::int64_t*>(c.data) + i;
      st = parse_value(b, e, *out);
      if (st == field_status::ok) {
        if (*out < 0 && r.first_negative[j] < 0) { r.first_negative[j] = line; }
      } else if (st == field_status::out_of_range && *b != '-') {
        std::uint64_t u = 0;
        st = parse_value(b, e, u);
        if (st == field_status::ok) {
          std::memcpy(out, &u, sizeof u);  // same bits; the column becomes uint64 at the end
          if (r.first_big[j] < 0) { r.first_big[j] = line; }
        }
      }
    } else {
      st = dispatch_type(c.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return parse_value(b, e, static_cast<T*>(c.data)[i]);
      });
    }
    if (st == field_status::ok) { return true; }
    auto const what = c.annotated ? std::string(to_string(c.type))
                                  : std::string("a 64-bit integer column");
    if (st == field_status::out_of_range) {
      return fail(r, row, line, "column '" + c.name + "': value " + shown(b, e) +
                            " is out of range for " + what);
    }
    return fail(r, row, line, "column '" + c.name + "': '" + shown(b, e) + "' is not " +
                          (is_floating(c.type) ? "a number" : "an integer") + text_hint(c));
  }

  fs::path const& file_;
  std::vector<csv_column>& cols_;
  std::size_t ncols_;
  bool quoted_fields_;
  std::string null_literal_;
};

/// An unquoted header field such as `p:decimal64(12,2)` is cut at its comma: joins the fields
/// after it to `text` up to the closing parenthesis, moving `f` (the field's end) along.
void join_decimal_annotation(std::string& text, char const*& f, char const* e) {
  auto const colon = text.rfind(':');
  if (colon == std::string::npos) { return; }
  auto const type_start = text.find_first_not_of(" \t", colon + 1);
  if (type_start == std::string::npos || text.compare(type_start, 7, "decimal") != 0) { return; }
  while (f != e && text.find(')', type_start) == std::string::npos) {
    auto const* next = f + 1;
    while (next != e && *next != ',') { ++next; }
    text.append(f, next);
    f = next;
  }
  while (!text.empty() && is_blank(text.back())) { text.pop_back(); }
}

/// The header line [b, e), without its line end.
std::vector<csv_column> parse_header(fs::path const& file, char const* b, char const* e) {
  auto const fail = [&](std::string const& msg) {
    throw input_error("cannot read CSV " + quoted(file) + ": line 1 (header): " + msg);
  };
  std::vector<csv_column> cols;
  std::set<std::string_view> seen;
  for (auto const* p = b;;) {
    bool quoted = false, escaped = false;
    auto const* f = find_field_end(p, e, quoted, escaped);
    if (f == nullptr) {
      fail("column " + std::to_string(cols.size() + 1) +
           ": text after its closing quote, or no closing quote");
    }
    auto const* nb = p;
    auto const* ne = f;
    field_text(nb, ne, quoted);
    std::string unquoted(nb, ne);
    if (escaped) {  // "" inside a quoted name is one quote
      std::string once;
      for (std::size_t k = 0; k < unquoted.size(); ++k) {
        once += unquoted[k];
        if (unquoted[k] == '"' && k + 1 < unquoted.size() && unquoted[k + 1] == '"') { ++k; }
      }
      unquoted = std::move(once);
    }
    if (!quoted) { join_decimal_annotation(unquoted, f, e); }
    nb = unquoted.data();
    ne = nb + unquoted.size();
    csv_column c;
    auto const colon = std::string_view(nb, static_cast<std::size_t>(ne - nb)).rfind(':');
    if (colon != std::string_view::npos) {
      auto const* tb = nb + colon + 1;
      auto const* te = ne;
      ne = nb + colon;
      trim(nb, ne);
      trim(tb, te);
      std::string_view const type_name(tb, static_cast<std::size_t>(te - tb));
      auto const why = detail::parse_type_annotation(type_name, c.type, c.decimal);
      if (!why.empty()) { fail("column '" + std::string(nb, ne) + "' " + why); }
      c.annotated = true;
    }
    c.name.assign(nb, ne);
    if (c.name.empty()) {
      fail("column " + std::to_string(cols.size() + 1) + " has an empty name");
    }
    cols.push_back(std::move(c));
    if (f == e) { break; }
    p = f + 1;
  }
  for (auto const& c : cols) {
    if (!seen.insert(c.name).second) { fail("duplicate column name '" + c.name + "'"); }
  }
  return cols;
}

/// Chunks the parallel parse cuts `len` bytes into.
std::size_t chunk_target(std::size_t len) {
  auto const min_bytes = std::max<std::size_t>(1, min_chunk_bytes.load(std::memory_order_relaxed));
  int const threads = std::max(1, omp_get_max_threads());
  return std::clamp<std::size_t>(len / min_bytes, 1,
                                 static_cast<std::size_t>(threads) * chunks_per_thread);
}

/// Cuts the rows [d0, d1) (no line end at d1[-1]) into chunks at line starts for the parallel
/// parse: every chunk holds whole lines, however many target sizes one line spans.
std::vector<char const*> chunk_bounds(char const* d0, char const* d1) {
  std::vector<char const*> bounds{d0};
  if (d0 == d1) { return bounds; }
  auto const len = static_cast<std::size_t>(d1 - d0);
  auto const target = chunk_target(len);
  for (std::size_t k = 1; k < target; ++k) {
    auto const* at = d0 + len / target * k;
    if (at <= bounds.back()) { continue; }  // inside the line the last chunk ends with
    auto const* next = after_line_end(find_line_end(at, d1), d1);
    if (next == d1) { break; }  // in the last line
    bounds.push_back(next);
  }
  bounds.push_back(d1);
  return bounds;
}

/// Chunks of whole records of a file with quoted fields, found by one pass that follows the
/// quotes: bounds[k] starts chunk k, which holds rows[k] records from line lines[k] on.
struct record_layout {
  std::vector<char const*> bounds;
  std::vector<size_type> rows;
  std::vector<size_type> lines;
};

record_layout quoted_record_layout(char const* d0, char const* d1, fs::path const& file) {
  record_layout out;
  out.bounds.push_back(d0);
  out.lines.push_back(2);
  if (d0 == d1) {
    out.bounds.push_back(d1);
    out.rows.push_back(0);
    return out;
  }
  auto const step = static_cast<std::size_t>(d1 - d0) / chunk_target(static_cast<std::size_t>(d1 - d0)) + 1;
  size_type line = 2, rows = 0, quote_line = 0;
  quote_state q;
  for (auto const* p = d0; p != d1; ++p) {
    bool const was_quoted = q.in_quotes;
    bool const record_end = q.step(p, d1);
    if (!was_quoted && q.in_quotes) { quote_line = line; }
    auto const c = *p;
    if (c != '\n' && c != '\r') { continue; }
    if (c == '\r' && p + 1 != d1 && p[1] == '\n') { ++p; }
    ++line;
    if (!record_end) { continue; }
    ++rows;
    if (static_cast<std::size_t>(p + 1 - out.bounds.back()) >= step && p + 1 != d1) {
      out.rows.push_back(rows);
      out.bounds.push_back(p + 1);
      out.lines.push_back(line);
      rows = 0;
    }
  }
  if (q.in_quotes) {
    throw input_error("cannot read CSV " + quoted(file) + ": line " + std::to_string(quote_line) +
                      ": a quoted field has no closing quote before the end of the file");
  }
  out.rows.push_back(rows + 1);  // the last record has no line end
  out.bounds.push_back(d1);
  return out;
}

named_table read_csv_columns(fs::path const& file, std::vector<std::string> const* wanted,
                             csv_options const& options) {
  scoped_range const range("joinery::io::read_csv");
  // One read of the whole file: parsing then never waits on I/O and can split freely.
  auto f = detail::open_for_reading(file, "CSV");
  std::error_code ec;
  auto const bytes = static_cast<std::size_t>(fs::file_size(file, ec));
  if (ec) { throw input_error("cannot read CSV " + quoted(file) + ": " + ec.message()); }
  auto buf = std::make_unique_for_overwrite<char[]>(bytes + 1);
  detail::read_exactly(f.get(), buf.get(), bytes, file, "CSV");
  f.close();
  buf[bytes] = '\0';  // count_line_ends looks one byte past a chunk

  char const* const begin = buf.get();
  char const* const end = begin + bytes;
  char const* p = begin;
  if (bytes >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0) { p += 3; }  // a UTF-8 BOM
  if (p == end) {
    throw input_error("cannot read CSV " + quoted(file) + ": the file is empty (no header row)");
  }
  auto const* header_end = find_line_end(p, std::min(end, p + max_header_line_bytes + 1));
  if (static_cast<std::size_t>(header_end - p) > max_header_line_bytes) {
    throw input_error("cannot read CSV " + quoted(file) +
                      ": line 1 (header): no line end in its first 1 MiB; a header row is "
                      "shorter, so this is not a CSV file or its lines end in something other "
                      "than \\n, \\r\\n or \\r");
  }
  auto cols = parse_header(file, p, header_end);

  // The columns to read, in the order asked for; the others are only counted.
  std::vector<std::size_t> picks;
  if (wanted == nullptr) {
    for (std::size_t j = 0; j < cols.size(); ++j) { picks.push_back(j); }
  } else {
    std::vector<std::string> names;
    for (auto const& c : cols) { names.push_back(c.name); }
    picks = detail::pick_columns(names, *wanted, "CSV " + quoted(file));
  }

  // The rows: every line is one; the line end of the last row and empty lines after it end the
  // data rather than adding rows.
  char const* const d0 = after_line_end(header_end, end);
  char const* d1 = end;
  while (d1 != d0 && (d1[-1] == '\n' || d1[-1] == '\r')) { --d1; }
  // Without quotes every line is a record: chunks cut anywhere and line ends counted in
  // parallel. With quotes one pass follows them (a quoted line break is not a record's end).
  bool const quoted_fields = d0 != d1 && std::memchr(d0, '"', static_cast<std::size_t>(d1 - d0)) != nullptr;
  std::vector<char const*> bounds;
  std::vector<size_type> chunk_rows{0};
  std::vector<size_type> chunk_lines;
  if (quoted_fields) {
    auto layout = quoted_record_layout(d0, d1, file);
    bounds = std::move(layout.bounds);
    for (auto n : layout.rows) { chunk_rows.push_back(chunk_rows.back() + n); }
    chunk_lines = std::move(layout.lines);
  } else {
    bounds = chunk_bounds(d0, d1);
    auto const n = bounds.size() - 1;
    chunk_rows.assign(n + 1, 0);
#pragma omp parallel for schedule(static, 1)
    for (std::size_t k = 0; k < n; ++k) {
      // Every chunk but the last ends after a line end; the last line has none.
      chunk_rows[k + 1] = count_line_ends(bounds[k], bounds[k + 1]) + (k + 1 == n ? 1 : 0);
    }
    for (std::size_t k = 0; k < n; ++k) { chunk_rows[k + 1] += chunk_rows[k]; }
    for (std::size_t k = 0; k < n; ++k) { chunk_lines.push_back(chunk_rows[k] + 2); }
  }
  auto const nchunks = bounds.size() - 1;
  size_type const rows = chunk_rows[nchunks];

  std::vector<column> out;
  out.reserve(picks.size());
  for (auto const j : picks) {
    cols[j].read = true;
    if (is_string(cols[j].type)) {
      out.emplace_back();  // made from the chunks' values after the parse
      continue;
    }
    out.emplace_back(cols[j].type, rows);
    if (is_decimal(cols[j].type)) { out.back().set_type(cols[j].type, cols[j].decimal); }
    cols[j].data = out.back().data();
  }

  csv_parser const parser(file, cols, quoted_fields, options.null_literal);
  std::vector<chunk_result> results(nchunks);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t k = 0; k < nchunks; ++k) {
    parser.parse_chunk(bounds[k], bounds[k + 1], chunk_rows[k], chunk_rows[k + 1] - chunk_rows[k],
                       chunk_lines[k], results[k]);
  }
  buf.reset();
  // Chunks are in file order, so the first failed chunk has the first error.
  for (auto const& r : results) {
    if (r.error_row >= 0) { throw input_error(r.error); }
  }

  named_table t;
  for (std::size_t k = 0; k < picks.size(); ++k) {
    auto const j = picks[k];
    auto& c = cols[j];
    size_type nulls = 0;
    size_type big = -1;
    size_type negative = -1;
    for (auto const& r : results) {
      nulls += static_cast<size_type>(r.nulls[j].size());
      if (big < 0) { big = r.first_big[j]; }
      if (negative < 0) { negative = r.first_negative[j]; }
    }
    if (big >= 0 && negative >= 0) {
      throw input_error("cannot read CSV " + quoted(file) + ": column '" + c.name +
                        "' mixes negative values (line " + std::to_string(negative) +
                        ") with values above the int64 range (line " + std::to_string(big) +
                        "); no 64-bit type holds both");
    }
    if (is_string(c.type)) {
      std::vector<detail::string_chunk*> chunks;
      for (auto& r : results) { chunks.push_back(&r.strings[j]); }
      out[k] = detail::join_string_chunks(chunks, rows, c.type == type_id::large_string);
    }
    if (big >= 0) {
      column wide(type_id::uint64, rows);
      std::memcpy(wide.data(), out[k].data(),
                  static_cast<std::size_t>(rows) * sizeof(std::uint64_t));
      out[k] = std::move(wide);
    }
    if (nulls > 0) {
      auto* mask = out[k].make_nullable();
      for (auto const& r : results) {
        for (auto const row : r.nulls[j]) {
          mask[row >> 3] &= static_cast<std::uint8_t>(~(1u << (row & 7)));
        }
      }
      out[k].set_null_count(nulls);
    }
    t.names.push_back(std::move(c.name));
  }
  t.data = table(std::move(out));
  return t;
}

}  // namespace

namespace detail {

std::size_t set_csv_min_chunk_bytes(std::size_t bytes) {
  return min_chunk_bytes.exchange(bytes == 0 ? default_min_chunk_bytes : bytes);
}

}  // namespace detail

named_table read_csv(fs::path const& file) { return read_csv_columns(file, nullptr, csv_options{}); }

named_table read_csv(fs::path const& file, std::vector<std::string> const& columns) {
  return read_csv_columns(file, &columns, csv_options{});
}

named_table read_csv(fs::path const& file, csv_options const& options) {
  return read_csv_columns(file, nullptr, options);
}

named_table read_csv(fs::path const& file, std::vector<std::string> const& columns,
                     csv_options const& options) {
  return read_csv_columns(file, &columns, options);
}

}  // namespace joinery::io
