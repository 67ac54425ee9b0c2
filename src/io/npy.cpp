// NumPy .npy files (format 1.0, 2.0, 3.0) holding one little-endian 1-D array each, and
// directories of them. bool8 is NumPy's bool (|b1); dates and timestamps its datetime64 (<M8[D],
// <M8[s] ... <M8[ns]), whose NaT is refused (a .npy column has no nulls); date32 is 4 bytes a
// value and datetime64[D] 8, so dates are narrowed on reading and widened on writing.
#include "io/io_detail.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <memory>
#include <system_error>

#include <sys/mman.h>

namespace joinery::io {

namespace fs = std::filesystem;
using detail::quoted;

static_assert(std::endian::native == std::endian::little,
              ".npy data is read and written as little-endian bytes in place");

namespace {

constexpr char npy_magic[] = "\x93NUMPY";
constexpr std::size_t npy_magic_size = 6;
// np.save never writes headers this long; a bigger length is a corrupt file, not a big array.
constexpr std::uint64_t max_header_bytes = std::uint64_t{1} << 20;
constexpr std::size_t npy_alignment = 64;

struct npy_header {
  type_id type = type_id::int64;
  size_type rows = 0;
  /// Bytes of one value in the file (8 for date32).
  [[nodiscard]] std::size_t item_bytes() const {
    return type == type_id::date32 ? sizeof(std::int64_t) : size_of(type);
  }
};

// NumPy's datetime64 "not a time".
constexpr std::int64_t numpy_nat = std::numeric_limits<std::int64_t>::min();
// Dates widened for writing this many at a time.
constexpr std::size_t widen_block_values = std::size_t{1} << 16;

[[noreturn]] void bad_npy(fs::path const& p, std::string const& why) {
  throw input_error("cannot read .npy file " + quoted(p) + ": " + why);
}

/// The descr codes joinery reads and writes; 1-byte types use '|' as NumPy does.
std::string_view descr_of(type_id t) {
  switch (t) {
    case type_id::int8: return "|i1";
    case type_id::int16: return "<i2";
    case type_id::int32: return "<i4";
    case type_id::int64: return "<i8";
    case type_id::uint8: return "|u1";
    case type_id::uint16: return "<u2";
    case type_id::uint32: return "<u4";
    case type_id::uint64: return "<u8";
    case type_id::float32: return "<f4";
    case type_id::float64: return "<f8";
    case type_id::bool8: return "|b1";
    case type_id::date32: return "<M8[D]";
    case type_id::timestamp_s: return "<M8[s]";
    case type_id::timestamp_ms: return "<M8[ms]";
    case type_id::timestamp_us: return "<M8[us]";
    case type_id::timestamp_ns: return "<M8[ns]";
    case type_id::string: case type_id::large_string: case type_id::decimal64:
    case type_id::decimal128: break;
  }
  JOINERY_FAIL(is_string(t) || is_decimal(t)
                 ? ".npy holds no " + std::string(to_string(t)) + " columns; write CSV"
                 : std::string("unknown type id"));
}

type_id type_of_descr(std::string_view d, fs::path const& p) {
  // Python objects ('O', pickled), fixed-width unicode ('U') and bytes ('S', 'a'), any order.
  auto const kind = d.find_first_not_of("<>|=");
  if (kind != std::string_view::npos &&
      std::string_view("OUSa").find(d[kind]) != std::string_view::npos) {
    bad_npy(p, "dtype '" + std::string(d) + "': strings in .npy are not supported; use CSV with a "
               "name:string header or Arrow through Python" +
               (d[kind] == 'O' ? std::string(" (and for Decimal objects a "
                                             "name:decimal128(precision,scale) header)")
                               : std::string()));
  }
  if (d.size() >= 2 && d.front() == '>' && d != ">i1" && d != ">u1" && d != ">b1") {
    bad_npy(p, "dtype '" + std::string(d) + "' is big-endian; only little-endian is supported");
  }
  // One-byte types have no byte order: NumPy writes '|', other writers '<' or '>'.
  for (auto t : {type_id::int8, type_id::uint8, type_id::bool8}) {
    auto const code = descr_of(t).substr(1);
    if (d.size() == 3 && d.substr(1) == code && (d[0] == '|' || d[0] == '<' || d[0] == '>')) {
      return t;
    }
  }
  for (auto t : {type_id::int16, type_id::int32, type_id::int64, type_id::uint16, type_id::uint32,
                 type_id::uint64, type_id::float32, type_id::float64, type_id::date32,
                 type_id::timestamp_s, type_id::timestamp_ms, type_id::timestamp_us,
                 type_id::timestamp_ns}) {
    if (d == descr_of(t)) { return t; }
  }
  bad_npy(p, "unsupported dtype '" + std::string(d) +
               "'; supported: <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8 <f4 <f8 |b1 (and |i1 |u1), "
               "datetime64 as <M8[D] <M8[s] <M8[ms] <M8[us] <M8[ns]");
}

/// Parses the header dict, a Python literal such as
/// {'descr': '<i8', 'fortran_order': False, 'shape': (10,), }
class header_parser {
 public:
  header_parser(std::string_view text, fs::path const& p) : s_(text), path_(p) {}

  npy_header parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortran;
    std::optional<std::vector<std::uint64_t>> shape;
    skip_ws();
    expect('{');
    for (;;) {
      skip_ws();
      if (peek() == '}') { break; }
      auto const key = string_literal();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (descr) { fail("'descr' appears twice"); }
        if (peek() != '\'' && peek() != '"') {
          bad_npy(path_, "unsupported dtype (structured or nested dtypes are not supported)");
        }
        descr = string_literal();
      } else if (key == "fortran_order") {
        if (fortran) { fail("'fortran_order' appears twice"); }
        fortran = boolean();
      } else if (key == "shape") {
        if (shape) { fail("'shape' appears twice"); }
        shape = tuple();
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') { fail("expected ',' or '}' after the value of '" + key + "'"); }
    }
    ++pos_;  // '}'
    skip_ws();
    if (pos_ != s_.size()) { fail("unexpected text after the dict"); }
    if (!descr || !fortran || !shape) {
      fail("the dict needs the keys 'descr', 'fortran_order' and 'shape'");
    }

    npy_header h;
    h.type = type_of_descr(*descr, path_);
    if (*fortran) {
      bad_npy(path_, "fortran_order True is not supported (only 1-D C-order arrays are)");
    }
    if (shape->size() != 1) {
      bad_npy(path_, "the array has " + std::to_string(shape->size()) +
                       " dimensions; only 1-D arrays (shape (n,)) are columns");
    }
    auto const limit = static_cast<std::uint64_t>(std::numeric_limits<size_type>::max()) /
                       h.item_bytes();
    if (shape->front() > limit) { fail("the shape is too large"); }
    h.rows = static_cast<size_type>(shape->front());
    return h;
  }

 private:
  [[noreturn]] void fail(std::string const& why) const {
    bad_npy(path_, "malformed header (" + why + ")");
  }
  [[nodiscard]] char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  void expect(char c) {
    if (peek() != c) { fail(std::string("expected '") + c + "'"); }
    ++pos_;
  }
  std::string string_literal() {
    char const q = peek();
    if (q != '\'' && q != '"') { fail("expected a quoted string"); }
    auto const end = s_.find(q, pos_ + 1);
    if (end == std::string_view::npos) { fail("unterminated string"); }
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("'fortran_order' must be True or False");
  }
  std::uint64_t integer() {
    std::uint64_t v = 0;
    auto const* b = s_.data() + pos_;
    auto const* e = s_.data() + s_.size();
    auto const r = std::from_chars(b, e, v);
    if (r.ec != std::errc{}) { fail("a dimension is not a non-negative integer"); }
    pos_ = static_cast<std::size_t>(r.ptr - s_.data());
    if (peek() == 'L') { ++pos_; }  // Python 2 longs, as old NumPy wrote them
    return v;
  }
  std::vector<std::uint64_t> tuple() {
    std::vector<std::uint64_t> dims;
    expect('(');
    for (;;) {
      skip_ws();
      if (peek() == ')') { break; }
      dims.push_back(integer());
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') { fail("expected ',' or ')' in the shape"); }
    }
    ++pos_;
    return dims;
  }

  std::string_view s_;
  fs::path const& path_;
  std::size_t pos_ = 0;
};

/// Reads and checks the preamble and header of an open file, leaving it at the first data byte;
/// also checks that the file holds exactly the data the header announces.
npy_header read_header(std::FILE* f, fs::path const& p) {
  std::error_code ec;
  auto const file_bytes = static_cast<std::uint64_t>(fs::file_size(p, ec));
  if (ec) { bad_npy(p, ec.message()); }
  unsigned char pre[12];
  if (file_bytes < 10) { bad_npy(p, "too short to be a .npy file"); }
  detail::read_exactly(f, pre, 10, p, ".npy file");
  if (std::memcmp(pre, npy_magic, npy_magic_size) != 0) {
    bad_npy(p, "not a .npy file (bad magic string)");
  }
  unsigned const major = pre[6];
  unsigned const minor = pre[7];
  if (major < 1 || major > 3 || minor != 0) {
    bad_npy(p, "unsupported format version " + std::to_string(major) + "." +
                 std::to_string(minor) + "; supported: 1.0, 2.0, 3.0");
  }
  std::uint64_t header_bytes = pre[8] | (std::uint64_t{pre[9]} << 8);
  std::uint64_t offset = 10;
  if (major >= 2) {
    if (file_bytes < 12) { bad_npy(p, "truncated header"); }
    detail::read_exactly(f, pre + 10, 2, p, ".npy file");
    header_bytes = pre[8] | (std::uint64_t{pre[9]} << 8) | (std::uint64_t{pre[10]} << 16) |
                   (std::uint64_t{pre[11]} << 24);
    offset = 12;
  }
  if (header_bytes > max_header_bytes) {
    bad_npy(p, "header length " + std::to_string(header_bytes) + " is implausible");
  }
  if (offset + header_bytes > file_bytes) { bad_npy(p, "truncated header"); }
  std::string text(header_bytes, '\0');
  detail::read_exactly(f, text.data(), text.size(), p, ".npy file");
  offset += header_bytes;

  auto const h = header_parser(text, p).parse();
  auto const data_bytes = static_cast<std::uint64_t>(h.rows) * h.item_bytes();
  auto const present = file_bytes - offset;
  if (present < data_bytes) {
    bad_npy(p, "truncated data: the header announces " + std::to_string(h.rows) + " values (" +
                 std::to_string(data_bytes) + " bytes) but the file holds " +
                 std::to_string(present) + " bytes of data");
  }
  if (present > data_bytes) {
    bad_npy(p, std::to_string(present - data_bytes) +
                 " unexpected bytes after the data the header announces");
  }
  return h;
}

/// Data of at least this many bytes is mapped instead of read: no copy out of the page cache,
/// and pages are read as they are first touched (by the operation, or a GPU's staged upload).
constexpr std::uint64_t map_min_bytes = std::uint64_t{1} << 20;

/// The memory of one private mapping of a file as a resource: its one allocation is the data
/// inside the mapping; freeing it unmaps the file and ends the resource. MAP_PRIVATE keeps
/// writes to the column out of the file.
class mapped_data final : public memory_resource {
 public:
  mapped_data(void* base, std::size_t length, std::size_t offset)
      : base_(base), length_(length), offset_(offset) {}
  mapped_data(mapped_data const&) = delete;
  mapped_data& operator=(mapped_data const&) = delete;
  ~mapped_data() override { (void)::munmap(base_, length_); }
  [[nodiscard]] memory_space space() const noexcept override { return memory_space::host; }

 private:
  void* do_allocate(std::size_t, stream_ref) override {
    return static_cast<unsigned char*>(base_) + offset_;
  }
  void do_deallocate(void*, std::size_t, stream_ref) noexcept override { delete this; }

  void* base_;
  std::size_t length_;
  std::size_t offset_;
};

/// The file's values as they are (dates as their 8-byte days).
column read_npy_values(std::FILE* f, fs::path const& p, npy_header const& h) {
  auto const type = h.type == type_id::date32 ? type_id::int64 : h.type;
  auto const bytes = static_cast<std::uint64_t>(h.rows) * size_of(type);
  auto const at = std::ftell(f);
  if (bytes >= map_min_bytes && at >= 0 && static_cast<std::uint64_t>(at) % size_of(type) == 0) {
    auto const length = static_cast<std::size_t>(at) + static_cast<std::size_t>(bytes);
    void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, ::fileno(f), 0);
    if (base != MAP_FAILED) {
      auto owner = std::make_unique<mapped_data>(base, length, static_cast<std::size_t>(at));
      column c(type, h.rows, owner.get());
      (void)owner.release();  // the column's buffer frees it
      return c;
    }
  }
  column c(type, h.rows);
  detail::read_exactly(f, c.data(), static_cast<std::size_t>(bytes), p, ".npy file");
  return c;
}

[[noreturn]] void refuse_nat(fs::path const& p, size_type row) {
  bad_npy(p, "row " + std::to_string(row) + " is NaT (not a time), which a column read from "
             ".npy cannot hold (.npy has no nulls); replace or drop NaT values, or write CSV, "
             "where an empty field is a null");
}

/// Checks what the types stored as integers allow: bool bytes 0 or 1, datetimes without NaT;
/// dates are narrowed to date32's 4 bytes.
column checked_values(column c, fs::path const& p, npy_header const& h) {
  auto const n = static_cast<std::size_t>(h.rows);
  if (h.type == type_id::bool8) {
    auto const* v = static_cast<std::uint8_t const*>(c.data());
    auto const* bad = std::find_if(v, v + n, [](std::uint8_t b) { return b > 1; });
    if (bad != v + n) {
      bad_npy(p, "dtype '" + std::string(descr_of(h.type)) + "' (bool): row " +
                   std::to_string(bad - v) + " holds the byte " + std::to_string(*bad) +
                   "; bools are 0 or 1");
    }
  } else if (is_timestamp(h.type)) {
    auto const* v = static_cast<std::int64_t const*>(c.data());
    auto const* nat = std::find(v, v + n, numpy_nat);
    if (nat != v + n) { refuse_nat(p, nat - v); }
  } else if (h.type == type_id::date32) {
    auto const* v = static_cast<std::int64_t const*>(c.data());
    column days(type_id::date32, h.rows);
    auto* out = static_cast<std::int32_t*>(days.data());
    for (std::size_t i = 0; i < n; ++i) {
      if (v[i] == numpy_nat) { refuse_nat(p, static_cast<size_type>(i)); }
      if (v[i] < std::numeric_limits<std::int32_t>::min() ||
          v[i] > std::numeric_limits<std::int32_t>::max()) {
        bad_npy(p, "row " + std::to_string(i) + " is day " + std::to_string(v[i]) +
                     " from 1970-01-01, out of date32's range (32-bit days)");
      }
      out[i] = static_cast<std::int32_t>(v[i]);
    }
    return days;
  }
  return c;
}

column read_npy_data(std::FILE* f, fs::path const& p, npy_header const& h) {
  return checked_values(read_npy_values(f, p, h), p, h);
}

void check_npy_column(column_view const& c, std::string_view what) {
  detail::check_npy_type(c.type(), what);
  if (!host_accessible(c.space())) {
    throw logic_error("writing " + std::string(what) +
                      ": the column is in device memory; copy it to the host first");
  }
  if (c.null_count() > 0) {
    throw logic_error("writing " + std::string(what) + ": the column has " +
                      std::to_string(c.null_count()) + " nulls and .npy cannot represent them");
  }
}

}  // namespace

namespace detail {

void check_npy_type(type_id type, std::string_view what) {
  if (is_string(type) || is_decimal(type)) {
    throw logic_error("writing " + std::string(what) + ": it is a " +
                      std::string(to_string(type)) + " column and .npy holds no " +
                      (is_string(type) ? "strings" : "decimals") +
                      "; write CSV (a .csv output path) instead");
  }
}

std::string npy_header(type_id type, size_type rows, std::size_t min_bytes) {
  std::string dict = "{'descr': '" + std::string(descr_of(type)) +
                     "', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ",), }";
  // Version 1.0 has a 16-bit header length; fall back to 2.0 as NumPy does (never for 1-D).
  bool const v1 = dict.size() + 1 + 10 + npy_alignment <= 0xffff;
  std::size_t const preamble = v1 ? 10 : 12;
  std::size_t const total = std::max(min_bytes, (preamble + dict.size() + 1 + npy_alignment - 1) /
                                                  npy_alignment * npy_alignment);
  dict.append(total - preamble - dict.size() - 1, ' ');
  dict.push_back('\n');
  auto const header_bytes = static_cast<std::uint32_t>(dict.size());

  std::string out(npy_magic, npy_magic_size);
  out.push_back(static_cast<char>(v1 ? 1 : 2));
  out.push_back('\0');
  for (std::size_t i = 0; i < (v1 ? 2u : 4u); ++i) {
    out.push_back(static_cast<char>((header_bytes >> (8 * i)) & 0xffu));
  }
  out += dict;
  return out;
}

void write_npy_file(fs::path const& p, column_view const& c) {
  auto const out = npy_header(c.type(), c.size());
  file_handle f(p, "wbx");
  if (!f) { throw input_error("cannot create " + quoted(p) + ": " + std::strerror(errno)); }
  write_all(f.get(), out.data(), out.size(), p);
  write_npy_data(f.get(), c, p);
  close_written(f, p);
}

void write_npy_data(std::FILE* f, column_view const& c, fs::path const& p) {
  auto const n = static_cast<std::size_t>(c.size());
  if (c.type() != type_id::date32) {
    write_all(f, c.data(), n * size_of(c.type()), p);
    return;
  }
  auto const* days = static_cast<std::int32_t const*>(c.data());
  std::vector<std::int64_t> wide(std::min(n, widen_block_values));
  for (std::size_t at = 0; at < n; at += wide.size()) {
    auto const m = std::min(wide.size(), n - at);
    std::copy(days + at, days + at + m, wide.begin());
    write_all(f, wide.data(), m * sizeof(std::int64_t), p);
  }
}

}  // namespace detail

column read_npy(fs::path const& file) {
  scoped_range const range("joinery::io::read_npy");
  auto f = detail::open_for_reading(file, ".npy file");
  auto const h = read_header(f.get(), file);
  return read_npy_data(f.get(), file, h);
}

void write_npy(fs::path const& file, column_view const& c) {
  scoped_range const range("joinery::io::write_npy");
  check_npy_column(c, ".npy file " + quoted(file));
  auto const target = detail::normalized_target(file);
  std::error_code ec;
  if (fs::is_directory(target, ec)) {
    throw input_error("cannot write .npy file " + quoted(file) + ": it is a directory");
  }
  detail::temp_guard tmp(detail::sibling_name(target, "tmp"));
  try {
    detail::write_npy_file(tmp.path(), c);
  } catch (input_error const& e) {
    throw input_error("cannot write .npy file " + quoted(file) + ": " + e.what());
  }
  fs::rename(tmp.path(), target, ec);
  if (ec) { throw input_error("cannot write " + quoted(file) + ": " + ec.message()); }
  tmp.release();
}

namespace {

/// The `<name>.npy` files of `dir`, sorted by name; throws input_error when there are none.
std::vector<fs::path> npy_files(fs::path const& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw input_error("cannot read the .npy directory " + quoted(dir) + ": " +
                      (fs::exists(dir, ec) ? "not a directory" : "no such directory"));
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto const& p = it->path();
    std::error_code ec2;
    if (p.extension() == ".npy" && !p.stem().empty() && it->is_regular_file(ec2)) {
      files.push_back(p);
    }
  }
  if (ec) { throw input_error("cannot list " + quoted(dir) + ": " + ec.message()); }
  if (files.empty()) { throw input_error("the directory " + quoted(dir) + " has no .npy files"); }
  std::sort(files.begin(), files.end(),
            [](fs::path const& a, fs::path const& b) { return a.stem() < b.stem(); });
  return files;
}

/// Reads `files` (of `dir`) as the columns of one table, named by their stems.
named_table read_npy_files(fs::path const& dir, std::vector<fs::path> const& files) {
  // Headers first: a length mismatch is reported before any data is read.
  std::vector<npy_header> headers;
  for (auto const& p : files) {
    auto f = detail::open_for_reading(p, ".npy file");
    headers.push_back(read_header(f.get(), p));
    if (headers.back().rows != headers.front().rows) {
      throw input_error("the .npy files of " + quoted(dir) + " differ in length: " +
                        quoted(files.front().filename()) + " has " +
                        std::to_string(headers.front().rows) + " rows but " +
                        quoted(p.filename()) + " has " + std::to_string(headers.back().rows));
    }
  }
  named_table out;
  std::vector<column> cols;
  for (std::size_t i = 0; i < files.size(); ++i) {
    out.names.push_back(files[i].stem().string());
    auto f = detail::open_for_reading(files[i], ".npy file");
    auto const h = read_header(f.get(), files[i]);
    if (h.rows != headers[i].rows || h.type != headers[i].type) {
      throw input_error(quoted(files[i]) + " changed while it was being read");
    }
    cols.push_back(read_npy_data(f.get(), files[i], h));
  }
  out.data = table(std::move(cols));
  return out;
}

}  // namespace

named_table read_npy_dir(fs::path const& dir) {
  scoped_range const range("joinery::io::read_npy_dir");
  return read_npy_files(dir, npy_files(dir));
}

named_table read_npy_dir(fs::path const& dir, std::vector<std::string> const& columns) {
  scoped_range const range("joinery::io::read_npy_dir");
  auto const all = npy_files(dir);
  std::vector<std::string> names;
  for (auto const& p : all) { names.push_back(p.stem().string()); }
  std::vector<fs::path> files;
  for (auto const i : detail::pick_columns(names, columns, "the .npy directory " + quoted(dir))) {
    files.push_back(all[i]);
  }
  return read_npy_files(dir, files);
}

void write_npy_dir(fs::path const& dir, std::vector<std::string> const& names,
                   table_view const& t, existing_output if_exists) {
  scoped_range const range("joinery::io::write_npy_dir");
  detail::check_for_writing(names, t, ".npy directory " + quoted(dir), "/\\");
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "." || names[i] == "..") {
      throw logic_error("writing .npy directory " + quoted(dir) + ": '" + names[i] +
                        "' cannot be a file name");
    }
    check_npy_column(t.column(static_cast<size_type>(i)), "column '" + names[i] + "' to " +
                                                               quoted(dir));
  }
  auto const target = detail::normalized_target(dir);
  std::error_code ec;
  bool const replace = detail::check_output_target(target, "the .npy directory " + quoted(dir),
                                                   if_exists, output_format::npy_directory);

  detail::temp_guard tmp(detail::sibling_name(target, "tmp"));
  if (!fs::create_directory(tmp.path(), ec) || ec) {
    throw input_error("cannot write the .npy directory " + quoted(dir) +
                      ": cannot create a temporary directory " + quoted(tmp.path()) + ": " +
                      (ec ? ec.message() : "it exists"));
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    detail::write_npy_file(tmp.path() / (names[i] + ".npy"), t.column(static_cast<size_type>(i)));
  }

  detail::move_directory_into_place(tmp, target, replace, quoted(dir));
}

namespace detail {

void move_directory_into_place(temp_guard& tmp, fs::path const& target, bool replace,
                               std::string const& dir_name) {
  std::error_code ec;
  auto const dir = dir_name;
  if (!replace) {
    fs::rename(tmp.path(), target, ec);
    if (ec) { throw input_error("cannot write " + dir + ": " + ec.message()); }
    tmp.release();
    return;
  }
  // Two renames: the old directory moves aside, the new one takes its name, the old one goes.
  auto const backup = detail::sibling_name(target, "old");
  fs::rename(target, backup, ec);
  if (ec) { throw input_error("cannot replace " + dir + ": " + ec.message()); }
  fs::rename(tmp.path(), target, ec);
  if (ec) {
    std::error_code ignored;
    fs::rename(backup, target, ignored);  // put the old one back
    throw input_error("cannot replace " + dir + ": " + ec.message());
  }
  tmp.release();
  fs::remove_all(backup, ec);
  if (ec) {
    throw input_error("wrote " + dir + " but cannot remove the old copy " +
                      quoted(backup) + ": " + ec.message());
  }
}

}  // namespace detail

}  // namespace joinery::io
