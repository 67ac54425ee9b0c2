// Reading CSV: line endings, rows longer than a parse chunk, blank lines; reading chosen columns
// of CSV files and .npy directories; large .npy columns mapped.
#include "io_test_util.hpp"
#include "support/threads.hpp"

#include <joinery/io.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using joinery::column;
using joinery::size_type;
using joinery::type_id;
namespace io = joinery::io;
using namespace joinery::test::io_util;
using i64s = std::vector<std::int64_t>;

i64s values(io::named_table const& t, size_type j, std::int64_t null_as = -999) {
  return int64_values(t, j, null_as);
}

// ------------------------------------------------------------------------------ line endings

TEST(IoCsvLines, CrOnlyCrlfAndMixedLineEnds) {
  temp_dir dir;
  auto const read = [&](std::string const& text) {
    write_bytes(dir / "t.csv", text);
    return io::read_csv(dir / "t.csv");
  };
  for (std::string const text : {"k,v\r1,10\r2,20\r", "k,v\r1,10\r2,20", "k,v\r\n1,10\r2,20\n",
                                 "k,v\n1,10\r\n2,20\r", "\xEF\xBB\xBFk,v\r1,10\r\n2,20"}) {
    auto const t = read(text);
    ASSERT_EQ(t.names, (std::vector<std::string>{"k", "v"})) << text;
    EXPECT_EQ(values(t, 0), (i64s{1, 2})) << text;
    EXPECT_EQ(values(t, 1), (i64s{10, 20})) << text;
  }
  // "\r\n" is one line end, "\n\r" two: in one column the empty line between is a null.
  auto const one = read("a\r1\r\n2\n\r3\r\r4\n");
  EXPECT_EQ(values(one, 0), (i64s{1, 2, -999, 3, -999, 4}));
  EXPECT_EQ(one.view().column(0).null_count(), 2);
  auto const header_only = read("p,q:int8\r");
  EXPECT_EQ(header_only.names, (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(header_only.data.num_rows(), 0);

  // Errors name the line whatever the line ends before it.
  write_bytes(dir / "e.csv", "k,v\r1,10\r2,x\r3,30\r");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "e.csv"); },
                                     {"e.csv", "line 3:", "'x'", "column 'v'"});
  write_bytes(dir / "e.csv", "k,v\r\n1,1\r2,2\n3,3\r\n4,oops\r5,5");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "e.csv"); },
                                     {"line 5:", "'oops'"});
  write_bytes(dir / "e.csv", "k,v\r1,1\r2\r");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "e.csv"); },
                                     {"line 3:", "1 fields", "2"});
}

TEST(IoCsvLines, HeaderWithoutLineEndIsBounded) {
  temp_dir dir;
  // Over 1 MiB and no line end: not a header row, whatever its bytes are.
  write_bytes(dir / "long.csv", std::string(std::size_t{2} << 20, '7'));
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "long.csv"); },
                                     {"long.csv", "line 1", "no line end", "1 MiB"});
  std::string names;
  for (int i = 0; i < 200'000; ++i) { names += (i ? ",c" : "c") + std::to_string(i); }
  write_bytes(dir / "wide.csv", names);  // 1.3 MB of names
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "wide.csv"); },
                                     {"wide.csv", "line 1", "1 MiB"});
  // Below the bound a header without a line end is a header-only file.
  names.resize(names.find(",c70000"));
  write_bytes(dir / "ok.csv", names);
  auto const t = io::read_csv(dir / "ok.csv");
  EXPECT_EQ(t.data.num_columns(), 70'000);
  EXPECT_EQ(t.data.num_rows(), 0);
  EXPECT_EQ(t.names.back(), "c69999");
}

// ------------------------------------------------------------------- rows longer than a chunk

TEST(IoCsvChunks, WideRowsSpanManyChunks) {
  // 3 rows x 30,001 columns: every line (about 200 KB) spans several 64 KiB chunks.
  temp_dir dir;
  int const cols = 30'001;
  std::string text;
  for (int j = 0; j < cols; ++j) { text += (j ? ",c" : "c") + std::to_string(j); }
  text += '\n';
  for (int r = 0; r < 3; ++r) {
    for (int j = 0; j < cols; ++j) {
      text += (j ? "," : "") + std::to_string(std::int64_t{r} * 1'000'000 + j);
    }
    if (r < 2) { text += '\n'; }  // the last line without a line end
  }
  write_bytes(dir / "wide.csv", text);
  for (int threads : {1, 2, 3, 8}) {
    joinery::test::scoped_threads const scoped(threads);
    auto const t = io::read_csv(dir / "wide.csv");
    ASSERT_EQ(t.data.num_columns(), cols);
    ASSERT_EQ(t.data.num_rows(), 3) << threads << " threads";
    for (size_type j = 0; j < cols; ++j) {
      ASSERT_EQ(values(t, j), (i64s{j, 1'000'000 + j, 2'000'000 + j})) << "column " << j;
    }
  }
  // A ragged wide row is still reported on its own line.
  text.erase(text.rfind(','));
  write_bytes(dir / "wide.csv", text + "\n");
  joinery::test::scoped_threads const scoped(4);
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "wide.csv"); },
                                     {"line 4:", "30000 fields", "30001"});
}

TEST(IoCsvChunks, MegabyteFieldsAnywhere) {
  // Long runs of leading zeros and of blanks around values, in the middle and on the last line.
  temp_dir dir;
  std::size_t const mb = std::size_t{1} << 20;
  std::string const zeros(mb, '0');
  std::string const blanks(mb, ' ');
  std::string const tabs(mb, '\t');
  for (std::string const end : {"", "\n", "\r\n", "\r"}) {
    std::string const text = "k,v:uint16,f:float64\n1," + zeros + "1,2.5\n2," + blanks + "5" +
                             tabs + ",-" + zeros + ".25\r\n3,7," + blanks + "1e3" + tabs + "\r" +
                             "4," + zeros + "42," + zeros + end;
    write_bytes(dir / "long.csv", text);
    for (int threads : {1, 2, 8}) {
      joinery::test::scoped_threads const scoped(threads);
      auto const t = io::read_csv(dir / "long.csv");
      ASSERT_EQ(t.data.num_rows(), 4) << threads << " threads, end " << end.size();
      EXPECT_EQ(values(t, 0), (i64s{1, 2, 3, 4}));
      EXPECT_EQ(t.data.column(1).to_vector<std::uint16_t>(),
                (std::vector<std::uint16_t>{1, 5, 7, 42}));
      EXPECT_EQ(t.data.column(2).to_vector<double>(), (std::vector<double>{2.5, -0.25, 1e3, 0}));
      EXPECT_EQ(t.view().column(2).null_count(), 0);
    }
  }
  // An error after a long line still names its line.
  write_bytes(dir / "bad.csv", "k,v\n1," + zeros + "1\n2,2\n3,x\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "bad.csv"); },
                                     {"line 4:", "'x'"});
}

TEST(IoCsvChunks, MixedLineEndsAcrossChunks) {
  // Many chunks cut between "\r" and "\n" or after a lone "\r": every row survives.
  temp_dir dir;
  size_type const rows = 200'000;
  char const* const ends[] = {"\n", "\r\n", "\r"};
  std::string text = "a,b\r\n";
  for (size_type i = 0; i < rows; ++i) {
    text += std::to_string(i) + "," + std::to_string(-3 * i) + ends[(i * 7 + i / 5) % 3];
  }
  write_bytes(dir / "mixed.csv", text);
  i64s a;
  i64s b;
  for (size_type i = 0; i < rows; ++i) {
    a.push_back(i);
    b.push_back(-3 * i);
  }
  for (int threads : {1, 3, 8}) {
    joinery::test::scoped_threads const scoped(threads);
    auto const t = io::read_csv(dir / "mixed.csv");
    ASSERT_EQ(t.data.num_rows(), rows) << threads << " threads";
    EXPECT_EQ(values(t, 0), a);
    EXPECT_EQ(values(t, 1), b);
  }
  auto const at = text.find("150000,-450000");
  write_bytes(dir / "mixed.csv", text.substr(0, at) + "?" + text.substr(at));
  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "mixed.csv"); },
                                     {"line 150002:", "'?150000'", "column 'a'"});
}

// ------------------------------------------------------------------------------- blank lines

TEST(IoCsvBlankLines, TrailingBlankLinesAreSkipped) {
  temp_dir dir;
  auto const read = [&](std::string const& text) {
    write_bytes(dir / "t.csv", text);
    return io::read_csv(dir / "t.csv");
  };
  for (std::string const tail : {"\n\n", "\n\n\n", "\r\n\r\n", "\r\r", "\n\r\n\r\n\r", "\r\n\n"}) {
    auto const t = read("k,v\n1,10\n2,20" + tail);
    ASSERT_EQ(t.data.num_rows(), 2) << "tail of " << tail.size();
    EXPECT_EQ(values(t, 0), (i64s{1, 2}));
    EXPECT_EQ(values(t, 1), (i64s{10, 20}));
    EXPECT_EQ(read("k,v" + tail).data.num_rows(), 0);
  }
  // Many blank lines (several chunks of them) after many rows.
  std::string text = "k,v\n";
  i64s k;
  for (std::int64_t i = 0; i < 50'000; ++i) {
    text += std::to_string(i) + ",1\n";
    k.push_back(i);
  }
  text += std::string(300'000, '\n');
  joinery::test::scoped_threads const scoped(4);
  EXPECT_EQ(values(read(text), 0), k);

  // One column: empty lines inside are nulls, those at the end are dropped.
  auto const one = read("a\n1\n\n2\n\n\n");
  EXPECT_EQ(values(one, 0), (i64s{1, -999, 2}));
  EXPECT_EQ(one.view().column(0).null_count(), 1);
  EXPECT_EQ(read("a\n\n").data.num_rows(), 0);
  EXPECT_EQ(values(read("a\r\r5\r\r"), 0), (i64s{-999, 5}));
}

TEST(IoCsvBlankLines, BlankLineInsideIsAnError) {
  temp_dir dir;
  auto const refuse = [&](std::string const& text, std::string const& line) {
    write_bytes(dir / "b.csv", text);
    expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "b.csv"); },
                                       {"b.csv", line, "blank", "2 columns"});
  };
  refuse("k,v\n1,10\n\n2,20\n", "line 3:");
  refuse("k,v\n\n1,10\n", "line 2:");
  refuse("k,v\r\n1,10\r\n\r\n2,20\r\n\r\n", "line 3:");
  refuse("k,v\r1,10\r2,20\r\r3,30", "line 4:");
  refuse("k,v\n1,10\n\r\n2,20\n", "line 3:");
}

// ---------------------------------------------------------------------------- chosen columns

/// Expects `got` to hold exactly the columns `names` of `full`, in that order.
void expect_columns_of(io::named_table const& got, io::named_table const& full,
                       std::vector<std::string> const& names) {
  ASSERT_EQ(got.names, names);
  ASSERT_EQ(got.data.num_columns(), static_cast<size_type>(names.size()));
  for (std::size_t k = 0; k < names.size(); ++k) {
    expect_same_column(got.data.column(static_cast<size_type>(k)).view(),
                       full.data.column(full.column_index(names[k])).view(), names[k]);
  }
}

TEST(IoReadColumns, CsvReadsOnlyTheNamedColumns) {
  temp_dir dir;
  size_type const rows = 100'000;  // several chunks
  std::vector<column> cols;
  cols.push_back(random_column(type_id::int64, rows, 21));
  cols.push_back(random_column(type_id::uint8, rows, 22));
  cols.push_back(random_column(type_id::float32, rows, 23));
  cols.push_back(random_column(type_id::uint64, rows, 24));
  add_nulls(cols[0], 7, 3);
  add_nulls(cols[2], 11, 5);
  std::vector<std::string> const names{"a", "b", "c", "d"};
  io::write_csv(dir / "t.csv", names, view_of(cols));
  joinery::test::scoped_threads const scoped(4);
  auto const full = io::read_csv(dir / "t.csv");
  expect_columns_of(io::read_csv(dir / "t.csv", {"d", "a"}), full, {"d", "a"});
  expect_columns_of(io::read_csv(dir / "t.csv", {"c"}), full, {"c"});
  expect_columns_of(io::read_csv(dir / "t.csv", {"b", "b", "d", "b"}), full, {"b", "d"});
  expect_columns_of(io::read_csv(dir / "t.csv", {"d", "c", "b", "a"}), full, {"d", "c", "b", "a"});
  expect_columns_of(io::read_table(dir / "t.csv", {"c", "a"}), full, {"c", "a"});

  expect_error<joinery::input_error>([&] { (void)io::read_csv(dir / "t.csv", {"a", "zz"}); },
                                     {"t.csv", "no column 'zz'; columns are: a, b, c, d"});
  expect_error<joinery::logic_error>([&] { (void)io::read_csv(dir / "t.csv", std::vector<std::string>{}); },
                                     {"t.csv", "no columns"});
}

TEST(IoReadColumns, CsvOtherFieldsAreCountedNotParsed) {
  temp_dir dir;
  auto const path = dir / "t.csv";
  // Values the other columns could not hold do not matter; their number does.
  write_bytes(path, "k,junk:int8,v\n1,abc,-5\n2,999,\n3,,18446744073709551615\n");
  auto const k = io::read_csv(path, {"k"});
  EXPECT_EQ(values(k, 0), (i64s{1, 2, 3}));
  expect_error<joinery::input_error>([&] { (void)io::read_csv(path, {"v", "k"}); },
                                     {"column 'v'", "mixes", "line 2", "line 4"});
  write_bytes(path, "k,junk:int8,v\n1,abc,5\n2,999,\n3,,18446744073709551615\n");
  auto const kv = io::read_csv(path, {"v", "k"});
  EXPECT_EQ(kv.data.column(0).type(), type_id::uint64);
  EXPECT_EQ(kv.data.column(0).to_vector<std::uint64_t>(),
            (std::vector<std::uint64_t>{5, 0, 18446744073709551615ull}));
  EXPECT_EQ(kv.view().column(0).null_count(), 1);
  EXPECT_FALSE(kv.view().column(0).is_valid(1));
  EXPECT_EQ(values(kv, 1), (i64s{1, 2, 3}));
  expect_error<joinery::input_error>([&] { (void)io::read_csv(path, {"junk"}); },
                                     {"line 2:", "'abc'", "column 'junk'"});
  // Ragged and blank rows are errors whichever columns are read.
  write_bytes(path, "k,x,y\n1,2,3\n4,5\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(path, {"k"}); },
                                     {"line 3:", "2 fields", "3"});
  write_bytes(path, "k,x,y\n1,2,3\n4,5,6,7\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(path, {"y"}); },
                                     {"line 3:", "4 fields", "3"});
  write_bytes(path, "k,x,y\n1,2,3\n\n4,5,6\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(path, {"x"}); },
                                     {"line 3:", "blank"});
  // The header is checked whole.
  write_bytes(path, "k,x:int128\n1,2\n");
  expect_error<joinery::input_error>([&] { (void)io::read_csv(path, {"k"}); }, {"int128"});
}

// Columns of 1 MiB or more are mapped, not read: every value as written, at every type width,
// in a directory beside small (read) ones; writing into a mapped column leaves the file as it was.
TEST(IoNpyMapped, LargeColumnsAreMappedAndWritesStayPrivate) {
  temp_dir dir;
  fs::create_directories(dir / "t");
  std::vector<column> cols;
  std::vector<std::string> names;
  for (auto type : {type_id::int8, type_id::int32, type_id::uint64, type_id::float64}) {
    cols.push_back(random_column(type, (size_type{1} << 21) + 7, 11 + static_cast<int>(type)));
    names.push_back("c" + std::to_string(static_cast<int>(type)));
  }
  for (std::size_t k = 0; k < cols.size(); ++k) {
    io::write_npy(dir / "t" / (names[k] + ".npy"), cols[k].view());
  }
  auto const before = read_bytes(dir / "t" / "c2.npy");
  {
    auto t = io::read_npy_dir(dir / "t");
    ASSERT_EQ(t.data.num_columns(), 4);
    for (std::size_t k = 0; k < cols.size(); ++k) {
      expect_same_column(t.data.column(static_cast<size_type>(k)).view(), cols[k].view(), names[k]);
    }
    // c2 (int32, 8 MiB) is a mapping of its file.
    bool mapped = false;
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
      mapped = mapped || line.find(fs::canonical(dir / "t" / "c2.npy").string()) != std::string::npos;
    }
    EXPECT_TRUE(mapped);
    auto* v = t.data.column(1).data_as<std::int32_t>();
    v[0] = v[0] + 1;
    v[(size_type{1} << 21)] = 12345;
  }
  EXPECT_EQ(read_bytes(dir / "t" / "c2.npy"), before);
  auto const again = io::read_npy(dir / "t" / "c2.npy");
  expect_same_column(again.view(), cols[1].view(), "c2 again");
}

TEST(IoReadColumns, NpyDirOpensOnlyTheNamedFiles) {
  temp_dir dir;
  auto const d = dir / "t";
  std::vector<column> cols;
  cols.push_back(random_column(type_id::int32, 1000, 31));
  cols.push_back(random_column(type_id::float64, 1000, 32));
  cols.push_back(random_column(type_id::uint16, 1000, 33));
  io::write_npy_dir(d, {"a", "b", "c"}, view_of(cols));
  auto const full = io::read_npy_dir(d);
  // Files not asked for may be broken, of another length or unreadable.
  write_bytes(d / "broken.npy", "not a .npy file at all");
  io::write_npy(d / "short.npy", column::from_host(std::vector<std::int64_t>{1, 2}));
  expect_error<joinery::input_error>([&] { (void)io::read_npy_dir(d); }, {"broken.npy"});
  expect_columns_of(io::read_npy_dir(d, {"c", "a"}), full, {"c", "a"});
  expect_columns_of(io::read_npy_dir(d, {"b", "b"}), full, {"b"});
  expect_columns_of(io::read_table(d, {"a", "c", "b"}), full, {"a", "c", "b"});
  auto const s = io::read_npy_dir(d, {"short"});
  EXPECT_EQ(s.data.column(0).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 2}));

  expect_error<joinery::input_error>([&] { (void)io::read_npy_dir(d, {"a", "broken"}); },
                                     {"broken.npy", "magic"});
  expect_error<joinery::input_error>([&] { (void)io::read_npy_dir(d, {"a", "short"}); },
                                     {"'a.npy'", "'short.npy'", "1000 rows", "2"});
  expect_error<joinery::input_error>(
    [&] { (void)io::read_table(d, {"zz"}); },
    {"/t'", "no column 'zz'; columns are: a, b, broken, c, short"});
  expect_error<joinery::logic_error>([&] { (void)io::read_npy_dir(d, {}); }, {"no columns"});
}

}  // namespace
