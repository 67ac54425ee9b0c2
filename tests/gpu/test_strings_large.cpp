// A string column past 2^31 - 1 characters (large_string, 64-bit offsets) as the key of a GPU
// join and group-by. One of the large tests (device-check --large).
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

namespace joinery::test {
namespace {

/// "s" and the 16-digit decimal of id(i): 17 characters a row.
template <class Id>
column numbered_strings(size_type n, type_id type, Id const& id) {
  constexpr std::int64_t width = 17;
  auto c = column::strings(type, n, static_cast<std::size_t>(n * width));
  char* chars = c.chars();
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i <= n; ++i) {
    if (type == type_id::large_string) {
      static_cast<std::int64_t*>(c.data())[i] = i * width;
    } else {
      static_cast<std::int32_t*>(c.data())[i] = static_cast<std::int32_t>(i * width);
    }
    if (i < n) {
      char text[width + 1];
      std::snprintf(text, sizeof text, "s%016lld", static_cast<long long>(id(i)));
      std::memcpy(chars + i * width, text, width);
    }
  }
  return c;
}

TEST(GpuStrings, KeysBeyondTwoToThe31Characters) {
  if (device_count() == 0) {
    GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh --large";
  }
  // 2^27 rows of 17 characters: 2.28e9 characters. Ids repeat every 2^22 rows.
  constexpr size_type rows = size_type{1} << 27;
  constexpr size_type ids = size_type{1} << 22;
  std::vector<column> probe_cols, build_cols;
  probe_cols.push_back(numbered_strings(rows, type_id::large_string,
                                        [](size_type i) { return i % ids; }));
  // Every fourth id, once: each matches rows / 4 probe rows in all.
  build_cols.push_back(numbered_strings(ids / 4, type_id::string,
                                        [](size_type j) { return 4 * j; }));
  table const probe(std::move(probe_cols)), build(std::move(build_cols));
  ASSERT_GT(probe.view().column(0).offset(rows), std::int64_t{1} << 31);

  join_options o;
  o.backend = backend::gpu;
  o.output = output_form::aggregate;
  auto const r = join(build.view(), 0, probe.view(), 0, o);
  EXPECT_EQ(r.aggregate.count, static_cast<std::uint64_t>(rows / 4));

  groupby_options g;
  g.backend = backend::gpu;
  g.sort_by_key = true;
  auto const groups = groupby(probe.view(), 0, {{aggregation_kind::count, -1}}, g);
  ASSERT_EQ(groups.num_groups(), ids);
  auto const v = groups.columns.view();
  for (size_type k = 0; k < ids; ++k) {
    char text[18];
    std::snprintf(text, sizeof text, "s%016lld", static_cast<long long>(k));
    ASSERT_EQ(v.column(0).string_at(k), std::string_view(text, 17)) << "group " << k;
    ASSERT_EQ(v.column(1).data_as<std::int64_t>()[k], rows / ids) << "group " << k;
  }
}

}  // namespace
}  // namespace joinery::test
