// Dispatch between the formats, named_table, and the file helpers both formats share.
#include "io/io_detail.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <random>
#include <set>
#include <system_error>

#include <unistd.h>

namespace joinery::io {

namespace fs = std::filesystem;

size_type named_table::column_index(std::string_view name) const {
  auto const it = std::find(names.begin(), names.end(), name);
  if (it != names.end()) { return static_cast<size_type>(it - names.begin()); }
  throw input_error(detail::no_column_message(name, names));
}

named_table read_table(fs::path const& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) { return read_npy_dir(path); }
  return read_csv(path);
}

named_table read_table(fs::path const& path, std::vector<std::string> const& columns) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) { return read_npy_dir(path, columns); }
  return read_csv(path, columns);
}

named_table read_table(fs::path const& path, csv_options const& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) { return read_npy_dir(path); }
  return read_csv(path, options);
}

named_table read_table(fs::path const& path, std::vector<std::string> const& columns,
                       csv_options const& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) { return read_npy_dir(path, columns); }
  return read_csv(path, columns, options);
}

namespace detail {

std::string no_column_message(std::string_view name, std::vector<std::string> const& names) {
  std::string list;
  for (auto const& n : names) { list += (list.empty() ? "" : ", ") + n; }
  return "no column '" + std::string(name) + "'; columns are: " +
         (list.empty() ? std::string("(none)") : list);
}

std::vector<std::size_t> pick_columns(std::vector<std::string> const& have,
                                      std::vector<std::string> const& wanted,
                                      std::string_view what) {
  if (wanted.empty()) {
    throw logic_error("reading " + std::string(what) + ": no columns named to read");
  }
  std::vector<std::size_t> picks;
  for (auto const& name : wanted) {
    auto const it = std::find(have.begin(), have.end(), name);
    if (it == have.end()) {
      throw input_error("cannot read " + std::string(what) + ": " +
                        no_column_message(name, have));
    }
    auto const j = static_cast<std::size_t>(it - have.begin());
    if (std::find(picks.begin(), picks.end(), j) == picks.end()) { picks.push_back(j); }
  }
  return picks;
}

}  // namespace detail

void write_table(fs::path const& path, std::vector<std::string> const& names,
                 table_view const& t, existing_output if_exists) {
  if (output_format_of(path) == output_format::csv) {
    write_csv(path, names, t, if_exists);
  } else {
    write_npy_dir(path, names, t, if_exists);
  }
}

namespace detail {

std::string quoted(fs::path const& p) {
  // Appends rather than operator+ chains, which trip a GCC 12 -Wrestrict false positive.
  std::string out(1, '\'');
  out += p.string();
  out += '\'';
  return out;
}

file_handle open_for_reading(fs::path const& p, std::string_view what) {
  std::error_code ec;
  auto const st = fs::status(p, ec);
  if (!fs::exists(st)) {
    throw input_error("cannot read " + std::string(what) + " " + quoted(p) +
                      ": no such file");
  }
  if (fs::is_directory(st)) {
    throw input_error("cannot read " + std::string(what) + " " + quoted(p) +
                      ": it is a directory");
  }
  file_handle f(p, "rb");
  if (!f) {
    throw input_error("cannot open " + std::string(what) + " " + quoted(p) + ": " +
                      std::strerror(errno));
  }
  return f;
}

void read_exactly(std::FILE* f, void* dst, std::size_t bytes, fs::path const& p,
                  std::string_view what) {
  auto* out = static_cast<char*>(dst);
  constexpr std::size_t step = std::size_t{1} << 30;  // partial reads are allowed; loop
  while (bytes > 0) {
    auto const n = std::fread(out, 1, std::min(bytes, step), f);
    if (n == 0) {
      throw input_error("cannot read " + std::string(what) + " " + quoted(p) + ": " +
                        (std::ferror(f) ? std::strerror(errno) : "unexpected end of file"));
    }
    out += n;
    bytes -= n;
  }
}

void write_all(std::FILE* f, void const* src, std::size_t bytes, fs::path const& p) {
  if (bytes == 0) { return; }
  if (std::fwrite(src, 1, bytes, f) != bytes) {
    throw input_error("cannot write " + quoted(p) + ": " + std::strerror(errno));
  }
}

void close_written(file_handle& f, fs::path const& p) {
  if (std::fflush(f.get()) != 0 || std::ferror(f.get()) != 0) {
    throw input_error("cannot write " + quoted(p) + ": " + std::strerror(errno));
  }
  if (!f.close()) { throw input_error("cannot close " + quoted(p) + ": " + std::strerror(errno)); }
}

fs::path normalized_target(fs::path const& target) {
  std::error_code ec;
  auto p = fs::absolute(target, ec);
  if (ec) { throw input_error("cannot resolve the path " + quoted(target) + ": " + ec.message()); }
  p = p.lexically_normal();
  if (!p.has_filename()) { p = p.parent_path(); }
  auto const name = p.filename().string();
  if (name.empty() || name == "." || name == "..") {
    throw logic_error("cannot write to " + quoted(target) + ": it names no file");
  }
  return p;
}

fs::path sibling_name(fs::path const& target, std::string_view tag) {
  // pid + counter + random bits: unique across processes and threads without a lock file.
  static std::atomic<unsigned> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, ".%ld.%u.%08llx", static_cast<long>(::getpid()),
                counter.fetch_add(1), static_cast<unsigned long long>(rng() & 0xffffffffu));
  std::string name(1, '.');
  name += target.filename().string();
  name += '.';
  name += tag;
  name += suffix;
  return target.parent_path() / name;
}

temp_guard::~temp_guard() {
  if (armed_) {
    std::error_code ec;  // best effort: we are already reporting an error
    fs::remove_all(path_, ec);
  }
}

void check_for_writing(std::vector<std::string> const& names, table_view const& t,
                       std::string_view format, std::string_view forbidden) {
  if (static_cast<size_type>(names.size()) != t.num_columns()) {
    throw logic_error("writing " + std::string(format) + ": " + std::to_string(names.size()) +
                      " names for " + std::to_string(t.num_columns()) + " columns");
  }
  if (t.num_columns() == 0) {
    throw logic_error("writing " + std::string(format) + ": the table has no columns");
  }
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto const& n = names[i];
    if (n.empty()) {
      throw logic_error("writing " + std::string(format) + ": column " + std::to_string(i) +
                        " has an empty name");
    }
    if (n.find_first_of(forbidden) != std::string::npos || n.find('\0') != std::string::npos) {
      throw logic_error("writing " + std::string(format) + ": column name '" + n +
                        "' contains a character the format cannot carry");
    }
    if (!seen.insert(n).second) {
      throw logic_error("writing " + std::string(format) + ": duplicate column name '" + n + "'");
    }
    if (!host_accessible(t.column(static_cast<size_type>(i)).space())) {
      throw logic_error("writing " + std::string(format) + ": column '" + n +
                        "' is in device memory; copy it to the host first");
    }
  }
}

}  // namespace detail
}  // namespace joinery::io
