#include "cli.hpp"

#include <joinery/error.hpp>
#include <joinery/primitives/checksum.hpp>

#include <charconv>
#include <ostream>
#include <string_view>

namespace joinery::cli {

namespace {

/// Appends a string value as a CSV field: quoted (quotes inside doubled) when it is empty (so
/// that it differs from a null), holds a comma, quote or line break, or starts or ends with a
/// blank; as write_csv does, less its quoting of null markers such as NA.
void append_csv_string(std::string& line, std::string_view v) {
  bool const quote = v.empty() || v.find_first_of(",\"\r\n") != std::string_view::npos ||
                     v.front() == ' ' || v.front() == '\t' || v.back() == ' ' || v.back() == '\t';
  if (!quote) {
    line += v;
    return;
  }
  line += '"';
  for (auto const c : v) {
    line += c;
    if (c == '"') { line += '"'; }
  }
  line += '"';
}

}  // namespace

void output_args::check() const {
  if (given()) {
    io::check_output_path(path, overwrite ? io::existing_output::replace
                                          : io::existing_output::refuse);
  }
}

void output_args::write(std::vector<std::string> const& names, table_view const& t) const {
  io::write_table(path, names, t,
                  overwrite ? io::existing_output::replace : io::existing_output::refuse);
}

void add_output_options(CLI::App* c, output_args& out, bool required, std::string const& alone) {
  auto* o = c->add_option(
    "--output,-o", out.path,
    "result: a CSV file if the name ends in .csv, else a directory of .npy files (one per "
    "column; names ending in another format's extension, e.g. .txt or .parquet, are refused)" +
      alone);
  if (required) { o->required(); }
  c->add_flag("--overwrite", out.overwrite,
              "replace an existing --output: a file, or a directory holding only .npy files "
              "(never another directory); without it an existing path is refused");
}

std::string trim(std::string const& s) {
  auto const b = s.find_first_not_of(" \t");
  if (b == std::string::npos) { return {}; }
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split(std::string const& s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) { return out; }
  std::size_t start = 0;
  while (true) {
    auto const p = s.find(sep, start);
    out.push_back(trim(s.substr(start, p == std::string::npos ? std::string::npos : p - start)));
    if (p == std::string::npos) { break; }
    start = p + 1;
  }
  return out;
}

std::int64_t parse_size(std::string const& s, char const* what) {
  auto const fail = [&] {
    throw input_error(std::string("bad ") + what + " '" + s + "': expected a count such as 1000 or 2^20");
  };
  std::int64_t v = 0;
  if (auto const caret = s.find('^'); caret != std::string::npos) {
    std::int64_t base = 0, exp = 0;
    auto const* b = s.data();
    if (std::from_chars(b, b + caret, base).ptr != b + caret ||
        std::from_chars(b + caret + 1, b + s.size(), exp).ptr != b + s.size() || exp < 0 || exp > 62 ||
        base < 0) {
      fail();
    }
    v = 1;
    for (std::int64_t i = 0; i < exp; ++i) {
      if (base != 0 && v > INT64_MAX / base) { fail(); }
      v *= base;
    }
    return v;
  }
  if (std::from_chars(s.data(), s.data() + s.size(), v).ptr != s.data() + s.size() || v < 0 ||
      s.empty()) {
    fail();
  }
  return v;
}

std::size_t parse_bytes(std::string const& s, char const* what) {
  static constexpr std::pair<char const*, std::uint64_t> units[] = {
    {"KiB", std::uint64_t{1} << 10}, {"MiB", std::uint64_t{1} << 20}, {"GiB", std::uint64_t{1} << 30},
    {"TiB", std::uint64_t{1} << 40}, {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000},
    {"TB", 1000000000000}, {"B", 1}};
  std::string number = s;
  std::uint64_t unit = 1;
  for (auto const& [name, scale] : units) {
    auto const n = std::string_view(name).size();
    if (s.size() > n && s.compare(s.size() - n, n, name) == 0) {
      number = s.substr(0, s.size() - n);
      unit = scale;
      break;
    }
  }
  std::uint64_t v = 0;
  auto const* b = number.data();
  if (number.empty() || std::from_chars(b, b + number.size(), v).ptr != b + number.size() ||
      v == 0 || v > UINT64_MAX / unit) {
    throw input_error(std::string("bad ") + what + " '" + s +
                      "': expected a positive size such as 8GiB, 512MiB, 2GB or 1000000 (bytes)");
  }
  return static_cast<std::size_t>(v * unit);
}

std::vector<int> parse_devices(std::string const& s, char const* what) {
  std::vector<int> out;
  if (s == "all") { return out; }  // the library's default: every GPU present
  for (auto const& item : split(s)) {
    int v = -1;
    auto const* b = item.data();
    if (item.empty() || std::from_chars(b, b + item.size(), v).ptr != b + item.size() || v < 0) {
      throw input_error(std::string("bad ") + what + " '" + s +
                        "': expected GPU ids such as 0,1,2,3 (a GPU may repeat), or all");
    }
    out.push_back(v);
  }
  return out;
}

void print_csv(std::ostream& os, std::vector<std::string> const& names, table_view const& t,
               bool header) {
  if (header) {
    for (std::size_t i = 0; i < names.size(); ++i) { os << (i ? "," : "") << names[i]; }
    os << "\n";
  }
  std::string line;
  char buf[32];
  for (size_type r = 0; r < t.num_rows(); ++r) {
    line.clear();
    for (size_type c = 0; c < t.num_columns(); ++c) {
      if (c) { line += ','; }
      auto const& col = t.column(c);
      if (!col.is_valid(r)) { continue; }
      if (is_string(col.type())) {
        append_csv_string(line, col.string_at(r));
        continue;
      }
      if (is_logical(col.type())) {  // bool, dates, timestamps, decimals: as write_csv has them
        line += io::format_value(col, r);
        continue;
      }
      dispatch_type(col.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto const v = static_cast<T const*>(col.data())[r];
        auto const res = std::to_chars(buf, buf + sizeof(buf), v);
        line.append(buf, res.ptr);
      });
    }
    line += '\n';
    os << line;
  }
}

std::uint64_t table_checksum(table_view const& t) {
  std::uint64_t sum = 0;
  for (auto const& col : t) {
    if (is_floating(col.type())) { continue; }
    // The library's own checksum: of strings, their hashes; of bool, dates, timestamps and
    // decimals, their stored integers (a decimal128's two 64-bit halves).
    if (is_string(col.type()) || is_logical(col.type())) {
      sum += checksum(col);
      continue;
    }
    dispatch_type(col.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_floating_point_v<T>) {
        auto const* v = static_cast<T const*>(col.data());
        for (size_type r = 0; r < col.size(); ++r) {
          if (!col.is_valid(r)) { continue; }
          if constexpr (std::is_signed_v<T>) {
            sum += static_cast<std::uint64_t>(static_cast<std::int64_t>(v[r]));
          } else {
            sum += static_cast<std::uint64_t>(v[r]);
          }
        }
      }
    });
  }
  return sum;
}

}  // namespace joinery::cli
