// String columns of CSV: values taken from fields as the parse chunks meet them, one column made
// of the chunks' buffers by a parallel copy, and the quoting the writer needs so that every value
// reads back as itself.
#include "io/csv_strings.hpp"

#include <joinery/error.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <limits>

namespace joinery::io::detail {

namespace {

constexpr std::int64_t int32_offset_limit = std::numeric_limits<std::int32_t>::max();
std::atomic<std::int64_t> max_string_chars{int32_offset_limit};

bool is_blank(char c) { return c == ' ' || c == '\t'; }

/// Row ends of one chunk written as the column's offsets from `first` on, shifted by `base`.
template <class Offset>
void write_offsets(Offset* offsets, size_type first, std::vector<std::int64_t> const& ends,
                   std::int64_t base) {
  for (std::size_t i = 0; i < ends.size(); ++i) {
    offsets[first + static_cast<size_type>(i) + 1] = static_cast<Offset>(base + ends[i]);
  }
}

char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

/// Spellings of a null that CSV files use (DuckDB's, pandas' and Arrow's defaults among them),
/// compared without case.
bool looks_like_null_marker(std::string_view v) {
  constexpr std::array<std::string_view, 7> markers = {"null", "na", "n/a", "nan", "none", "\\n",
                                                       "#n/a"};
  if (v.size() > 4) { return false; }
  for (auto const m : markers) {
    if (m.size() == v.size() &&
        std::equal(v.begin(), v.end(), m.begin(),
                   [](char a, char b) { return ascii_lower(a) == b; })) {
      return true;
    }
  }
  return false;
}

}  // namespace

void append_string_field(string_chunk& out, char const* b, char const* e, bool quoted,
                         bool escaped) {
  if (quoted) {
    // Blanks around the quotes are padding (the reader found the opening quote past them).
    while (b != e && is_blank(*b)) { ++b; }
    while (e != b && is_blank(e[-1])) { --e; }
    ++b;
    --e;
  }
  if (!escaped) {
    out.chars.append(b, e);
  } else {
    for (auto const* p = b; p != e; ++p) {
      out.chars += *p;
      if (*p == '"') { ++p; }  // the second quote of a ""
    }
  }
  out.ends.push_back(static_cast<std::int64_t>(out.chars.size()));
}

void append_null_string(string_chunk& out) {
  out.ends.push_back(static_cast<std::int64_t>(out.chars.size()));
}

column join_string_chunks(std::vector<string_chunk*> const& chunks, size_type rows, bool large) {
  auto const n = chunks.size();
  std::vector<std::int64_t> bases(n + 1, 0);
  std::vector<size_type> firsts(n + 1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    bases[k + 1] = bases[k] + static_cast<std::int64_t>(chunks[k]->chars.size());
    firsts[k + 1] = firsts[k] + static_cast<size_type>(chunks[k]->ends.size());
  }
  JOINERY_EXPECTS(firsts[n] == rows, "CSV string column: the chunks hold " +
                                       std::to_string(firsts[n]) + " rows, not " +
                                       std::to_string(rows));
  bool const wide = large || bases[n] > max_string_chars.load(std::memory_order_relaxed);
  auto const type = wide ? type_id::large_string : type_id::string;
  auto out = column::strings(type, rows, static_cast<std::size_t>(bases[n]));
  auto* const chars = out.chars();
  void* const offsets = out.data();
  if (wide) {
    static_cast<std::int64_t*>(offsets)[0] = 0;
  } else {
    static_cast<std::int32_t*>(offsets)[0] = 0;
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t k = 0; k < n; ++k) {
    auto& c = *chunks[k];
    if (!c.chars.empty()) { std::memcpy(chars + bases[k], c.chars.data(), c.chars.size()); }
    if (wide) {
      write_offsets(static_cast<std::int64_t*>(offsets), firsts[k], c.ends, bases[k]);
    } else {
      write_offsets(static_cast<std::int32_t*>(offsets), firsts[k], c.ends, bases[k]);
    }
    // The chunk's copy goes now rather than with the parse results: both at once would be
    // twice the column.
    std::string().swap(c.chars);
    std::vector<std::int64_t>().swap(c.ends);
  }
  return out;
}

std::int64_t set_csv_max_string_chars(std::int64_t chars) {
  return max_string_chars.exchange(chars <= 0 ? int32_offset_limit
                                              : std::min(chars, int32_offset_limit));
}

bool csv_needs_quotes(std::string_view v) {
  if (v.empty() || is_blank(v.front()) || is_blank(v.back())) { return true; }
  if (v.find_first_of(",\"\r\n") != std::string_view::npos) { return true; }
  return looks_like_null_marker(v);
}

char* write_csv_string(char* out, std::string_view v) {
  if (!csv_needs_quotes(v)) {
    std::memcpy(out, v.data(), v.size());
    return out + v.size();
  }
  *out++ = '"';
  for (auto const c : v) {
    *out++ = c;
    if (c == '"') { *out++ = '"'; }
  }
  *out++ = '"';
  return out;
}

}  // namespace joinery::io::detail
