// String columns in CSV: reading `name:string` fields (quotes, commas, line breaks, empty string
// versus NULL, the null literal, UTF-8 bytes, line ends, many rows across the parallel chunks, a
// subset of columns), writing them so that they read back identically, and .npy refusing them.
#include "io_test_util.hpp"
#include "support/columns.hpp"
#include "support/threads.hpp"

#include "io/csv_strings.hpp"
#include "io/io_detail.hpp"

#include <joinery/io.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using joinery::column;
using joinery::column_view;
using joinery::size_type;
using joinery::type_id;
namespace io = joinery::io;
using namespace joinery::test::io_util;

using text = std::optional<std::string>;  // nullopt: NULL
using texts = std::vector<text>;
constexpr auto null = std::nullopt;

/// Column j of `t` as strings, NULLs as nullopt; checks that the column is `type`.
texts strings_of(io::named_table const& t, size_type j, type_id type = type_id::string) {
  auto const c = t.data.column(j).view();
  EXPECT_EQ(c.type(), type) << t.names[static_cast<std::size_t>(j)];
  texts out;
  if (!joinery::is_string(c.type())) { return out; }
  EXPECT_EQ(c.offset(0), 0);
  size_type nulls = 0;
  for (size_type i = 0; i < c.size(); ++i) {
    if (c.is_valid(i)) {
      out.emplace_back(std::string(c.string_at(i)));
    } else {
      EXPECT_EQ(c.offset(i), c.offset(i + 1)) << "a null row holds characters";
      out.emplace_back(null);
      ++nulls;
    }
  }
  EXPECT_EQ(c.null_count(), nulls);
  return out;
}

column string_column(texts const& values, type_id type = type_id::string) {
  return joinery::test::make_strings(values, type);
}

TEST(IoCsvStrings, FieldsAreReadAsWrittenQuotesRemoved) {
  temp_dir dir;
  write_bytes(dir / "s.csv",
              "id,name:string,v\n"
              "1,plain,10\n"
              "2,  blanks kept  ,20\n"
              "3,\"a, b\",30\n"
              "4,\"say \"\"hi\"\"\",40\n"
              "5,\"two\nlines\",50\n"
              "6,  \"padded quotes\"  ,60\n"
              "7,\" inside kept \",70\n"
              "8,O\"Brien,80\n"
              "9,\"\"\"\",90\n");
  auto const t = io::read_csv(dir / "s.csv");
  ASSERT_EQ(t.names, (std::vector<std::string>{"id", "name", "v"}));
  EXPECT_EQ(strings_of(t, 1), (texts{"plain", "  blanks kept  ", "a, b", "say \"hi\"",
                                     "two\nlines", "padded quotes", " inside kept ", "O\"Brien",
                                     "\""}));
  EXPECT_EQ(int64_values(t, 0, -1), (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(int64_values(t, 2, -1),
            (std::vector<std::int64_t>{10, 20, 30, 40, 50, 60, 70, 80, 90}));
}

TEST(IoCsvStrings, AnUnquotedEmptyFieldIsNullAQuotedOneTheEmptyString) {
  temp_dir dir;
  write_bytes(dir / "e.csv", "k,s:string,t:string\n1,,\"\"\n2,\"\",\n3, ,x\n");
  auto const t = io::read_csv(dir / "e.csv");
  EXPECT_EQ(strings_of(t, 1), (texts{null, "", " "}));
  EXPECT_EQ(strings_of(t, 2), (texts{"", null, "x"}));
  // One column: an empty line inside is a NULL, "" the empty string; empty last lines go.
  write_bytes(dir / "one.csv", "s:string\na\n\n\"\"\nb\n\n\n");
  EXPECT_EQ(strings_of(io::read_csv(dir / "one.csv"), 0), (texts{"a", null, "", "b"}));
}

TEST(IoCsvStrings, TheNullLiteralUnquotedAndExactlyAsWrittenIsNull) {
  temp_dir dir;
  write_bytes(dir / "n.csv", "s:string,v\nNA,1\n\"NA\",2\n NA,3\nNA ,4\n,5\nna,NA\n");
  io::csv_options o;
  o.null_literal = "NA";
  auto const t = io::read_csv(dir / "n.csv", o);
  EXPECT_EQ(strings_of(t, 0), (texts{null, "NA", " NA", "NA ", null, "na"}));
  EXPECT_EQ(int64_values(t, 1, -1), (std::vector<std::int64_t>{1, 2, 3, 4, 5, -1}));
  // Without the option NA is text.
  write_bytes(dir / "m.csv", "s:string\nNA\n\"NA\"\n");
  EXPECT_EQ(strings_of(io::read_csv(dir / "m.csv"), 0), (texts{"NA", "NA"}));
}

TEST(IoCsvStrings, Utf8BytesPassThroughUntouched) {
  temp_dir dir;
  std::string const bom = "\xEF\xBB\xBF";
  std::string const accented = "caf\xC3\xA9";             // café
  std::string const han = "\xE6\xBC\xA2\xE5\xAD\x97";      // 漢字
  std::string const emoji = "\xF0\x9F\x98\x80, ok";       // a 4-byte character and a comma
  std::string const invalid = "\xFF\xFE bytes";           // not UTF-8: kept as bytes
  write_bytes(dir / "u.csv", bom + "s:string,n\n" + accented + ",1\n\"" + han + "\",2\n\"" + emoji +
                               "\",3\n" + invalid + ",4\n");
  auto const t = io::read_csv(dir / "u.csv");
  EXPECT_EQ(t.names[0], "s");
  EXPECT_EQ(strings_of(t, 0), (texts{accented, han, emoji, invalid}));
}

TEST(IoCsvStrings, CrlfAndLoneCrLineEndsEndRecordsButStayInsideQuotes) {
  temp_dir dir;
  write_bytes(dir / "crlf.csv", "s:string,v\r\nab,1\r\n\"c\r\nd\",2\r\n\"e\rf\",3\re g,4\r\n\r\n");
  auto const t = io::read_csv(dir / "crlf.csv");
  EXPECT_EQ(strings_of(t, 0), (texts{"ab", "c\r\nd", "e\rf", "e g"}));
  EXPECT_EQ(int64_values(t, 1, -1), (std::vector<std::int64_t>{1, 2, 3, 4}));
  // The same without any quote in the file (the parallel line count path).
  write_bytes(dir / "plain.csv", "v,s:string\r\n1,ab\r\n2,\r\n3,x y\r\n");
  auto const p = io::read_csv(dir / "plain.csv");
  EXPECT_EQ(strings_of(p, 1), (texts{"ab", null, "x y"}));
}

TEST(IoCsvStrings, AColumnSubsetReadsStringColumnsAndSkipsOthers) {
  temp_dir dir;
  write_bytes(dir / "s.csv",
              "a:string,k,b:string,c\n"
              "\"x,1\",1,one,not a number\n"
              "y,2,\"t\"\"wo\",\n"
              ",3,\"\",\"also, text\"\n");
  auto const t = io::read_csv(dir / "s.csv", std::vector<std::string>{"b", "k", "b", "a"});
  ASSERT_EQ(t.names, (std::vector<std::string>{"b", "k", "a"}));
  EXPECT_EQ(strings_of(t, 0), (texts{"one", "t\"wo", ""}));
  EXPECT_EQ(int64_values(t, 1, -1), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(strings_of(t, 2), (texts{"x,1", "y", null}));
  io::csv_options o;
  o.null_literal = "y";
  auto const only = io::read_table(dir / "s.csv", std::vector<std::string>{"a"}, o);
  EXPECT_EQ(strings_of(only, 0), (texts{"x,1", null, null}));
}

TEST(IoCsvStrings, LargeStringWhenAnnotatedOrWhenTheCharactersPassInt32Offsets) {
  temp_dir dir;
  write_bytes(dir / "l.csv", "s:large_string,t:string\nabc,de\n,\"\"\n\"x,y\",z\n");
  auto const t = io::read_csv(dir / "l.csv");
  EXPECT_EQ(strings_of(t, 0, type_id::large_string), (texts{"abc", null, "x,y"}));
  EXPECT_EQ(strings_of(t, 1), (texts{"de", "", "z"}));
  // A lowered limit stands in for 2^31 - 1 bytes: `t` (4 bytes) passes 3, `u` (3 bytes) doesn't.
  write_bytes(dir / "m.csv", "t:string,u:string\nab,a\ncd,bc\n");
  auto const saved = io::detail::set_csv_max_string_chars(3);
  auto const saved_chunk = io::detail::set_csv_min_chunk_bytes(4);
  auto const m = io::read_csv(dir / "m.csv");
  io::detail::set_csv_min_chunk_bytes(saved_chunk);
  io::detail::set_csv_max_string_chars(saved);
  EXPECT_EQ(strings_of(m, 0, type_id::large_string), (texts{"ab", "cd"}));
  EXPECT_EQ(strings_of(m, 1), (texts{"a", "bc"}));
}

TEST(IoCsvStrings, TextInAnUnannotatedColumnSuggestsTheAnnotation) {
  temp_dir dir;
  write_bytes(dir / "t.csv", "k,name\n1,alice\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "t.csv"); },
                                     {"line 2:", "'alice' is not an integer",
                                      "annotate the header field as 'name:string'"});
  write_bytes(dir / "q.csv", "k,name\n1,\"a \"\"b\"\"\"\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "q.csv"); },
                                     {"line 2:", "is not a number", "'name:string'"});
  // A declared number type is the user's choice: no suggestion there.
  write_bytes(dir / "d.csv", "k,name:int32\n1,alice\n");
  try {
    (void)io::read_csv(dir / "d.csv");
    ADD_FAILURE() << "no exception";
  } catch (joinery::input_error const& e) {
    EXPECT_EQ(std::string(e.what()).find(":string"), std::string::npos) << e.what();
  }
  write_bytes(dir / "u.csv", "k,name:text\n1,alice\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "u.csv"); },
                                     {"unknown type 'text'", "string large_string"});
}

/// Random values: letters and the characters quoting is about, UTF-8, blanks at the ends, empty
/// strings and NULLs; with `quotable` false none that an unquoted field cannot carry.
std::string random_value(std::mt19937_64& rng, bool quotable) {
  static std::vector<std::string> const pieces = {
    "a", "b", "z", "Q", "0", "7", " ", "\t", "caf\xC3\xA9", "\xE6\xBC\xA2", "\xF0\x9F\x98\x80",
    "NA", "x y", "-", ":", ";"};
  static std::vector<std::string> const quoted_only = {",", "\"", "\n", "\r", "\r\n", "\"\""};
  auto const length = rng() % 12;
  std::string v;
  for (std::size_t i = 0; i < length; ++i) {
    v += quotable && rng() % 5 == 0 ? quoted_only[rng() % quoted_only.size()]
                                    : pieces[rng() % pieces.size()];
  }
  return v;
}

/// Random rows of (int64 k, string s, string t); `quotable`: values that need quotes, and empty
/// strings, appear (the file has quotes).
texts random_texts(std::mt19937_64& rng, std::size_t rows, bool quotable) {
  texts out;
  for (std::size_t i = 0; i < rows; ++i) {
    auto const pick = rng() % 10;
    if (pick == 0) {
      out.emplace_back(null);
    } else {
      auto v = random_value(rng, quotable);
      if (!quotable && v.empty()) { v = "e"; }  // unquoted, empty would be a NULL
      out.emplace_back(std::move(v));
    }
  }
  return out;
}

/// A field for `v` as a hand-written file might have it: quoted when it must be (and sometimes
/// when it need not be), else as it is.
std::string field_for(text const& v, std::mt19937_64& rng, bool quotable) {
  if (!v) { return ""; }
  bool const must = v->empty() || v->find_first_of(",\"\r\n") != std::string::npos;
  if (!must && !(quotable && rng() % 4 == 0)) { return *v; }
  std::string f = "\"";
  for (auto const c : *v) {
    f += c;
    if (c == '"') { f += '"'; }
  }
  return f + "\"";
}

TEST(IoCsvStrings, ManyRowsAcrossParallelChunksMatchTheGenerator) {
  temp_dir dir;
  constexpr std::size_t rows = 200'000;
  for (bool const quotable : {true, false}) {
    std::mt19937_64 rng(quotable ? 11 : 12);
    auto const s = random_texts(rng, rows, quotable);
    auto const u = random_texts(rng, rows, quotable);
    std::string file = "k,s:string,u:string\n";
    for (std::size_t i = 0; i < rows; ++i) {
      file += std::to_string(i) + "," + field_for(s[i], rng, quotable) + "," +
              field_for(u[i], rng, quotable) + (i % 3 == 0 ? "\r\n" : "\n");
    }
    ASSERT_EQ(file.find('"') != std::string::npos, quotable);
    write_bytes(dir / "big.csv", file);
    std::vector<std::int64_t> keys(rows);
    for (std::size_t i = 0; i < rows; ++i) { keys[i] = static_cast<std::int64_t>(i); }
    for (std::size_t const chunk : {std::size_t{0}, std::size_t{4096}}) {
      auto const saved = io::detail::set_csv_min_chunk_bytes(chunk);
      for (int const threads : {1, 3, 8}) {
        joinery::test::scoped_threads const scoped(threads);
        auto const t = io::read_csv(dir / "big.csv");
        ASSERT_EQ(t.data.num_rows(), static_cast<size_type>(rows));
        EXPECT_EQ(int64_values(t, 0, -1), keys) << threads;
        EXPECT_TRUE(strings_of(t, 1) == s) << "column s, " << threads << " threads";
        EXPECT_TRUE(strings_of(t, 2) == u) << "column u, " << threads << " threads";
      }
      io::detail::set_csv_min_chunk_bytes(saved);
    }
  }
}

TEST(IoCsvStrings, WrittenStringsAreQuotedWhereReadingNeedsIt) {
  temp_dir dir;
  std::vector<std::int64_t> const k{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  auto const s = string_column({"plain", "", null, "a,b", "say \"hi\"", "two\nlines", " lead",
                                "trail\t", "NA", "caf\xC3\xA9"});
  auto const kc = column::from_host(k);
  io::write_csv(dir / "w.csv", {"k", "s"}, joinery::table_view({kc.view(), s.view()}));
  EXPECT_EQ(read_bytes(dir / "w.csv"),
            "k,s:string\n1,plain\n2,\"\"\n3,\n4,\"a,b\"\n5,\"say \"\"hi\"\"\"\n6,\"two\nlines\"\n"
            "7,\" lead\"\n8,\"trail\t\"\n9,\"NA\"\n10,caf\xC3\xA9\n");
  for (auto const* v : {"", "a", "null", "NULL", "n/a", "N/A", "#N/A", "NaN", "None", "\\N",
                        "\\n", "na", "nA"}) {
    bool const quote = std::string(v) != "a";  // empty, or a null marker in any case
    EXPECT_EQ(io::detail::csv_needs_quotes(v), quote) << v;
  }
  EXPECT_FALSE(io::detail::csv_needs_quotes("NAN2"));
  EXPECT_FALSE(io::detail::csv_needs_quotes("a b"));
  EXPECT_TRUE(io::detail::csv_needs_quotes("\r"));
}

TEST(IoCsvStrings, WriteThenReadGivesTheSameTable) {
  temp_dir dir;
  std::mt19937_64 rng(5);
  constexpr std::size_t rows = 200'000;  // several of the writer's parallel blocks
  auto const s = random_texts(rng, rows, true);
  auto const l = random_texts(rng, rows, true);
  auto const sc = string_column(s);
  auto const lc = string_column(l, type_id::large_string);
  auto kc = random_column(type_id::int64, static_cast<size_type>(rows), 3);
  add_nulls(kc, 7, 2);
  auto const fc = random_column(type_id::float64, static_cast<size_type>(rows), 4);
  joinery::table_view const t({kc.view(), sc.view(), lc.view(), fc.view()});
  std::vector<std::string> const names{"k", "s", "l", "f"};
  for (int const threads : {1, 4}) {
    joinery::test::scoped_threads const scoped(threads);
    auto const path = dir / ("rt" + std::to_string(threads) + ".csv");
    io::write_csv(path, names, t);
    EXPECT_EQ(read_bytes(path).substr(0, 34), "k,s:string,l:large_string,f:float6");
    auto const back = io::read_csv(path);
    ASSERT_EQ(back.names, names);
    expect_same_column(back.data.column(0).view(), kc.view(), "k");
    EXPECT_TRUE(strings_of(back, 1) == s) << threads;
    EXPECT_TRUE(strings_of(back, 2, type_id::large_string) == l) << threads;
    expect_same_column(back.data.column(3).view(), fc.view(), "f");
    // A reader told of a null literal still reads every written value back.
    io::csv_options o;
    o.null_literal = "NA";
    EXPECT_TRUE(strings_of(io::read_csv(path, std::vector<std::string>{"s"}, o), 0) == s);
  }
}

TEST(IoCsvStrings, TheTableWriterWritesStringBatchesAndSlices) {
  temp_dir dir;
  texts const all{"a", "", null, "b,c", "\"", "last"};
  auto const c = string_column(all);
  std::vector<std::int64_t> const k{0, 1, 2, 3, 4, 5};
  auto const kc = column::from_host(k);
  // Batches are slices of the column: their offsets start past 0.
  auto const slice = [&](size_type lo, size_type hi) {
    auto const v = c.view();
    auto const* offsets = static_cast<std::int32_t const*>(v.data()) + lo;
    auto const s = column_view::strings(type_id::string, offsets, v.chars(), hi - lo,
                                        joinery::memory_space::host);
    auto const kv = column_view(type_id::int64, kc.view().data_as<std::int64_t>() + lo, hi - lo,
                                joinery::memory_space::host);
    return joinery::table_view({kv, s});
  };
  {
    io::table_writer w(dir / "b.csv", {"k", "s"}, {type_id::int64, type_id::string});
    w.append(slice(0, 2));
    w.append(slice(3, 6));
    w.finish();
    EXPECT_EQ(w.rows_written(), 5);
  }
  auto const t = io::read_csv(dir / "b.csv");
  EXPECT_EQ(strings_of(t, 1), (texts{"a", "", "b,c", "\"", "last"}));
  EXPECT_EQ(int64_values(t, 0, -1), (std::vector<std::int64_t>{0, 1, 3, 4, 5}));
  // The null row, which slices skipped, through a mask of the whole column.
  io::write_csv(dir / "w.csv", {"k", "s"}, joinery::table_view({kc.view(), c.view()}));
  EXPECT_EQ(strings_of(io::read_csv(dir / "w.csv"), 1), all);
}

TEST(IoCsvStrings, AOneColumnTableEndingInNullIsRefusedEndingInEmptyIsNot) {
  temp_dir dir;
  auto const ends_null = string_column({"a", null});
  expect_error<joinery::logic_error>(
    [&] { io::write_csv(dir / "n.csv", {"s"}, joinery::table_view({ends_null.view()})); },
    {"one-column CSV cannot end with a null row"});
  EXPECT_FALSE(std::filesystem::exists(dir / "n.csv"));
  auto const inner_null = string_column({null, "", "x", null, ""});
  io::write_csv(dir / "e.csv", {"s"}, joinery::table_view({inner_null.view()}));
  EXPECT_EQ(read_bytes(dir / "e.csv"), "s:string\n\n\"\"\nx\n\n\"\"\n");
  EXPECT_EQ(strings_of(io::read_csv(dir / "e.csv"), 0), (texts{null, "", "x", null, ""}));
  {
    io::table_writer w(dir / "w.csv", {"s"}, {type_id::string});
    w.append(joinery::table_view({ends_null.view()}));
    expect_error<joinery::logic_error>([&] { w.finish(); }, {"cannot end with a null row"});
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "w.csv"));
}

TEST(IoCsvStrings, EmptyTablesKeepTheirStringTypes) {
  temp_dir dir;
  write_bytes(dir / "h.csv", "k,s:string,l:large_string\n");
  auto const t = io::read_csv(dir / "h.csv", std::vector<std::string>{"l", "s"});
  EXPECT_EQ(t.data.num_rows(), 0);
  EXPECT_EQ(strings_of(t, 0, type_id::large_string), texts{});
  EXPECT_EQ(strings_of(t, 1), texts{});
  auto const s = string_column({});
  io::write_csv(dir / "w.csv", {"s"}, joinery::table_view({s.view()}));
  EXPECT_EQ(read_bytes(dir / "w.csv"), "s:string\n");
  EXPECT_EQ(strings_of(io::read_csv(dir / "w.csv"), 0), texts{});
}

TEST(IoCsvStrings, NpyRefusesStringsBothWays) {
  temp_dir dir;
  auto const s = string_column({"a", "b"});
  std::vector<std::int64_t> const k{1, 2};
  auto const kc = column::from_host(k);
  expect_error<joinery::logic_error>([&] { io::write_npy(dir / "s.npy", s.view()); },
                                     {"string column", ".npy holds no strings", "write CSV"});
  expect_error<joinery::logic_error>(
    [&] {
      io::write_npy_dir(dir / "d", {"k", "name"}, joinery::table_view({kc.view(), s.view()}));
    },
    {"column 'name'", "string column", "write CSV"});
  expect_error<joinery::logic_error>(
    [&] {
      io::write_table(dir / "t", {"k", "name"}, joinery::table_view({kc.view(), s.view()}));
    },
    {"column 'name'", "write CSV"});
  expect_error<joinery::logic_error>(
    [&] { io::table_writer w(dir / "w", {"k", "name"}, {type_id::int64, type_id::large_string}); },
    {"column 'name'", "large_string column", "write CSV"});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{});

  for (auto const* descr : {"|O", "<U5", ">U3", "|S4", "|a2"}) {
    auto const p = dir / "x.npy";
    write_bytes(p, npy_bytes(1, dict_for(descr, "(2,)"), std::string(40, 'x')));
    expect_error<joinery::input_error>(
      [&] { (void)io::read_npy(p); },
      {"dtype '" + std::string(descr) + "'", "strings in .npy are not supported",
       "use CSV with a name:string header or Arrow through Python"});
  }
}

}  // namespace
