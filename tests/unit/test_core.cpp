#include <joinery/column.hpp>
#include <joinery/error.hpp>
#include <joinery/table.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

TEST(Core, ExpectsThrowsWithMessage) {
  try {
    JOINERY_EXPECTS(1 + 1 == 3, "arithmetic is broken");
    FAIL() << "no exception";
  } catch (joinery::logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find("arithmetic is broken"), std::string::npos);
  }
}

TEST(Core, TypeNamesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(joinery::type_id::float64); ++i) {
    auto const t = static_cast<joinery::type_id>(i);
    EXPECT_EQ(joinery::type_from_string(joinery::to_string(t)), t);
  }
  EXPECT_THROW(joinery::type_from_string("int128"), joinery::logic_error);
  EXPECT_EQ(joinery::size_of(joinery::type_id::uint16), 2u);
  EXPECT_TRUE(joinery::is_key_type(joinery::type_id::uint32));
  EXPECT_FALSE(joinery::is_key_type(joinery::type_id::int16));
}

TEST(Core, HostColumnCopyKeepsValuesAndMask) {
  std::vector<std::int64_t> v{-5, 7, 1LL << 40, 3};
  auto c = joinery::column::from_host(v);
  EXPECT_EQ(c.space(), joinery::memory_space::host);
  auto* mask = c.make_nullable();
  mask[0] &= static_cast<std::uint8_t>(~(1u << 2));  // row 2 null
  c.set_null_count(1);
  auto const copy = joinery::column::copy_of(c.view());
  EXPECT_EQ(copy.to_vector<std::int64_t>(), v);
  EXPECT_TRUE(copy.view().is_valid(1));
  EXPECT_FALSE(copy.view().is_valid(2));
  EXPECT_EQ(copy.view().null_count(), 1);
  EXPECT_THROW((void)copy.view().data_as<std::int32_t>(), joinery::logic_error);
}

TEST(Core, TableRefusesRaggedColumns) {
  std::vector<std::int32_t> a{1, 2, 3};
  std::vector<std::int32_t> b{1, 2};
  EXPECT_THROW(joinery::table_view({joinery::column_view::of(a), joinery::column_view::of(b)}),
               joinery::logic_error);
  joinery::table_view t({joinery::column_view::of(a)});
  EXPECT_EQ(t.num_rows(), 3);
  EXPECT_THROW((void)t.column(1), joinery::logic_error);
}

TEST(Core, DeviceResourceRefusedWithoutGpu) {
  if (joinery::device_count() > 0) { GTEST_SKIP() << "a GPU is present; covered by gpu tests"; }
  EXPECT_THROW((void)joinery::device_resource(), joinery::logic_error);
}

}  // namespace
