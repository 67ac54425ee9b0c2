// File I/O: CSV and .npy round trips, hand-made inputs, every refusal, atomic writes.
#include "io_test_util.hpp"

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

#include <sys/stat.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using joinery::column;
using joinery::column_view;
using joinery::size_type;
using joinery::type_id;
namespace io = joinery::io;
using namespace joinery::test::io_util;

// ---------------------------------------------------------------------------------------- CSV

TEST(IoCsv, RoundTripEveryTypeWithNulls) {
  temp_dir dir;
  std::vector<column> cols;
  std::vector<std::string> names;
  std::uint64_t seed = 1;
  for (auto t : integer_types) {
    cols.push_back(random_column(t, 1000, seed++));
    names.emplace_back(joinery::to_string(t));
  }
  cols.push_back(random_column(type_id::float32, 1000, seed++));
  names.emplace_back("f32");
  cols.push_back(random_column(type_id::float64, 1000, seed++));
  names.emplace_back("f64");
  // Nulls in some columns, never on the extremes at the top.
  add_nulls(cols[1], 7, 10);
  add_nulls(cols[3], 3, 11);
  add_nulls(cols[7], 101, 12);
  add_nulls(cols[9], 5, 13);

  auto const file = dir / "all.csv";
  io::write_csv(file, names, view_of(cols));
  auto const text = read_bytes(file);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "int8:int8,int16:int16,int32:int32,int64,uint8:uint8,uint16:uint16,uint32:uint32,"
            "uint64:uint64,f32:float32,f64:float64");
  auto const got = io::read_csv(file);
  ASSERT_EQ(got.names, names);
  ASSERT_EQ(got.data.num_columns(), static_cast<size_type>(cols.size()));
  for (std::size_t j = 0; j < cols.size(); ++j) {
    expect_same_column(got.view().column(static_cast<size_type>(j)), cols[j].view(), names[j]);
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"all.csv"});  // no temporary left over
}

TEST(IoCsv, UnannotatedColumnsAreInt64OrUint64) {
  temp_dir dir;
  write_bytes(dir / "t.csv",
              "a,b,c\n1,18446744073709551615,-9223372036854775808\n2,3,9223372036854775807\n");
  auto const t = io::read_csv(dir / "t.csv");
  ASSERT_EQ(t.data.num_columns(), 3);
  EXPECT_EQ(t.data.column(0).type(), type_id::int64);
  EXPECT_EQ(t.data.column(1).type(), type_id::uint64);
  EXPECT_EQ(t.data.column(2).type(), type_id::int64);
  EXPECT_EQ(t.data.column(1).to_vector<std::uint64_t>(),
            (std::vector<std::uint64_t>{18446744073709551615ull, 3}));
  EXPECT_EQ(t.data.column(2).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(),
                                       std::numeric_limits<std::int64_t>::max()}));

  write_bytes(dir / "mixed.csv", "k,x\n1,5\n2,-1\n3,18446744073709551615\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "mixed.csv"); },
                                     {"mixed.csv", "'x'", "line 3", "line 4"});
}

TEST(IoCsv, EmptyFieldsAreNullsAndBlanksAreTrimmed) {
  temp_dir dir;
  write_bytes(dir / "t.csv", "a , b:int16\n1,\n,2\n 3 , 4\t\n,\n");
  auto const t = io::read_csv(dir / "t.csv");
  EXPECT_EQ(t.names, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t.data.num_rows(), 4);
  auto const a = t.view().column(0);
  auto const b = t.view().column(1);
  EXPECT_EQ(a.null_count(), 2);
  EXPECT_EQ(b.null_count(), 2);
  EXPECT_TRUE(a.is_valid(0));
  EXPECT_FALSE(a.is_valid(1));
  EXPECT_TRUE(a.is_valid(2));
  EXPECT_FALSE(a.is_valid(3));
  EXPECT_FALSE(b.is_valid(0));
  EXPECT_TRUE(b.is_valid(1));
  EXPECT_EQ(a.data_as<std::int64_t>()[2], 3);
  EXPECT_EQ(b.data_as<std::int16_t>()[2], 4);

  // One column: an empty line inside is a null row; empty lines at the end are dropped.
  write_bytes(dir / "one.csv", "a\n1\n\n2\n\n");
  auto const one = io::read_csv(dir / "one.csv");
  ASSERT_EQ(one.data.num_rows(), 3);
  EXPECT_EQ(one.view().column(0).null_count(), 1);
  EXPECT_EQ(one.view().column(0).data_as<std::int64_t>()[0], 1);
  EXPECT_FALSE(one.view().column(0).is_valid(1));
  EXPECT_EQ(one.view().column(0).data_as<std::int64_t>()[2], 2);
  write_bytes(dir / "nulls.csv", "a\n\n");
  EXPECT_EQ(io::read_csv(dir / "nulls.csv").data.num_rows(), 0);
  write_bytes(dir / "none.csv", "a\n");
  EXPECT_EQ(io::read_csv(dir / "none.csv").data.num_rows(), 0);
  EXPECT_FALSE(io::read_csv(dir / "none.csv").view().column(0).nullable());

  // A single nullable column survives a round trip while its last value is not null.
  std::vector<column> cols;
  cols.push_back(column::from_host(std::vector<std::int32_t>{5, 0, 7, 0, 9}));
  auto* mask = cols[0].make_nullable();
  mask[0] = 0b10101;
  cols[0].set_null_count(2);
  io::write_csv(dir / "rt.csv", {"v"}, view_of(cols));
  EXPECT_EQ(read_bytes(dir / "rt.csv"), "v:int32\n5\n\n7\n\n9\n");
  auto const rt = io::read_csv(dir / "rt.csv");
  expect_same_column(rt.view().column(0), cols[0].view(), "v");
}

TEST(IoCsv, CrlfBomAndMissingFinalNewline) {
  temp_dir dir;
  write_bytes(dir / "t.csv", "\xEF\xBB\xBFx:int32,y\r\n1,-2\r\n3,4");
  auto const t = io::read_csv(dir / "t.csv");
  EXPECT_EQ(t.names, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(t.data.column(0).to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 3}));
  EXPECT_EQ(t.data.column(1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{-2, 4}));
  write_bytes(dir / "u.csv", "x:int32,y\r\n1,-2\r\n3,4\r\n");
  EXPECT_EQ(io::read_csv(dir / "u.csv").data.column(1).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{-2, 4}));
}

TEST(IoCsv, HeaderOnlyRoundTrip) {
  temp_dir dir;
  std::vector<column> cols;
  cols.emplace_back(type_id::uint16, 0);
  cols.emplace_back(type_id::int64, 0);
  io::write_csv(dir / "e.csv", {"p", "q"}, view_of(cols));
  EXPECT_EQ(read_bytes(dir / "e.csv"), "p:uint16,q\n");
  auto const t = io::read_csv(dir / "e.csv");
  EXPECT_EQ(t.names, (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(t.data.num_rows(), 0);
  EXPECT_EQ(t.data.column(0).type(), type_id::uint16);
  EXPECT_EQ(t.data.column(1).type(), type_id::int64);
  write_bytes(dir / "h.csv", "p,q");
  EXPECT_EQ(io::read_csv(dir / "h.csv").data.num_rows(), 0);
}

TEST(IoCsv, FloatAnnotationsAreRead) {
  temp_dir dir;
  write_bytes(dir / "f.csv", "f:float64,g:float32\n1.5,-2e3\n,inf\n");
  auto const t = io::read_csv(dir / "f.csv");
  EXPECT_EQ(t.data.column(0).type(), type_id::float64);
  EXPECT_EQ(t.view().column(0).data_as<double>()[0], 1.5);
  EXPECT_FALSE(t.view().column(0).is_valid(1));
  EXPECT_EQ(t.view().column(1).data_as<float>()[0], -2000.0f);
  EXPECT_EQ(t.view().column(1).data_as<float>()[1], std::numeric_limits<float>::infinity());
  write_bytes(dir / "g.csv", "f:float32\n1.5x\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "g.csv"); },
                                     {"line 2", "'f'", "'1.5x'", "not a number"});
}

TEST(IoCsv, RefusesBadFiles) {
  temp_dir dir;
  auto const csv = [&](std::string const& text) {
    write_bytes(dir / "bad.csv", text);
    return dir / "bad.csv";
  };
  auto const read = [](fs::path const& p) { return [p] { (void)io::read_csv(p); }; };
  using joinery::input_error;

  expect_error<input_error>(read(dir / "missing.csv"), {"missing.csv", "no such file"});
  expect_error<input_error>(read(dir.path()), {"directory"});
  expect_error<input_error>(read(csv("")), {"bad.csv", "empty"});
  expect_error<input_error>(read(csv("a,b,a\n1,2,3\n")), {"bad.csv", "line 1", "duplicate", "'a'"});
  expect_error<input_error>(read(csv("a,,b\n")), {"line 1", "column 2", "empty name"});
  expect_error<input_error>(read(csv("\n1\n")), {"line 1", "empty name"});
  expect_error<input_error>(read(csv("a:int128\n1\n")), {"line 1", "'a'", "unknown type 'int128'"});
  expect_error<input_error>(read(csv("a,b\n1,2\n3\n")), {"bad.csv", "line 3", "1 fields", "2"});
  expect_error<input_error>(read(csv("a,b\n1,2,3\n")), {"line 2", "3 fields"});
  expect_error<input_error>(read(csv("a,b\n1,2\n \n")), {"line 3", "1 fields"});
  expect_error<input_error>(read(csv("a,b\n1,2\n\n3,4\n")), {"line 3", "blank"});
  for (std::string bad : {"abc", "1.5", "12x", "-", "+", "+-1", "0x10", "1 2"}) {
    expect_error<input_error>(
      read(csv("k,v\n1,2\n3," + bad + "\n")),
      {"bad.csv", "line 3", "column 'v'", "'" + bad + "'", "not an integer"});
  }
  expect_error<input_error>(read(csv("k,v:uint8\n1,-3\n")),
                            {"line 2", "'v'", "-3", "out of range", "uint8"});
  expect_error<input_error>(read(csv("v:int8\n-128\n127\n128\n")),
                            {"line 4", "128", "out of range", "int8"});
  expect_error<input_error>(read(csv("v:uint16\n65536\n")), {"line 2", "uint16"});
  expect_error<input_error>(read(csv("v:int32\n2147483648\n")), {"line 2", "int32"});
  expect_error<input_error>(read(csv("v:uint32\n4294967296\n")), {"line 2", "uint32"});
  expect_error<input_error>(read(csv("v:uint64\n18446744073709551616\n")), {"line 2", "uint64"});
  expect_error<input_error>(read(csv("v\n18446744073709551616\n")), {"line 2", "out of range"});
  expect_error<input_error>(read(csv("v\n-9223372036854775809\n")), {"line 2", "out of range"});
  // The limits themselves are fine, and so are '+' and "-0".
  auto const ok = io::read_csv(csv("a:int8,b:uint8,c:int16\n-128,255,+32767\n127,-0,-32768\n"));
  EXPECT_EQ(ok.data.column(0).to_vector<std::int8_t>(), (std::vector<std::int8_t>{-128, 127}));
  EXPECT_EQ(ok.data.column(1).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{255, 0}));
  EXPECT_EQ(ok.data.column(2).to_vector<std::int16_t>(),
            (std::vector<std::int16_t>{32767, -32768}));
}

TEST(IoCsv, LargeFileParsedInChunks) {
  // Large enough to be cut into many chunks: values, nulls and the first error's line survive.
  temp_dir dir;
  size_type const rows = 300'000;
  std::vector<column> cols;
  cols.push_back(random_column(type_id::int64, rows, 7));
  cols.push_back(random_column(type_id::uint32, rows, 8));
  cols.push_back(random_column(type_id::int16, rows, 9));
  add_nulls(cols[1], 1000, 999);
  add_nulls(cols[2], 3, 2);
  std::vector<std::string> const names{"a", "b", "c"};
  io::write_csv(dir / "big.csv", names, view_of(cols));
  auto const t = io::read_csv(dir / "big.csv");
  ASSERT_EQ(t.data.num_rows(), rows);
  for (std::size_t j = 0; j < cols.size(); ++j) {
    expect_same_column(t.view().column(static_cast<size_type>(j)), cols[j].view(), names[j]);
  }

  std::string text = "a,b\n";
  for (size_type i = 0; i < rows; ++i) {
    text += std::to_string(i) + "," + (i == 250'000 ? "oops" : i == 280'000 ? "bad" : "1") + "\n";
  }
  write_bytes(dir / "err.csv", text);
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "err.csv"); },
                                     {"line 250002", "'oops'", "column 'b'"});
}

TEST(IoCsv, WritesAtomically) {
  temp_dir dir;
  auto const target = dir / "out.csv";
  std::vector<column> first;
  first.push_back(column::from_host(std::vector<std::int64_t>{1, 2, 3}));
  std::vector<column> second;
  second.push_back(column::from_host(std::vector<std::int64_t>{9}));

  io::write_csv(target, {"a"}, view_of(first));
  io::write_csv(target, {"b"}, view_of(second), io::existing_output::replace);
  EXPECT_EQ(read_bytes(target), "b\n9\n");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.csv"});

  // Refusals leave the previous content alone and nothing new behind.
  expect_error<joinery::logic_error>([&] { io::write_csv(target, {"a", "b"}, view_of(first)); },
                                     {"1 columns"});
  expect_error<joinery::logic_error>([&] { io::write_csv(target, {"a,b"}, view_of(first)); },
                                     {"a,b"});
  std::int64_t fake = 0;
  joinery::table_view const on_device(
    {column_view(type_id::int64, &fake, 1, joinery::memory_space::device)});
  expect_error<joinery::logic_error>([&] { io::write_csv(dir / "dev.csv", {"d"}, on_device); },
                                     {"device"});
  EXPECT_EQ(read_bytes(target), "b\n9\n");

  // A target that is a directory, and a missing parent: input errors, no temporary left.
  fs::create_directory(dir / "sub.csv");
  expect_error<joinery::input_error>([&] { io::write_csv(dir / "sub.csv", {"a"}, view_of(first)); },
                                     {"sub.csv"});
  expect_error<joinery::input_error>(
    [&] { io::write_csv(dir / "nope" / "x.csv", {"a"}, view_of(first)); }, {"x.csv"});
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"out.csv", "sub.csv"}));
  EXPECT_TRUE(fs::is_empty(dir / "sub.csv"));

  // An unwritable directory (root ignores permissions, so only checked for other users).
  if (::geteuid() != 0) {
    fs::create_directory(dir / "ro");
    fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    expect_error<joinery::input_error>(
      [&] { io::write_csv(dir / "ro" / "x.csv", {"a"}, view_of(first)); }, {"x.csv"});
    fs::permissions(dir / "ro", fs::perms::owner_all);
    EXPECT_TRUE(fs::is_empty(dir / "ro"));
  }
}

// ---------------------------------------------------------------------------------------- .npy

TEST(IoNpy, RoundTripEveryType) {
  temp_dir dir;
  std::uint64_t seed = 100;
  for (int i = 0; i <= static_cast<int>(type_id::float64); ++i) {
    auto const t = static_cast<type_id>(i);
    auto const c = random_column(t, 777, seed++);
    auto const file = dir / (std::string(joinery::to_string(t)) + ".npy");
    io::write_npy(file, c);
    auto const bytes = read_bytes(file);
    ASSERT_GE(bytes.size(), 10u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    std::size_t const header_len = static_cast<unsigned char>(bytes[8]) |
                                   (static_cast<unsigned char>(bytes[9]) << 8);
    EXPECT_EQ((10 + header_len) % 64, 0u);
    EXPECT_EQ(bytes[10 + header_len - 1], '\n');
    EXPECT_EQ(bytes.size(), 10 + header_len + 777 * joinery::size_of(t));
    expect_same_column(io::read_npy(file).view(), c.view(), file.filename());
  }
  // Exactly NumPy's header text.
  io::write_npy(dir / "i4.npy", column::from_host(std::vector<std::int32_t>(10, 3)));
  auto const bytes = read_bytes(dir / "i4.npy");
  std::string const dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (10,), }";
  EXPECT_EQ(bytes.substr(10, 118), dict + std::string(128 - 10 - 1 - dict.size(), ' ') + "\n");
  EXPECT_EQ(bytes.size(), 128u + 40u);
  io::write_npy(dir / "u1.npy", column::from_host(std::vector<std::uint8_t>{1, 2}));
  EXPECT_NE(read_bytes(dir / "u1.npy").find("'descr': '|u1'"), std::string::npos);
  // Empty columns round-trip too.
  io::write_npy(dir / "empty.npy", column(type_id::uint64, 0));
  auto const empty = io::read_npy(dir / "empty.npy");
  EXPECT_EQ(empty.type(), type_id::uint64);
  EXPECT_EQ(empty.size(), 0);
  EXPECT_EQ(dir.entries().size(), 13u);  // no temporaries
}

TEST(IoNpy, ReadsHandMadeFiles) {
  temp_dir dir;
  std::vector<std::int32_t> const v{1, -2, 2147483647};
  auto const check = [&](std::string const& bytes) {
    write_bytes(dir / "x.npy", bytes);
    auto const c = io::read_npy(dir / "x.npy");
    EXPECT_EQ(c.type(), type_id::int32);
    EXPECT_EQ(c.to_vector<std::int32_t>(), v);
  };
  check(npy_bytes(1, dict_for("<i4", "(3,)"), raw(v)));
  check(npy_bytes(2, dict_for("<i4", "(3,)"), raw(v)));
  check(npy_bytes(3, dict_for("<i4", "(3,)"), raw(v)));
  check(npy_bytes(1, dict_for("<i4", "(3, )"), raw(v)));
  check(npy_bytes(1, dict_for("<i4", "(3L,)"), raw(v)));
  check(npy_bytes(1, "{'shape': (3,), 'fortran_order': False, 'descr': '<i4'}", raw(v), false));
  check(npy_bytes(1, "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (3,)}\n", raw(v),
                  false));

  std::vector<std::int8_t> const small{-128, 0, 127};
  for (auto const* d : {"|i1", "<i1"}) {
    write_bytes(dir / "s.npy", npy_bytes(1, dict_for(d, "(3,)"), raw(small)));
    EXPECT_EQ(io::read_npy(dir / "s.npy").to_vector<std::int8_t>(), small);
  }
  std::vector<double> const f{0.5, -1e300};
  write_bytes(dir / "f.npy", npy_bytes(2, dict_for("<f8", "(2,)"), raw(f)));
  EXPECT_EQ(io::read_npy(dir / "f.npy").to_vector<double>(), f);
}

TEST(IoNpy, RefusesBadFiles) {
  temp_dir dir;
  std::vector<std::int32_t> const v{1, 2, 3};
  auto const file = dir / "bad.npy";
  auto const refuse = [&](std::string const& bytes, std::initializer_list<std::string> parts) {
    write_bytes(file, bytes);
    expect_error<joinery::input_error>([&] { (void)io::read_npy(file); }, parts);
  };
  refuse("", {"bad.npy", "too short"});
  refuse("\x93NUMPZ\x01\x00\x10\x00" + std::string(16, ' '), {"bad.npy", "magic"});
  refuse(npy_bytes(4, dict_for("<i4", "(3,)"), raw(v)), {"bad.npy", "version 4.0"});
  {
    auto b = npy_bytes(1, dict_for("<i4", "(3,)"), raw(v));
    b[7] = 1;
    refuse(b, {"version 1.1"});
  }
  refuse(npy_bytes(1, dict_for(">i4", "(3,)"), raw(v)), {"bad.npy", "big-endian"});
  refuse(npy_bytes(1, dict_for("<c8", "(3,)"), raw(v)), {"bad.npy", "dtype '<c8'"});
  refuse(npy_bytes(1, dict_for("|b1", "(3,)"), "abc"), {"dtype '|b1'"});
  refuse(npy_bytes(1, dict_for("|i4", "(3,)"), raw(v)), {"dtype '|i4'"});
  refuse(npy_bytes(1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (3,), }", raw(v)),
         {"dtype"});
  refuse(npy_bytes(1, dict_for("<i4", "(3,)", "True"), raw(v)), {"bad.npy", "fortran_order"});
  refuse(npy_bytes(1, dict_for("<i4", "(1, 3)"), raw(v)), {"bad.npy", "2 dimensions"});
  refuse(npy_bytes(1, dict_for("<i4", "()"), raw(v)), {"0 dimensions"});
  refuse(npy_bytes(1, dict_for("<i4", "(4,)"), raw(v)), {"bad.npy", "truncated data"});
  refuse(npy_bytes(1, dict_for("<i4", "(2,)"), raw(v)), {"bad.npy", "after the data"});
  refuse(npy_bytes(2, dict_for("<i4", "(3,)"), raw(v)).substr(0, 40), {"truncated header"});
  refuse(npy_bytes(1, "{'descr': '<i4', 'shape': (3,), }", raw(v)), {"malformed", "fortran_order"});
  refuse(npy_bytes(1, "'descr': '<i4', 'fortran_order': False, 'shape': (3,)", raw(v)),
         {"malformed"});
  refuse(npy_bytes(1, dict_for("<i4", "(3,)") + "junk", raw(v)), {"malformed"});
  refuse(npy_bytes(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), 'x': 1}", raw(v)),
         {"malformed", "'x'"});
  refuse(npy_bytes(1, "{'descr': '<i4', 'fortran_order': Nope, 'shape': (3,)}", raw(v)),
         {"malformed"});
  refuse(npy_bytes(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (-3,)}", raw(v)),
         {"malformed"});
  refuse(npy_bytes(1, "{'descr': '<i4, 'fortran_order': False, 'shape': (3,)}", raw(v)),
         {"malformed"});
  refuse(npy_bytes(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,}", raw(v)),
         {"malformed"});
  expect_error<joinery::input_error>([&] { (void)io::read_npy(dir / "none.npy"); },
                                     {"none.npy", "no such file"});
}

TEST(IoNpy, RefusesNullsAndDeviceColumns) {
  temp_dir dir;
  auto c = column::from_host(std::vector<std::int64_t>{1, 2, 3});
  c.make_nullable()[0] = 0b101;
  c.set_null_count(1);
  expect_error<joinery::logic_error>([&] { io::write_npy(dir / "n.npy", c); }, {"null"});
  std::int64_t fake = 0;
  expect_error<joinery::logic_error>(
    [&] {
      io::write_npy(dir / "d.npy",
                    column_view(type_id::int64, &fake, 1, joinery::memory_space::device));
    },
    {"device"});
  EXPECT_TRUE(dir.entries().empty());
}

// ------------------------------------------------------------------------------ .npy directories

TEST(IoNpyDir, RoundTripSortedByNameAndReplaced) {
  temp_dir dir;
  auto const out = dir / "tbl";
  std::vector<column> cols;
  cols.push_back(random_column(type_id::uint32, 500, 1));
  cols.push_back(random_column(type_id::int8, 500, 2));
  cols.push_back(random_column(type_id::float64, 500, 3));
  cols.push_back(random_column(type_id::int64, 500, 4));
  io::write_npy_dir(out, {"zeta", "alpha", "mid", "old"}, view_of(cols));
  auto const t = io::read_npy_dir(out);
  EXPECT_EQ(t.names, (std::vector<std::string>{"alpha", "mid", "old", "zeta"}));
  expect_same_column(t.view().column(0), cols[1].view(), "alpha");
  expect_same_column(t.view().column(1), cols[2].view(), "mid");
  expect_same_column(t.view().column(2), cols[3].view(), "old");
  expect_same_column(t.view().column(3), cols[0].view(), "zeta");
  EXPECT_EQ(t.column_index("zeta"), 3);

  // A rewrite replaces the whole directory: the column "old" is gone.
  std::vector<column> next;
  next.push_back(column::from_host(std::vector<std::uint16_t>{4, 5}));
  io::write_npy_dir(out.string() + "/", {"only"}, view_of(next), io::existing_output::replace);
  auto const r = io::read_npy_dir(out);
  EXPECT_EQ(r.names, std::vector<std::string>{"only"});
  EXPECT_EQ(r.data.column(0).to_vector<std::uint16_t>(), (std::vector<std::uint16_t>{4, 5}));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"tbl"});  // no temporary or backup left

  // Other files in the directory are ignored when reading.
  write_bytes(out / "notes.txt", "hello");
  EXPECT_EQ(io::read_npy_dir(out).names, std::vector<std::string>{"only"});
}

TEST(IoNpyDir, Refusals) {
  temp_dir dir;
  std::vector<column> cols;
  cols.push_back(column::from_host(std::vector<std::int32_t>{1, 2}));

  // A regular file in the way is not replaced.
  write_bytes(dir / "file", "keep");
  expect_error<joinery::input_error>(
    [&] { io::write_npy_dir(dir / "file", {"a"}, view_of(cols), io::existing_output::replace); },
    {"file", "not a directory"});
  EXPECT_EQ(read_bytes(dir / "file"), "keep");
  // Nulls and bad names are refused before anything is written.
  auto nullable = column::copy_of(cols[0]);
  nullable.make_nullable()[0] = 0b10;
  nullable.set_null_count(1);
  std::vector<column> with_nulls;
  with_nulls.push_back(std::move(nullable));
  expect_error<joinery::logic_error>(
    [&] { io::write_npy_dir(dir / "n", {"a"}, view_of(with_nulls)); }, {"'a'", "null"});
  expect_error<joinery::logic_error>([&] { io::write_npy_dir(dir / "n", {"a/b"}, view_of(cols)); },
                                     {"a/b"});
  expect_error<joinery::logic_error>([&] { io::write_npy_dir(dir / "n", {}, view_of(cols)); },
                                     {"0 names"});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"file"});

  // Reading: missing, empty, ragged.
  expect_error<joinery::input_error>([&] { (void)io::read_npy_dir(dir / "missing"); },
                                     {"missing", "no such directory"});
  fs::create_directory(dir / "empty");
  write_bytes(dir / "empty" / "readme.txt", "x");
  expect_error<joinery::input_error>([&] { (void)io::read_npy_dir(dir / "empty"); },
                                     {"empty", "no .npy files"});
  fs::create_directory(dir / "ragged");
  io::write_npy(dir / "ragged" / "a.npy", column::from_host(std::vector<std::int32_t>{1, 2}));
  io::write_npy(dir / "ragged" / "b.npy", column::from_host(std::vector<std::int64_t>{1, 2, 3}));
  expect_error<joinery::input_error>([&] { (void)io::read_npy_dir(dir / "ragged"); },
                                     {"'a.npy'", "'b.npy'", "2 rows", "3"});
  // A bad file inside is reported by name.
  fs::create_directory(dir / "broken");
  write_bytes(dir / "broken" / "c.npy", "nonsense");
  expect_error<joinery::input_error>([&] { (void)io::read_npy_dir(dir / "broken"); },
                                     {"c.npy", "too short"});
}

// ---------------------------------------------------------------------------------- dispatch

TEST(IoTable, DispatchesOnPathAndNamesColumns) {
  temp_dir dir;
  std::vector<column> cols;
  cols.push_back(column::from_host(std::vector<std::int64_t>{3, 1, 2}));
  cols.push_back(column::from_host(std::vector<std::uint32_t>{7, 8, 9}));
  std::vector<std::string> const names{"key", "val"};

  io::write_table(dir / "t.csv", names, view_of(cols));
  io::write_table(dir / "t.CSV", names, view_of(cols));
  io::write_table(dir / "t_npy", names, view_of(cols));
  EXPECT_TRUE(fs::is_regular_file(dir / "t.csv"));
  EXPECT_TRUE(fs::is_regular_file(dir / "t.CSV"));
  EXPECT_TRUE(fs::is_directory(dir / "t_npy"));
  EXPECT_TRUE(fs::is_regular_file(dir / "t_npy" / "val.npy"));
  for (auto const* p : {"t.csv", "t_npy"}) {
    auto const t = io::read_table(dir / p);
    EXPECT_EQ(t.names, names) << p;
    expect_same_column(t.view().column(0), cols[0].view(), p);
    expect_same_column(t.view().column(1), cols[1].view(), p);
    EXPECT_EQ(t.column_index("val"), 1);
    expect_error<joinery::input_error>([&] { (void)t.column_index("nope"); },
                                       {"'nope'", "key, val"});
  }
}

}  // namespace
