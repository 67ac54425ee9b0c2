#pragma once
// Helpers of the I/O tests (test_io*.cpp): temporary directories, file bytes, expected errors,
// random columns and column comparison, hand-made .npy files.
#include <joinery/io.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace joinery::test::io_util {

namespace fs = std::filesystem;
using joinery::column;
using joinery::column_view;
using joinery::size_type;
using joinery::type_id;

/// Column j of `t` as int64 values, NULLs as `null_as` (the column must be int64).
inline std::vector<std::int64_t> int64_values(joinery::io::named_table const& t, size_type j,
                                              std::int64_t null_as) {
  auto const c = t.data.column(j).view();  // not t.view(): that builds every column's view
  EXPECT_EQ(c.type(), type_id::int64);
  std::vector<std::int64_t> out;
  for (size_type i = 0; i < c.size(); ++i) {
    out.push_back(c.is_valid(i) ? c.data_as<std::int64_t>()[i] : null_as);
  }
  return out;
}

inline constexpr type_id integer_types[] = {type_id::int8,  type_id::int16,  type_id::int32,
                                     type_id::int64, type_id::uint8,  type_id::uint16,
                                     type_id::uint32, type_id::uint64};

/// A fresh directory under the system temporary directory, removed with its contents.
class temp_dir {
 public:
  temp_dir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() /
            ("joinery_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  temp_dir(temp_dir const&) = delete;
  temp_dir& operator=(temp_dir const&) = delete;
  [[nodiscard]] fs::path operator/(std::string const& name) const { return path_ / name; }
  [[nodiscard]] fs::path const& path() const { return path_; }
  /// Names of the entries, sorted.
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (auto const& e : fs::directory_iterator(path_)) { out.push_back(e.path().filename()); }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path path_;
};

inline void write_bytes(fs::path const& p, std::string const& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << p;
}

inline std::string read_bytes(fs::path const& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Runs `f`, expects an exception of type E whose message contains every one of `parts`.
template <class E>
inline void expect_error(std::function<void()> const& f,
                         std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << *parts.begin() << "'";
  } catch (E const& e) {
    std::string const msg = e.what();
    for (auto const& part : parts) {
      EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' missing from: " << msg;
    }
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message is not one line: " << msg;
  } catch (std::exception const& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

/// Values of `type` spread over its whole range, extremes first.
inline column random_column(type_id type, size_type rows, std::uint64_t seed) {
  column c(type, rows);
  std::mt19937_64 rng(seed);
  joinery::dispatch_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto* d = c.data_as<T>();
    using lim = std::numeric_limits<T>;
    std::vector<T> special{lim::min(), lim::max(), lim::lowest(), T(0), T(1)};
    if constexpr (std::is_signed_v<T>) { special.push_back(T(-1)); }
    if constexpr (std::is_floating_point_v<T>) {
      special.push_back(lim::infinity());
      special.push_back(-lim::infinity());
      special.push_back(lim::denorm_min());
      special.push_back(T(0.1));
    }
    std::uniform_real_distribution<double> real(-1e6, 1e6);
    for (size_type i = 0; i < rows; ++i) {
      if (static_cast<std::size_t>(i) < special.size()) {
        d[i] = special[static_cast<std::size_t>(i)];
      } else if constexpr (std::is_floating_point_v<T>) {
        d[i] = static_cast<T>(real(rng) * std::pow(10.0, static_cast<int>(rng() % 60) - 30));
      } else {
        auto const bits = rng();
        std::memcpy(&d[i], &bits, sizeof(T));
      }
    }
  });
  return c;
}

/// Marks every row i with i % every == phase null.
inline void add_nulls(column& c, size_type every, size_type phase) {
  auto* mask = c.make_nullable();
  size_type n = 0;
  for (size_type i = phase; i < c.size(); i += every) {
    mask[i >> 3] &= static_cast<std::uint8_t>(~(1u << (i & 7)));
    ++n;
  }
  c.set_null_count(n);
}

inline void expect_same_column(column_view const& got, column_view const& want,
                               std::string const& name) {
  ASSERT_EQ(got.type(), want.type()) << name;
  ASSERT_EQ(got.size(), want.size()) << name;
  ASSERT_EQ(got.null_count(), want.null_count()) << name;
  auto const w = joinery::size_of(want.type());
  auto const* g = static_cast<char const*>(got.data());
  auto const* e = static_cast<char const*>(want.data());
  size_type bad = 0;
  for (size_type i = 0; i < want.size() && bad < 5; ++i) {
    if (got.is_valid(i) != want.is_valid(i)) {
      ADD_FAILURE() << name << " row " << i << ": validity differs";
      ++bad;
    } else if (want.is_valid(i) && std::memcmp(g + i * w, e + i * w, w) != 0) {
      ADD_FAILURE() << name << " row " << i << ": value differs";
      ++bad;
    }
  }
}

inline joinery::table_view view_of(std::vector<column> const& cols) {
  std::vector<column_view> v;
  for (auto const& c : cols) { v.push_back(c.view()); }
  return joinery::table_view(std::move(v));
}

/// The bytes of a .npy file: magic, version, header length, the dict as given, then the data.
inline std::string npy_bytes(int major, std::string const& dict, std::string const& data,
                      bool pad = true) {
  std::size_t const preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  if (pad) {
    while ((preamble + header.size() + 1) % 64 != 0) { header += ' '; }
    header += '\n';
  }
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < preamble - 8; ++i) {
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  return out + header + data;
}

template <class T>
inline std::string raw(std::vector<T> const& v) {
  return std::string(reinterpret_cast<char const*>(v.data()), v.size() * sizeof(T));
}

inline std::string dict_for(std::string const& descr, std::string const& shape,
                     std::string const& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

}  // namespace joinery::test::io_util
