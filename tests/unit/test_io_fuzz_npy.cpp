// Seeded mutation test of the .npy reader: valid files (every dtype, versions 1.0/2.0/3.0, NumPy's
// and hand-made header layouts), randomly damaged, alone or in a directory read whole or in part.
// The reader must either refuse them with a joinery exception or return exactly what a plain
// reference reader of the format (below) reads. See io_fuzz_util.hpp.
#include "io_fuzz_util.hpp"
#include "io_test_util.hpp"

#include <joinery/io.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;
using joinery::size_type;
using joinery::type_id;
namespace io = joinery::io;
using namespace joinery::test::io_util;
using namespace joinery::test::fuzz;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// ----------------------------------------------------------------------- the .npy reference

struct npy_want {
  bool ok = false;
  type_id type = type_id::int64;
  std::uint64_t rows = 0;
  std::string data;
};

/// The header dict as the format describes it: a Python dict literal with the keys 'descr',
/// 'fortran_order' and 'shape' (each once), strings in ' or ", a trailing comma allowed.
class dict_reader {
 public:
  explicit dict_reader(std::string_view s) : s_(s) {}

  bool read(std::string& descr, bool& fortran, std::vector<std::uint64_t>& shape) {
    bool has_descr = false;
    bool has_fortran = false;
    bool has_shape = false;
    ws();
    if (!take('{')) { return false; }
    for (;;) {
      ws();
      if (take('}')) { break; }
      std::string key;
      if (!quoted(key)) { return false; }
      ws();
      if (!take(':')) { return false; }
      ws();
      if (key == "descr" && !has_descr) {
        has_descr = quoted(descr);
        if (!has_descr) { return false; }
      } else if (key == "fortran_order" && !has_fortran) {
        if (s_.substr(i_, 4) == "True") {
          fortran = true;
          i_ += 4;
        } else if (s_.substr(i_, 5) == "False") {
          fortran = false;
          i_ += 5;
        } else {
          return false;
        }
        has_fortran = true;
      } else if (key == "shape" && !has_shape) {
        if (!tuple(shape)) { return false; }
        has_shape = true;
      } else {
        return false;  // unknown or repeated
      }
      ws();
      if (take(',')) { continue; }
      if (!take('}')) { return false; }
      break;
    }
    ws();
    return i_ == s_.size() && has_descr && has_fortran && has_shape;
  }

 private:
  void ws() {
    while (i_ < s_.size() && std::strchr(" \t\n\r", s_[i_]) != nullptr && s_[i_] != '\0') { ++i_; }
  }
  bool take(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool quoted(std::string& out) {
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) { return false; }
    auto const end = s_.find(s_[i_], i_ + 1);
    if (end == std::string_view::npos) { return false; }
    out = std::string(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return true;
  }
  bool tuple(std::vector<std::uint64_t>& dims) {
    if (!take('(')) { return false; }
    for (;;) {
      ws();
      if (take(')')) { return true; }
      unsigned __int128 v = 0;
      std::size_t digits = 0;
      while (i_ < s_.size() && is_digit(s_[i_])) {
        v = std::min<unsigned __int128>(v * 10 + static_cast<unsigned>(s_[i_] - '0'),
                                        static_cast<unsigned __int128>(1) << 65);
        ++i_, ++digits;
      }
      if (digits == 0 || v > std::numeric_limits<std::uint64_t>::max()) { return false; }
      dims.push_back(static_cast<std::uint64_t>(v));
      take('L');
      ws();
      if (take(',')) { continue; }
      if (i_ >= s_.size() || s_[i_] != ')') { return false; }
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

npy_want reference_npy(std::string const& b) {
  npy_want w;
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY", 6) != 0) { return w; }
  auto const major = static_cast<unsigned char>(b[6]);
  if (major < 1 || major > 3 || b[7] != 0) { return w; }
  std::size_t const pre = major == 1 ? 10 : 12;
  if (b.size() < pre) { return w; }
  std::uint64_t len = 0;
  for (std::size_t i = 8; i < pre; ++i) {
    len |= std::uint64_t{static_cast<unsigned char>(b[i])} << (8 * (i - 8));
  }
  if (len > (std::uint64_t{1} << 20) || pre + len > b.size()) { return w; }
  std::string descr;
  bool fortran = true;
  std::vector<std::uint64_t> shape;
  if (!dict_reader(std::string_view(b).substr(pre, len)).read(descr, fortran, shape)) { return w; }
  static std::pair<char const*, type_id> const descrs[] = {
    {"|i1", type_id::int8},     {"<i1", type_id::int8},     {">i1", type_id::int8},
    {"|u1", type_id::uint8},    {"<u1", type_id::uint8},    {">u1", type_id::uint8},
    {"<i2", type_id::int16},    {"<i4", type_id::int32},    {"<i8", type_id::int64},
    {"<u2", type_id::uint16},   {"<u4", type_id::uint32},   {"<u8", type_id::uint64},
    {"<f4", type_id::float32},  {"<f8", type_id::float64}};
  auto const it = std::find_if(std::begin(descrs), std::end(descrs),
                               [&](auto const& d) { return descr == d.first; });
  if (it == std::end(descrs) || fortran || shape.size() != 1) { return w; }
  auto const width = joinery::size_of(it->second);
  if (shape[0] > static_cast<std::uint64_t>(std::numeric_limits<size_type>::max()) / width ||
      b.size() - pre - len != shape[0] * width) {
    return w;
  }
  w.ok = true;
  w.type = it->second;
  w.rows = shape[0];
  w.data = b.substr(pre + len);
  return w;
}

// ------------------------------------------------------------------------ generating .npy files

std::string random_npy(rng_t& rng, std::uint64_t rows) {
  static char const* const descrs[] = {"|i1", "<i1", "|u1", ">u1", "<i2", "<i4", "<i8",
                                       "<u2", "<u4", "<u8", "<f4", "<f8"};
  static std::size_t const widths[] = {1, 1, 1, 1, 2, 4, 8, 2, 4, 8, 4, 8};
  auto const d = below(rng, std::size(descrs));
  char const q = chance(rng, 80) ? '\'' : '"';
  auto const str = [&](std::string const& s) { return q + s + q; };
  std::string const sp = chance(rng, 80) ? " " : chance(rng, 50) ? "" : "\t ";
  std::vector<std::string> items{
    str("descr") + ":" + sp + str(descrs[d]), str("fortran_order") + ":" + sp + "False",
    str("shape") + ":" + sp + "(" + std::to_string(rows) + (chance(rng, 10) ? "L" : "") +
      (chance(rng, 70) ? "," : "") + (chance(rng, 20) ? " " : "") + ")"};
  std::shuffle(items.begin(), items.end(), rng);
  std::string dict = "{";
  for (std::size_t i = 0; i < items.size(); ++i) { dict += (i ? "," + sp : "") + items[i]; }
  dict += chance(rng, 70) ? ", }" : "}";
  std::string data(rows * widths[d], '\0');
  for (auto& c : data) { c = static_cast<char>(rng()); }
  int const major = chance(rng, 70) ? 1 : 2 + static_cast<int>(below(rng, 2));
  return npy_bytes(major, dict, data, chance(rng, 85));
}

void mutate_npy(rng_t& rng, std::string& s) {
  auto const head = std::min<std::size_t>(s.size(), 140);
  auto const pos = [&](std::size_t n) { return below(rng, n + 1); };
  switch (below(rng, 9)) {
    case 0:
      if (head > 0) { s[below(rng, head)] = static_cast<char>(rng()); }
      break;
    case 1:
      if (!s.empty()) { s[below(rng, s.size())] = static_cast<char>(rng()); }
      break;
    case 2: s.resize(pos(s.size())); break;
    case 3: {
      static constexpr std::string_view bits = "{}(),:' \"0123456789LTF\n";
      s.insert(pos(head), 1, bits[below(rng, bits.size())]);
      break;
    }
    case 4:
      if (head > 0) { s.erase(below(rng, head), 1 + below(rng, 3)); }
      break;
    case 5:
      if (s.size() > 9) {  // the header length
        auto& c = s[8 + below(rng, 2)];
        c = static_cast<char>(c + (chance(rng, 50) ? 1 : -1));
      }
      break;
    case 6: s.append(1 + below(rng, 16), static_cast<char>(rng())); break;
    case 7: {  // a digit of the shape
      auto const at = s.find("shape");
      auto const dig = at == std::string::npos ? at : s.find_first_of("0123456789", at);
      if (dig != std::string::npos) { s[dig] = static_cast<char>('0' + below(rng, 10)); }
      break;
    }
    default:
      if (s.size() > 7) { s[6 + below(rng, 2)] = static_cast<char>(below(rng, 5)); }
      break;
  }
}

std::string npy_difference(joinery::column const& got, npy_want const& want) {
  if (!want.ok) { return "read a column where the reference refuses"; }
  if (got.type() != want.type) { return "type " + std::string(joinery::to_string(got.type())); }
  if (static_cast<std::uint64_t>(got.size()) != want.rows) {
    return std::to_string(got.size()) + " rows, the reference " + std::to_string(want.rows);
  }
  if (got.view().null_count() != 0) { return "nulls"; }
  if (!want.data.empty() &&
      std::memcmp(got.view().data(), want.data.data(), want.data.size()) != 0) {
    return "values";
  }
  return {};
}

TEST(IoFuzz, NpyReaderMatchesReference) {
  temp_dir dir;
  std::uint64_t tables = 0;
  std::uint64_t refusals = 0;
  auto const cases = run_cases([&](rng_t& rng, std::uint64_t seed) {
    std::uint64_t const rows = chance(rng, 10) ? below(rng, 5000) : below(rng, 40);
    if (chance(rng, 85)) {
      auto bytes = random_npy(rng, rows);
      for (std::size_t m = chance(rng, 30) ? 0 : 1 + below(rng, 3); m > 0; --m) {
        mutate_npy(rng, bytes);
      }
      write_bytes(dir / "x.npy", bytes);
      auto const want = reference_npy(bytes);
      try {
        auto const got = io::read_npy(dir / "x.npy");
        ++tables;
        auto const diff = npy_difference(got, want);
        if (!diff.empty()) {
          ADD_FAILURE() << diff << "; seed " << seed << ", file \"" << escaped(bytes, 200) << "\"";
        }
      } catch (joinery::input_error const& e) {
        ++refusals;
        if (want.ok) {
          ADD_FAILURE() << "refused what the reference reads: " << e.what() << "; seed " << seed
                        << ", file \"" << escaped(bytes, 200) << "\"";
        }
      } catch (std::exception const& e) {
        ADD_FAILURE() << "unexpected exception " << e.what() << "; seed " << seed;
      }
      return;
    }
    // A directory of three columns, one perhaps damaged, read whole or in part.
    auto const d = dir / ("d" + std::to_string(seed));
    fs::create_directory(d);
    std::vector<std::string> const names{"a", "b", "c"};
    std::vector<npy_want> wants;
    for (auto const& n : names) {
      auto bytes = random_npy(rng, chance(rng, 90) ? rows : below(rng, 40));
      if (chance(rng, 40)) { mutate_npy(rng, bytes); }
      write_bytes(d / (n + ".npy"), bytes);
      wants.push_back(reference_npy(bytes));
    }
    std::vector<std::string> wanted;
    for (std::size_t k = below(rng, 4); k > 0; --k) { wanted.push_back(names[below(rng, 3)]); }
    std::vector<std::size_t> picks;
    for (auto const& w : wanted) {
      auto const j = static_cast<std::size_t>(w[0] - 'a');
      if (std::find(picks.begin(), picks.end(), j) == picks.end()) { picks.push_back(j); }
    }
    if (wanted.empty()) { picks = {0, 1, 2}; }
    bool ok = true;
    for (auto const j : picks) {
      ok = ok && wants[j].ok && wants[j].rows == wants[picks[0]].rows;
    }
    try {
      auto const got = wanted.empty() ? io::read_npy_dir(d) : io::read_npy_dir(d, wanted);
      ++tables;
      std::string diff = ok ? "" : "read a table where the reference refuses";
      if (ok && got.names.size() != picks.size()) { diff = "column count"; }
      for (std::size_t k = 0; diff.empty() && k < picks.size(); ++k) {
        if (got.names[k] != names[picks[k]]) { diff = "names"; }
        if (diff.empty()) {
          diff = npy_difference(got.data.column(static_cast<size_type>(k)), wants[picks[k]]);
        }
      }
      if (!diff.empty()) { ADD_FAILURE() << diff << "; directory case, seed " << seed; }
    } catch (joinery::input_error const& e) {
      ++refusals;
      if (ok) {
        ADD_FAILURE() << "refused what the reference reads: " << e.what() << "; seed " << seed;
      }
    } catch (std::exception const& e) {
      ADD_FAILURE() << "unexpected exception " << e.what() << "; seed " << seed;
    }
    fs::remove_all(d);
  });
  std::cout << "[ fuzz     ] " << cases << " .npy cases: " << tables << " read, " << refusals
            << " refused\n";
  if (cases >= 100) {  // both outcomes come up (not when replaying a single case)
    EXPECT_GT(tables, 0u);
    EXPECT_GT(refusals, 0u);
  }
}

}  // namespace
