// Seeded mutation test of the CSV reader: valid texts (typed headers, nulls, blanks, every line
// end, negative numbers, uint64 above int64, floats, RFC 4180 quotes), randomly damaged, are read with random
// thread counts and chunk sizes and random column choices. The reader must either refuse them
// with a joinery exception naming the right line or return exactly what a plain sequential
// reference parser (below) reads: no crash, no hang, no row silently lost. See io_fuzz_util.hpp.
#include "io_fuzz_util.hpp"
#include "io_test_util.hpp"
#include "support/threads.hpp"

#include "io/io_detail.hpp"

#include <joinery/io.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using joinery::size_type;
using joinery::type_id;
namespace io = joinery::io;
using namespace joinery::test::io_util;
using namespace joinery::test::fuzz;


/// Sets the CSV reader's chunk size and the thread count for one case.
class parse_setup {
 public:
  parse_setup(std::size_t chunk_bytes, int threads)
      : saved_(io::detail::set_csv_min_chunk_bytes(chunk_bytes)), threads_(threads) {}
  ~parse_setup() { io::detail::set_csv_min_chunk_bytes(saved_); }
  parse_setup(parse_setup const&) = delete;
  parse_setup& operator=(parse_setup const&) = delete;

 private:
  std::size_t saved_;
  joinery::test::scoped_threads threads_;
};

// ------------------------------------------------------------------------ the CSV reference

/// One expected value: null, any value (a float at the edge of its range: the reader may also
/// refuse it) or these bits.
struct cell {
  bool null = false;
  bool any = false;
  std::uint64_t bits = 0;  // the value, as the column's type, in the low bytes
};

struct ref_column {
  std::string name;
  type_id type = type_id::int64;
  std::vector<cell> cells;
};

/// What the reference reads: an error (with text the message must hold), or columns.
struct ref_table {
  bool error = false;
  bool error_maybe = false;  // a value at the edge of a float range: an error is fine too
  std::string error_has;     // e.g. "line 7:"
  std::string error_after_picks;  // a quote left open: refused once the columns are picked
  std::vector<ref_column> columns;
};

constexpr std::array<std::string_view, 10> type_names{
  "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"};

std::string trimmed(std::string const& s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) { ++b; }
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) { --e; }
  return s.substr(b, e - b);
}

/// One field of a record as RFC 4180 reads it: quoted when it starts (after blanks) with a quote,
/// then up to the closing quote ("" inside is a quote), blanks and the comma.
struct ref_field {
  std::string text;  // trimmed, without the quotes (and "" still doubled)
  bool quoted = false;
  bool escaped = false;  // "" inside
};

/// The fields of one record; nullopt when text follows a closing quote or a quote is left open.
std::optional<std::vector<ref_field>> fields_of(std::string const& record) {
  std::vector<ref_field> out;
  std::size_t i = 0;
  for (;;) {
    ref_field f;
    std::size_t q = i;
    while (q < record.size() && (record[q] == ' ' || record[q] == '\t')) { ++q; }
    if (q < record.size() && record[q] == '"') {
      f.quoted = true;
      std::size_t k = q + 1;
      bool closed = false;
      for (; k < record.size(); ++k) {
        if (record[k] != '"') { continue; }
        if (k + 1 < record.size() && record[k + 1] == '"') {
          f.escaped = true;
          ++k;
          continue;
        }
        closed = true;
        break;
      }
      if (!closed) { return std::nullopt; }
      f.text = trimmed(record.substr(q + 1, k - q - 1));
      i = k + 1;
      while (i < record.size() && (record[i] == ' ' || record[i] == '\t')) { ++i; }
      if (i < record.size() && record[i] != ',') { return std::nullopt; }
    } else {
      auto const c = record.find(',', i);
      auto const e = c == std::string::npos ? record.size() : c;
      f.text = trimmed(record.substr(i, e - i));
      i = e;
    }
    out.push_back(std::move(f));
    if (i >= record.size()) { break; }
    ++i;  // the comma
  }
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// An integer field: sign, then digits only. Sets `negative` and the magnitude (capped).
bool integer_text(std::string const& f, bool& negative, unsigned __int128& magnitude) {
  std::size_t i = 0;
  negative = false;
  if (i < f.size() && (f[i] == '+' || f[i] == '-')) {
    negative = f[i] == '-';
    ++i;
  }
  if (i == f.size()) { return false; }
  magnitude = 0;
  auto const cap = static_cast<unsigned __int128>(std::numeric_limits<std::uint64_t>::max()) + 2;
  for (; i < f.size(); ++i) {
    if (!is_digit(f[i])) { return false; }
    magnitude = std::min(cap, magnitude * 10 + static_cast<unsigned>(f[i] - '0'));
  }
  return true;
}

bool equals_nocase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) { return false; }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) { return false; }
  }
  return true;
}

/// A float field as from_chars reads it (after one optional sign): decimal with an optional
/// exponent, inf, infinity, nan or nan(chars), any case.
bool float_text(std::string const& f) {
  std::size_t i = 0;
  if (i < f.size() && (f[i] == '+' || f[i] == '-')) { ++i; }
  std::string_view const body(f.data() + i, f.size() - i);
  if (equals_nocase(body, "inf") || equals_nocase(body, "infinity") ||
      equals_nocase(body, "nan")) {
    return true;
  }
  if (body.size() >= 5 && equals_nocase(body.substr(0, 4), "nan(") && body.back() == ')') {
    for (char c : body.substr(4, body.size() - 5)) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') { return false; }
    }
    return true;
  }
  std::size_t digits = 0;
  while (i < f.size() && is_digit(f[i])) { ++i, ++digits; }
  if (i < f.size() && f[i] == '.') {
    ++i;
    while (i < f.size() && is_digit(f[i])) { ++i, ++digits; }
  }
  if (digits == 0) { return false; }
  if (i < f.size() && (f[i] == 'e' || f[i] == 'E')) {
    ++i;
    if (i < f.size() && (f[i] == '+' || f[i] == '-')) { ++i; }
    std::size_t exp_digits = 0;
    while (i < f.size() && is_digit(f[i])) { ++i, ++exp_digits; }
    if (exp_digits == 0) { return false; }
  }
  return i == f.size();
}

/// The expected value of a non-empty, trimmed field; false when the field is refused.
bool reference_value(std::string const& f, type_id type, bool annotated, cell& c, bool& negative,
                     bool& big) {
  negative = false;
  big = false;
  if (type == type_id::float32 || type == type_id::float64) {
    if (!float_text(f)) { return false; }
    // strtod reads what from_chars reads, but takes a leading '+' before a sign: refused above.
    errno = 0;
    if (type == type_id::float32) {
      float const v = std::strtof(f.c_str(), nullptr);
      c.any = errno == ERANGE || std::fpclassify(v) == FP_SUBNORMAL;
      std::memcpy(&c.bits, &v, sizeof v);
    } else {
      double const v = std::strtod(f.c_str(), nullptr);
      c.any = errno == ERANGE || std::fpclassify(v) == FP_SUBNORMAL;
      std::memcpy(&c.bits, &v, sizeof v);
    }
    return true;
  }
  bool neg = false;
  unsigned __int128 m = 0;
  if (!integer_text(f, neg, m)) { return false; }
  if (!annotated) {
    // int64, or uint64 above its range; the caller checks that no column mixes the two.
    if (neg) {
      if (m > (static_cast<unsigned __int128>(1) << 63)) { return false; }
      c.bits = static_cast<std::uint64_t>(-static_cast<__int128>(m));
      negative = m != 0;
      return true;
    }
    if (m > std::numeric_limits<std::uint64_t>::max()) { return false; }
    c.bits = static_cast<std::uint64_t>(m);
    big = m > static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max());
    return true;
  }
  bool ok = false;
  joinery::dispatch_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      using lim = std::numeric_limits<T>;
      __int128 const v = neg ? -static_cast<__int128>(m) : static_cast<__int128>(m);
      ok = m <= std::numeric_limits<std::uint64_t>::max() && v >= lim::min() && v <= lim::max();
      if (ok) {
        T const t = static_cast<T>(v);
        std::memcpy(&c.bits, &t, sizeof t);
      }
    }
  });
  return ok;
}

/// Reads `text` as the documented format, one obvious step at a time.
ref_table reference_csv(std::string text, std::vector<std::string> const* wanted) {
  ref_table r;
  auto const refuse = [&](std::string has) {
    r.error = true;
    r.error_has = std::move(has);
    return r;
  };
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) { text.erase(0, 3); }
  if (text.empty()) { return refuse("empty"); }
  // The header is the first line; "\r\n" is one line end, so are a lone '\r' and '\n'.
  auto const header_end = std::min(text.find('\r'), text.find('\n'));
  std::string const header_line = text.substr(0, header_end);
  if (header_line.size() > (std::size_t{1} << 20)) { return refuse("line 1"); }
  std::string data;
  if (header_end != std::string::npos) {
    auto d = header_end + 1;
    if (text[header_end] == '\r' && d < text.size() && text[d] == '\n') { ++d; }
    data = text.substr(d);
  }
  // Line ends at the end of the data end it (trailing blank lines are dropped).
  while (!data.empty() && (data.back() == '\n' || data.back() == '\r')) { data.pop_back(); }
  // Records: every line, except that a line end inside a quoted field is part of the record. A
  // quote opens a quoted field only at the start of a field (after blanks); inside one, "" is a
  // quote and a lone quote closes it; anywhere else a quote is text.
  std::vector<std::string> records;
  std::vector<std::size_t> first_line;
  if (!data.empty()) {
    records.emplace_back();
    first_line.push_back(2);
    std::size_t line = 2, quote_line = 0;
    bool in_quotes = false;
    bool field_start = true;
    for (std::size_t i = 0; i < data.size(); ++i) {
      char const c = data[i];
      if (c == '\r' || c == '\n') {
        std::string const end =
          c == '\r' && i + 1 < data.size() && data[i + 1] == '\n' ? "\r\n" : std::string(1, c);
        i += end.size() - 1;
        ++line;
        if (in_quotes) {
          records.back() += end;
        } else {
          records.emplace_back();
          first_line.push_back(line);
          field_start = true;
        }
        continue;
      }
      records.back() += c;
      if (in_quotes) {
        if (c == '"') {
          if (i + 1 < data.size() && data[i + 1] == '"') {
            records.back() += '"';
            ++i;
          } else {
            in_quotes = false;
          }
        }
      } else if (c == '"' && field_start) {
        in_quotes = true;
        field_start = false;
        quote_line = line;
      } else if (c == ',') {
        field_start = true;
      } else if (c != ' ' && c != '\t') {
        field_start = false;
      }
    }
    if (in_quotes) { r.error_after_picks = "line " + std::to_string(quote_line) + ":"; }
  }

  struct header_column {
    std::string name;
    type_id type = type_id::int64;
    bool annotated = false;
  };
  std::vector<header_column> header;
  auto const header_fields = fields_of(header_line);
  if (!header_fields) { return refuse("line 1"); }
  for (auto const& hf : *header_fields) {
    std::string field;
    for (std::size_t k = 0; k < hf.text.size(); ++k) {  // "" in a quoted name is one quote
      field += hf.text[k];
      if (hf.escaped && hf.text[k] == '"' && k + 1 < hf.text.size() && hf.text[k + 1] == '"') { ++k; }
    }
    header_column h;
    auto const colon = field.rfind(':');
    h.name = trimmed(field.substr(0, colon));
    if (colon != std::string::npos) {
      auto const t = trimmed(field.substr(colon + 1));
      auto const it = std::find(type_names.begin(), type_names.end(), t);
      if (it == type_names.end()) { return refuse("line 1"); }
      h.type = static_cast<type_id>(it - type_names.begin());
      h.annotated = true;
    }
    if (h.name.empty()) { return refuse("line 1"); }
    header.push_back(h);
  }
  for (std::size_t a = 0; a < header.size(); ++a) {
    for (std::size_t b = 0; b < a; ++b) {
      if (header[a].name == header[b].name) { return refuse("line 1"); }
    }
  }
  std::vector<std::size_t> picks;
  for (std::size_t j = 0; j < header.size(); ++j) { picks.push_back(j); }
  if (wanted != nullptr) {
    picks.clear();
    for (auto const& w : *wanted) {
      std::size_t j = 0;
      while (j < header.size() && header[j].name != w) { ++j; }
      if (j == header.size()) { return refuse("no column '" + w + "'"); }
      if (std::find(picks.begin(), picks.end(), j) == picks.end()) { picks.push_back(j); }
    }
  }

  std::vector<ref_column> cols(picks.size());
  std::vector<bool> any_negative(picks.size(), false);
  std::vector<bool> any_big(picks.size(), false);
  for (std::size_t k = 0; k < picks.size(); ++k) {
    cols[k].name = header[picks[k]].name;
    cols[k].type = header[picks[k]].type;
  }
  if (!r.error_after_picks.empty()) { return refuse(r.error_after_picks); }
  for (std::size_t l = 0; l < records.size(); ++l) {
    auto const where = "line " + std::to_string(first_line[l]) + ":";
    auto const fields = fields_of(records[l]);
    if (!fields || fields->size() != header.size()) { return refuse(where); }
    for (std::size_t k = 0; k < picks.size(); ++k) {
      auto const& h = header[picks[k]];
      auto const& field = (*fields)[picks[k]];
      if (field.escaped) { return refuse(where); }
      auto const& f = field.text;
      cell c;
      if (f.empty()) {
        c.null = true;
      } else {
        bool negative = false;
        bool big = false;
        if (!reference_value(f, h.type, h.annotated, c, negative, big)) { return refuse(where); }
        r.error_maybe = r.error_maybe || c.any;
        any_negative[k] = any_negative[k] || negative;
        any_big[k] = any_big[k] || big;
      }
      cols[k].cells.push_back(c);
    }
  }
  for (std::size_t k = 0; k < picks.size(); ++k) {
    if (any_negative[k] && any_big[k]) { return refuse("mixes"); }
    if (any_big[k]) { cols[k].type = type_id::uint64; }
  }
  r.columns = std::move(cols);
  return r;
}

// ---------------------------------------------------------------------- generating CSV texts

/// `big`: an unannotated column that also holds values above the int64 range (as uint64).
std::string integer_field(rng_t& rng, type_id type, bool annotated, bool big) {
  std::string v;
  if (!annotated && big) {
    v = chance(rng, 50) ? std::to_string(rng() | (std::uint64_t{1} << 63))
                        : std::to_string(rng() % 1000);
  } else if (!annotated) {
    switch (below(rng, 5)) {
      case 0: v = std::to_string(static_cast<std::int64_t>(rng())); break;
      case 1: v = "-9223372036854775808"; break;
      case 2: v = "9223372036854775807"; break;
      default: v = std::to_string(static_cast<std::int64_t>(rng() % 2001) - 1000); break;
    }
  } else {
    joinery::dispatch_type(type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>) {
        using lim = std::numeric_limits<T>;
        T t{};
        switch (below(rng, 4)) {
          case 0: t = lim::min(); break;
          case 1: t = lim::max(); break;
          default: {
            auto const bits = rng();
            std::memcpy(&t, &bits, sizeof t);
          }
        }
        v = std::to_string(t);
        if (chance(rng, 5) && v[0] != '-') { v = "+" + v; }
        if (chance(rng, 5)) { v.insert(v[0] == '-' || v[0] == '+' ? 1 : 0, "000"); }
        if (chance(rng, 3) && t == 0) { v = "-0"; }
      }
    });
  }
  return v;
}

std::string float_field(rng_t& rng, type_id type) {
  static char const* const special[] = {"inf",  "-inf", "nan",   "1e308", "-1e-300", "1.",
                                        ".5",   "+1.5", "1E3",   "0",     "-0.0",    "3.4e38",
                                        "1e-5", "NaN",  "-Infinity", "2.5e-3", "1e39", "0.1"};
  if (chance(rng, 30)) { return special[below(rng, std::size(special))]; }
  char buf[64];
  std::uniform_real_distribution<double> real(-1e6, 1e6);
  double const v = real(rng) * std::pow(10.0, static_cast<int>(below(rng, 40)) - 20);
  auto const r = type == type_id::float32
                   ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v))
                   : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

/// A valid CSV text: typed and untyped columns, nulls, blanks, every line end, a BOM at times,
/// quoted names and values, and at times a column of quoted text (commas, "" and line breaks
/// inside) that reading it refuses.
std::string random_csv(rng_t& rng, std::vector<std::string>& names) {
  std::size_t const ncols = chance(rng, 25) ? 1 : 1 + below(rng, 5);
  std::vector<type_id> types;
  std::vector<bool> annotated;
  std::vector<bool> big;
  std::string text = chance(rng, 5) ? "\xEF\xBB\xBF" : "";
  int const ends = static_cast<int>(below(rng, 4));  // \n, \r\n, \r, or mixed
  auto const line_end = [&] {
    int const e = ends == 3 ? static_cast<int>(below(rng, 3)) : ends;
    return e == 0 ? "\n" : e == 1 ? "\r\n" : "\r";
  };
  names.clear();
  // A column of text: never a number, so only reading around it succeeds.
  auto const text_column = chance(rng, 30) ? below(rng, ncols) : ncols;
  static char const* const texts[] = {"\"hello, world\"", "\"say \"\"hi\"\"\"", "\"two\nlines\"",
                                      "\"\"", "\" x \"", "\"a\r\nb,c\""};
  for (std::size_t j = 0; j < ncols; ++j) {
    names.push_back(std::string(1, static_cast<char>('a' + below(rng, 3))) + std::to_string(j));
    annotated.push_back(chance(rng, 60));
    big.push_back(chance(rng, 20));
    types.push_back(annotated.back() ? static_cast<type_id>(below(rng, 10)) : type_id::int64);
    if (j > 0) { text += ','; }
    if (chance(rng, 10) && !annotated.back()) {
      text += "\"" + names.back() + "\"";
      continue;
    }
    text += chance(rng, 10) ? " " + names.back() + " " : names.back();
    if (annotated.back()) {
      text += chance(rng, 10) ? " : " : ":";
      text += type_names[static_cast<std::size_t>(types.back())];
    }
  }
  std::size_t const rows = chance(rng, 10) ? below(rng, 3000) : below(rng, 30);
  for (std::size_t i = 0; i < rows; ++i) {
    text += line_end();
    for (std::size_t j = 0; j < ncols; ++j) {
      if (j > 0) { text += ','; }
      if (j == text_column) {
        text += texts[below(rng, std::size(texts))];
        continue;
      }
      if (chance(rng, 10)) { continue; }  // null
      auto const t = types[j];
      auto v = t == type_id::float32 || t == type_id::float64
                 ? float_field(rng, t)
                 : integer_field(rng, t, annotated[j], big[j]);
      if (chance(rng, 5)) { v = (chance(rng, 50) ? " " : "\t") + v + " "; }
      if (chance(rng, 5)) { v = (chance(rng, 50) ? "\"" : " \"") + v + "\""; }
      text += v;
    }
  }
  if (chance(rng, 80)) { text += line_end(); }
  if (chance(rng, 10)) {
    for (std::size_t k = 1 + below(rng, 3); k > 0; --k) { text += line_end(); }
  }
  return text;
}

/// Damages `s` in one of many ways.
void mutate_csv(rng_t& rng, std::string& s) {
  static constexpr std::string_view interesting = ",\n\r-+0123456789 \t:.e\"";
  static char const* const huge[] = {"18446744073709551616", "9223372036854775808",
                                     "-9223372036854775809", "1e400", "1e-400", "4e-320",
                                     "-0", "+-1", "99999999999999999999999999"};
  auto const pos = [&] { return below(rng, s.size() + 1); };
  switch (below(rng, 11)) {
    case 0:
      if (!s.empty()) { s[below(rng, s.size())] = static_cast<char>(rng()); }
      break;
    case 1:
      if (!s.empty()) { s[below(rng, s.size())] = interesting[below(rng, interesting.size())]; }
      break;
    case 2: s.insert(pos(), 1, interesting[below(rng, interesting.size())]); break;
    case 3:
      if (!s.empty()) { s.erase(below(rng, s.size()), 1 + below(rng, 4)); }
      break;
    case 4: s.resize(below(rng, s.size() + 1)); break;
    case 5: {  // the header
      auto const end = std::min(s.size(), s.find_first_of("\r\n"));
      auto const at = below(rng, end + 1);
      static char const* const bits[] = {",", ":", ":int8", ":uint64", ":float32", ":int128",
                                         "a0", " ", ""};
      s.insert(at, bits[below(rng, std::size(bits))]);
      if (chance(rng, 30) && end > 0) { s.erase(below(rng, end), 1); }
      break;
    }
    case 6: {  // a line twice
      auto const a = s.find_first_of("\r\n", below(rng, s.size() + 1));
      if (a == std::string::npos) { break; }
      auto const b = s.find_first_of("\r\n", a + 1);
      s.insert(a, s.substr(a, (b == std::string::npos ? s.size() : b) - a));
      break;
    }
    case 7: {  // a huge value or run
      if (chance(rng, 50)) {
        s.insert(pos(), huge[below(rng, std::size(huge))]);
      } else {
        static constexpr std::string_view runs = "09 \t,\n\r";
        s.insert(pos(), 1 + below(rng, 100'000), runs[below(rng, runs.size())]);
      }
      break;
    }
    case 8: {  // a line end dropped
      auto const a = s.find_first_of("\r\n", below(rng, s.size() + 1));
      if (a != std::string::npos) { s.erase(a, 1); }
      break;
    }
    case 9: s.insert(pos(), chance(rng, 50) ? "\r\n" : "\n\n"); break;
    default: {  // one line end turned into another
      auto const a = s.find_first_of("\r\n", below(rng, s.size() + 1));
      if (a != std::string::npos) { s[a] = s[a] == '\r' ? '\n' : '\r'; }
      break;
    }
  }
  if (s.size() > max_input_bytes) { s.resize(max_input_bytes); }
}

/// Compares what the reader returned with the reference; explains the first difference.
std::string difference(io::named_table const& got, ref_table const& want) {
  if (want.error) { return "read a table where the reference refuses (" + want.error_has + ")"; }
  if (got.names.size() != want.columns.size() ||
      got.data.num_columns() != static_cast<size_type>(want.columns.size())) {
    return "read " + std::to_string(got.names.size()) + " columns, the reference " +
           std::to_string(want.columns.size());
  }
  for (std::size_t k = 0; k < want.columns.size(); ++k) {
    auto const& w = want.columns[k];
    auto const c = got.data.column(static_cast<size_type>(k)).view();
    auto const where = "column " + std::to_string(k) + " '" + w.name + "'";
    if (got.names[k] != w.name) { return where + ": named '" + got.names[k] + "'"; }
    if (c.type() != w.type) {
      return where + ": type " + std::string(joinery::to_string(c.type())) + ", the reference " +
             std::string(joinery::to_string(w.type));
    }
    if (c.size() != static_cast<size_type>(w.cells.size())) {
      return where + ": " + std::to_string(c.size()) + " rows, the reference " +
             std::to_string(w.cells.size());
    }
    size_type nulls = 0;
    auto const width = joinery::size_of(c.type());
    for (size_type i = 0; i < c.size(); ++i) {
      auto const& e = w.cells[static_cast<std::size_t>(i)];
      nulls += e.null ? 1 : 0;
      if (c.is_valid(i) == e.null) { return where + " row " + std::to_string(i) + ": validity"; }
      if (e.null || e.any) { continue; }
      std::uint64_t bits = 0;
      std::memcpy(&bits, static_cast<char const*>(c.data()) + i * width, width);
      bool same = bits == e.bits;
      if (!same && c.type() == type_id::float64) {
        double a = 0;
        double b = 0;
        std::memcpy(&a, &bits, sizeof a);
        std::memcpy(&b, &e.bits, sizeof b);
        same = std::isnan(a) && std::isnan(b);
      } else if (!same && c.type() == type_id::float32) {
        float a = 0;
        float b = 0;
        std::memcpy(&a, &bits, sizeof a);
        std::memcpy(&b, &e.bits, sizeof b);
        same = std::isnan(a) && std::isnan(b);
      }
      if (!same) { return where + " row " + std::to_string(i) + ": value"; }
    }
    if (c.null_count() != nulls) { return where + ": null count"; }
  }
  return {};
}

TEST(IoFuzz, CsvReaderMatchesReference) {
  temp_dir dir;
  auto const file = dir / "f.csv";
  std::uint64_t tables = 0;
  std::uint64_t refusals = 0;
  auto const cases = run_cases([&](rng_t& rng, std::uint64_t seed) {
    std::vector<std::string> names;
    auto text = random_csv(rng, names);
    for (std::size_t m = chance(rng, 40) ? 0 : 1 + below(rng, 3); m > 0; --m) {
      mutate_csv(rng, text);
    }
    std::optional<std::vector<std::string>> wanted;
    if (chance(rng, 30)) {
      wanted.emplace();
      for (std::size_t k = 1 + below(rng, 3); k > 0; --k) {
        wanted->push_back(chance(rng, 95) ? names[below(rng, names.size())] : "zz");
      }
    }
    static constexpr std::size_t chunk_sizes[] = {1, 2, 3, 5, 8, 13, 64, 1000, 0};
    static constexpr int thread_counts[] = {1, 2, 3, 4, 8};
    parse_setup const setup(chunk_sizes[below(rng, std::size(chunk_sizes))],
                            thread_counts[below(rng, std::size(thread_counts))]);
    write_bytes(file, text);
    auto const want = reference_csv(text, wanted ? &*wanted : nullptr);
    auto const context = [&] {
      return "seed " + std::to_string(seed) + ", input \"" + escaped(text) + "\"";
    };
    try {
      auto const got = wanted ? io::read_csv(file, *wanted) : io::read_csv(file);
      ++tables;
      auto const diff = difference(got, want);
      if (!diff.empty()) { ADD_FAILURE() << diff << "; " << context(); }
    } catch (joinery::input_error const& e) {
      ++refusals;
      std::string const msg = e.what();
      if (!want.error && !want.error_maybe) {
        ADD_FAILURE() << "refused what the reference reads: " << msg << "; " << context();
      } else if (want.error && !want.error_maybe && msg.find(want.error_has) == std::string::npos) {
        ADD_FAILURE() << "the message lacks '" << want.error_has << "': " << msg << "; "
                      << context();
      }
    } catch (std::exception const& e) {
      ADD_FAILURE() << "unexpected exception " << e.what() << "; " << context();
    }
  });
  std::cout << "[ fuzz     ] " << cases << " CSV cases: " << tables << " read, " << refusals
            << " refused\n";
  if (cases >= 100) {  // both outcomes come up (not when replaying a single case)
    EXPECT_GT(tables, 0u);
    EXPECT_GT(refusals, 0u);
  }
}

}  // namespace
