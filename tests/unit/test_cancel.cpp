// Cancellation between phases (joinery/cancel.hpp) on the CPU backend.
#include <joinery/cancel.hpp>
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

namespace {

using namespace joinery;

std::vector<std::int64_t> iota_keys(std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1);
  return v;
}

TEST(Cancel, AFlagSetBeforeTheCallStopsEveryJoinAndGroupBy) {
  auto const keys = iota_keys(1000);
  table_view const t({column_view::of(keys)});
  std::atomic<bool> flag{true};
  cancellation_scope scope(flag);
  for (auto a : join_algorithms_on(backend::cpu)) {
    join_options o;
    o.backend = backend::cpu;
    o.algorithm = a;
    EXPECT_THROW(join(t, 0, t, 0, o), cancelled) << to_string(a);
  }
  groupby_options g;
  g.backend = backend::cpu;
  EXPECT_THROW(groupby(t, 0, {{aggregation_kind::count, 0}}, g), cancelled);
}

TEST(Cancel, AFlagSetDuringALongNestedLoopJoinStopsItEarly) {
  // 2^17 x 2^17 nested-loop comparisons take seconds on two cores; cancelled after 50 ms.
  auto const keys = iota_keys(std::int64_t{1} << 17);
  table_view const t({column_view::of(keys)});
  std::atomic<bool> flag{false};
  join_options o;
  o.backend = backend::cpu;
  o.algorithm = join_algorithm::nested_loop;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    flag.store(true);
  });
  auto const t0 = std::chrono::steady_clock::now();
  {
    cancellation_scope scope(flag);
    EXPECT_THROW(join(t, 0, t, 0, o), cancelled);
  }
  canceller.join();
  auto const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 1.0);
}

TEST(Cancel, ScopesNestAndAnUnsetFlagChangesNothing) {
  auto const keys = iota_keys(5000);
  table_view const t({column_view::of(keys)});
  std::atomic<bool> set{true};
  std::atomic<bool> unset{false};
  join_options o;
  o.backend = backend::cpu;
  cancellation_scope outer(set);
  {
    cancellation_scope inner(unset);
    EXPECT_EQ(join(t, 0, t, 0, o).num_rows(), 5000);
  }
  EXPECT_THROW(join(t, 0, t, 0, o), cancelled);
}

}  // namespace
