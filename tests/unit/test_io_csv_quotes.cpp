// Reading CSV with RFC 4180 quotes (quoted numbers and names, text columns holding commas, ""
// and line breaks around the columns read, across parse chunks and thread counts) and with a
// NULL literal; the errors name the line a record starts on.
#include "io_test_util.hpp"
#include "support/threads.hpp"

#include "io/io_detail.hpp"

#include <joinery/io.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using joinery::size_type;
namespace io = joinery::io;
using namespace joinery::test::io_util;
using i64s = std::vector<std::int64_t>;

i64s values(io::named_table const& t, size_type j) { return int64_values(t, j, -999); }

TEST(IoCsvQuotes, QuotedNumbersNamesAndTextAroundTheColumnsRead) {
  temp_dir dir;
  write_bytes(dir / "q.csv",
              "\"o_orderkey\",\"comment, free text\",\"p\"\"q\",v\n"
              "1,\"says \"\"hi\"\", then leaves\",\"7\",10\r\n"
              "2,\"two\nlines, and a comma\", \" 8 \" ,20\n"
              "3,,\"\",30\n"
              "4,\"\",9,\"40\"\n");
  auto const t = io::read_csv(dir / "q.csv", std::vector<std::string>{"o_orderkey", "p\"q", "v"});
  EXPECT_EQ(t.names, (std::vector<std::string>{"o_orderkey", "p\"q", "v"}));
  EXPECT_EQ(values(t, 0), (i64s{1, 2, 3, 4}));
  EXPECT_EQ(values(t, 1), (i64s{7, 8, -999, 9}));  // a quoted empty field is a null
  EXPECT_EQ(values(t, 2), (i64s{10, 20, 30, 40}));
  // The text column itself is refused by name, on the line its record starts.
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "q.csv"); },
                                     {"line 2:", "column 'comment, free text'", "is not"});
}

TEST(IoCsvQuotes, RecordsSpanningLinesAcrossChunksAndThreads) {
  temp_dir dir;
  std::string text = "k,note,v\n";
  i64s keys, vs;
  for (int i = 0; i < 5000; ++i) {
    std::string note = i % 3 == 0   ? "\"line one\nline two, \"\"quoted\"\"\r\nline three\""
                       : i % 3 == 1 ? "plain"
                                    : "\"a,b\"";
    text += std::to_string(i) + "," + note + "," + std::to_string(i * 7 - 100) +
            (i % 2 == 0 ? "\n" : "\r\n");
    keys.push_back(i);
    vs.push_back(i * 7 - 100);
  }
  write_bytes(dir / "big.csv", text);
  auto const saved = io::detail::set_csv_min_chunk_bytes(97);
  for (int threads : {1, 2, 3, 8}) {
    joinery::test::scoped_threads const scoped(threads);
    auto const t = io::read_csv(dir / "big.csv", std::vector<std::string>{"k", "v"});
    ASSERT_EQ(t.data.num_rows(), 5000) << threads;
    EXPECT_EQ(values(t, 0), keys) << threads;
    EXPECT_EQ(values(t, 1), vs) << threads;
  }
  // An error after many multi-line records names its physical line: record 4001 (k = 4000)
  // starts on line 2 + 4000 + 2 x 1334 (every third record before it spans three lines).
  auto const bad_at = text.find("\n4000,") + 1;
  auto broken = text;
  broken.replace(bad_at, 4, "4x00");
  write_bytes(dir / "bad.csv", broken);
  expect_error<joinery::input_error>(
    [&] { (void)io::read_csv(dir / "bad.csv", std::vector<std::string>{"k"}); },
    {"line " + std::to_string(2 + 4000 + 2 * 1334) + ":", "'4x00'"});
  io::detail::set_csv_min_chunk_bytes(saved);
}

// A quote inside an unquoted field is text (O"Brien): it opens nothing.
TEST(IoCsvQuotes, AQuoteInsideAnUnquotedFieldIsText) {
  temp_dir dir;
  write_bytes(dir / "s.csv", "k,name,v\n1,O\"Brien,10\n2,say \"x\"\n,20\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "s.csv", std::vector<std::string>{"k", "v"}); },
                                     {"line 3:", "2 fields"});
  write_bytes(dir / "s.csv", "k,name,v\n1,O\"Brien,10\n2,\"Mc\"\"Ann\",20\n");
  auto const t = io::read_csv(dir / "s.csv", std::vector<std::string>{"k", "v"});
  EXPECT_EQ(values(t, 0), (i64s{1, 2}));
  EXPECT_EQ(values(t, 1), (i64s{10, 20}));
}

TEST(IoCsvQuotes, MalformedQuotesAreRefusedWithTheirLine) {
  temp_dir dir;
  write_bytes(dir / "open.csv", "k,v\n1,2\n3,\"4\n5,6\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "open.csv"); },
                                     {"line 3:", "no closing quote"});
  write_bytes(dir / "after.csv", "k,v\n1,2\n3,\"4\"x\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "after.csv"); },
                                     {"line 3:", "after its closing quote"});
  write_bytes(dir / "escaped.csv", "k,v\n1,\"2\"\"\"\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "escaped.csv"); },
                                     {"line 2:", "column 'v'", "is not a number"});
  // An early quote left open swallows the next line up to the next quote, which closes it.
  write_bytes(dir / "early.csv", "k,v\n1,\"abc\n2,\"x\"\n3,4\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "early.csv"); },
                                     {"line 2:", "after its closing quote"});
  write_bytes(dir / "header.csv", "k,\"v\n1,2\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "header.csv"); },
                                     {"line 1 (header)", "closing quote"});
}

TEST(IoCsvQuotes, ANullLiteralReadsAsNull) {
  temp_dir dir;
  write_bytes(dir / "n.csv", "k,v:int32\n1,NULL\n2, NULL \n3,\n4,5\n");
  io::csv_options o;
  o.null_literal = "NULL";
  auto const t = io::read_table(dir / "n.csv", o);
  auto const v = t.data.column(1).view();
  EXPECT_EQ(v.null_count(), 3);
  EXPECT_TRUE(v.is_valid(3));
  EXPECT_EQ(v.data_as<std::int32_t>()[3], 5);
  // Without the option the literal is a value that is not a number; quoted, it is never null.
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "n.csv"); },
                                     {"line 2:", "'NULL'"});
  write_bytes(dir / "q.csv", "k,v\n1,\"NULL\"\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "q.csv", o); },
                                     {"line 2:", "'NULL'"});
  auto const only = io::read_table(dir / "n.csv", std::vector<std::string>{"v"}, o);
  EXPECT_EQ(only.data.column(0).view().null_count(), 3);
}

}  // namespace
