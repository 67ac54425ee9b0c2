// table_writer: results written batch by batch, byte for byte what write_table writes whole.
#include "io_test_util.hpp"

#include <joinery/io.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace joinery::test::io_util;
using joinery::table_view;
namespace io = joinery::io;

// Rows [begin, end) of every column, as views.
table_view slice(std::vector<column> const& cols, size_type begin, size_type end) {
  std::vector<column_view> views;
  for (auto const& c : cols) {
    auto const v = c.view();
    auto const* base = static_cast<char const*>(v.data()) + begin * static_cast<size_type>(size_of(v.type()));
    views.emplace_back(v.type(), end > begin ? base : nullptr, end - begin, v.space());
  }
  return table_view(std::move(views));
}

std::vector<column> three_columns(size_type rows) {
  std::vector<column> cols;
  cols.push_back(random_column(type_id::int64, rows, 1));
  cols.push_back(random_column(type_id::uint16, rows, 2));
  cols.push_back(random_column(type_id::int32, rows, 3));
  return cols;
}

void write_in_batches(fs::path const& path, std::vector<column> const& cols,
                      std::vector<size_type> const& cuts,
                      io::existing_output mode = io::existing_output::refuse) {
  std::vector<type_id> types;
  for (auto const& c : cols) { types.push_back(c.type()); }
  io::table_writer w(path, {"k", "a", "b"}, types, mode);
  size_type begin = 0;
  for (auto end : cuts) {
    w.append(slice(cols, begin, end));
    begin = end;
  }
  EXPECT_EQ(w.rows_written(), begin);
  w.finish();
}

TEST(IoTableWriter, BatchesWriteWhatOneWholeTableWrites) {
  temp_dir dir;
  auto const cols = three_columns(10007);
  std::vector<size_type> const cuts{0, 1, 4000, 4000, 9999, 10007};  // empty batches included
  for (std::string const name : {"out.csv", "out"}) {
    write_in_batches(dir / ("batched_" + name), cols, cuts);
    io::write_table(dir / ("whole_" + name), {"k", "a", "b"}, view_of(cols));
    if (name == "out.csv") {
      EXPECT_EQ(read_bytes(dir / ("batched_" + name)), read_bytes(dir / ("whole_" + name)));
    } else {
      for (std::string const c : {"k", "a", "b"}) {
        EXPECT_EQ(read_bytes(dir / ("batched_" + name) / (c + ".npy")).size(),
                  read_bytes(dir / ("whole_" + name) / (c + ".npy")).size());
      }
      auto const back = io::read_table(dir / ("batched_" + name));
      ASSERT_EQ(back.names, (std::vector<std::string>{"a", "b", "k"}));
      expect_same_column(back.data.column(2).view(), cols[0].view(), "k");
      expect_same_column(back.data.column(0).view(), cols[1].view(), "a");
      expect_same_column(back.data.column(1).view(), cols[2].view(), "b");
    }
  }
}

TEST(IoTableWriter, NoBatchWritesAnEmptyTableOfTheTypes) {
  temp_dir dir;
  auto const cols = three_columns(0);
  write_in_batches(dir / "e.csv", cols, {});
  write_in_batches(dir / "e", cols, {});
  for (std::string const name : {"e.csv", "e"}) {
    auto const back = io::read_table(dir / name);
    EXPECT_EQ(back.data.num_rows(), 0);
    EXPECT_EQ(back.data.num_columns(), 3);
  }
  EXPECT_EQ(io::read_table(dir / "e").data.column(0).type(), type_id::uint16);
}

TEST(IoTableWriter, NothingAppearsUntilFinishAndAnUnfinishedWriterLeavesNothing) {
  temp_dir dir;
  auto const cols = three_columns(100);
  for (std::string const name : {"x.csv", "x"}) {
    {
      io::table_writer w(dir / name, {"k", "a", "b"},
                         {type_id::int64, type_id::uint16, type_id::int32});
      w.append(view_of(cols));
      EXPECT_FALSE(fs::exists(dir / name));
    }  // destroyed unfinished
    EXPECT_TRUE(dir.entries().empty()) << name;
  }
}

TEST(IoTableWriter, ExistingTargetsAreKeptUnlessReplacedAndBadBatchesRefused) {
  temp_dir dir;
  auto const cols = three_columns(50);
  write_in_batches(dir / "t.csv", cols, {50});
  write_in_batches(dir / "t", cols, {50});
  auto const before = read_bytes(dir / "t.csv");
  expect_error<joinery::input_error>([&] { write_in_batches(dir / "t.csv", three_columns(3), {3}); }, {"exists"});
  expect_error<joinery::input_error>([&] { write_in_batches(dir / "t", three_columns(3), {3}); }, {"exists"});
  EXPECT_EQ(read_bytes(dir / "t.csv"), before);
  write_in_batches(dir / "t.csv", three_columns(3), {3}, joinery::io::existing_output::replace);
  write_in_batches(dir / "t", three_columns(3), {3}, joinery::io::existing_output::replace);
  EXPECT_EQ(io::read_table(dir / "t.csv").data.num_rows(), 3);
  EXPECT_EQ(io::read_table(dir / "t").data.num_rows(), 3);

  io::table_writer w(dir / "u", {"k", "a", "b"}, {type_id::int64, type_id::uint16, type_id::int32});
  auto wrong = three_columns(5);
  wrong[1] = random_column(type_id::int16, 5, 9);
  EXPECT_THROW(w.append(view_of(wrong)), joinery::logic_error);
  auto nulls = three_columns(5);
  add_nulls(nulls[0], 2, 0);
  EXPECT_THROW(w.append(view_of(nulls)), joinery::logic_error);  // .npy has no nulls
  EXPECT_THROW(io::table_writer(dir / "v.parquet", {"k"}, {type_id::int64}), joinery::input_error);
}

}  // namespace
