// What `automatic` runs, and the row limits of the algorithms that number rows in 32 bits: sizes
// far beyond this machine's memory are decided from counts alone.
#include "join/choose.hpp"

#include <joinery/error.hpp>

#include <gtest/gtest.h>

#include <string>

namespace joinery::test {
namespace {

std::vector<join_algorithm> const gpu_list{
  join_algorithm::nested_loop, join_algorithm::indexed_nested_loop, join_algorithm::sort_merge,
  join_algorithm::radix_hash, join_algorithm::no_partition_hash};
std::vector<join_algorithm> const cpu_list{
  join_algorithm::nested_loop, join_algorithm::no_partition_hash, join_algorithm::sort_merge,
  join_algorithm::indexed_nested_loop, join_algorithm::radix_hash};
constexpr size_type two_to(int k) { return size_type{1} << k; }

TEST(JoinChoice, RadixJoinWhileTheSidesFitThirtyTwoBitRowIds) {
  using detail::automatic_join_algorithm;
  EXPECT_EQ(automatic_join_algorithm(backend::gpu, gpu_list, false, two_to(27), two_to(28)),
            join_algorithm::radix_hash);
  EXPECT_EQ(automatic_join_algorithm(backend::gpu, gpu_list, false, two_to(31),
                                     detail::gpu_row_id32_max_rows),
            join_algorithm::radix_hash);
  EXPECT_EQ(automatic_join_algorithm(backend::cpu, cpu_list, false, two_to(31), two_to(33)),
            join_algorithm::radix_hash);  // the CPU's radix join widens its row ids
}

TEST(JoinChoice, LargerSidesOnTheGpuGoToTheNoPartitioningJoin) {
  using detail::automatic_join_algorithm;
  // 2^31 x 2^32 rows of 8-byte keys: refused by `automatic` before.
  EXPECT_EQ(automatic_join_algorithm(backend::gpu, gpu_list, false, two_to(31), two_to(32)),
            join_algorithm::no_partition_hash);
  EXPECT_EQ(automatic_join_algorithm(backend::gpu, gpu_list, false, two_to(32), 10),
            join_algorithm::no_partition_hash);
  EXPECT_EQ(automatic_join_algorithm(backend::gpu, gpu_list, true, two_to(31), two_to(32)),
            join_algorithm::nested_loop);
  EXPECT_EQ(automatic_join_algorithm(backend::gpu, gpu_list, true, 100, 200),
            join_algorithm::indexed_nested_loop);
}

TEST(JoinChoice, AnExplicitAlgorithmPastItsLimitSaysWhatWouldRun) {
  for (auto algo : {join_algorithm::radix_hash, join_algorithm::sort_merge,
                    join_algorithm::indexed_nested_loop}) {
    auto const why = detail::size_refusal(backend::gpu, algo, two_to(31), two_to(32));
    ASSERT_TRUE(why.has_value()) << to_string(algo);
    EXPECT_NE(why->find("numbers rows in 32 bits"), std::string::npos) << *why;
    EXPECT_NE(why->find("4294967296"), std::string::npos) << *why;
    EXPECT_NE(why->find("no_partition_hash"), std::string::npos) << *why;
    EXPECT_FALSE(detail::size_refusal(backend::cpu, algo, two_to(31), two_to(32)).has_value());
    EXPECT_FALSE(detail::size_refusal(backend::gpu, algo, two_to(31), two_to(31)).has_value());
  }
  EXPECT_FALSE(detail::size_refusal(backend::gpu, join_algorithm::no_partition_hash, two_to(33),
                                    two_to(34))
                 .has_value());
}

TEST(JoinChoice, NothingAvailableIsAClearError) {
  try {
    (void)detail::automatic_join_algorithm(backend::gpu, {}, false, 10, 10);
    FAIL() << "expected a refusal";
  } catch (logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find("no join algorithm of the gpu backend"), std::string::npos)
      << e.what();
  }
}

// Host data whose in-GPU join would not fit the device budget is streamed: 2^27 x 2^33 rows of
// 4-byte keys and payloads (64 GiB of probe side) against an H200's 139 GiB and an 8 GiB budget.
TEST(JoinChoice, HostDataPastTheBudgetIsStreamed) {
  auto const gib = std::size_t{1} << 30;
  auto const need = detail::in_gpu_join_bytes(std::size_t{8} << 27, std::size_t{8} << 33,
                                              two_to(33), 0);
  EXPECT_EQ(need, 3 * ((std::size_t{8} << 27) + (std::size_t{8} << 33)));
  EXPECT_TRUE(detail::prefer_streamed(false, memory_space::host, need, 139 * gib));
  auto const small = detail::in_gpu_join_bytes(std::size_t{8} << 27, std::size_t{8} << 28,
                                               two_to(28), 16);
  EXPECT_FALSE(detail::prefer_streamed(false, memory_space::host, small, 139 * gib));
  EXPECT_TRUE(detail::prefer_streamed(false, memory_space::host, small, 8 * gib));
  EXPECT_FALSE(detail::prefer_streamed(false, memory_space::device, small, 8 * gib));  // already on the device
  EXPECT_FALSE(detail::prefer_streamed(true, memory_space::host, small, 8 * gib));    // band: nested loops
  // An aggregate of a large pinned probe side hides the join behind the copies; pageable data
  // goes to the in-GPU join unless it does not fit.
  auto const pinned = memory_space::pinned_host;
  EXPECT_TRUE(detail::prefer_streamed(false, pinned, small, 139 * gib, true, two_to(28)));
  EXPECT_FALSE(detail::prefer_streamed(false, pinned, small, 139 * gib, false, two_to(28)));
  EXPECT_FALSE(detail::prefer_streamed(false, pinned, small, 139 * gib, true, two_to(20)));
  EXPECT_FALSE(detail::prefer_streamed(false, memory_space::host, small, 139 * gib, true, two_to(28)));
  EXPECT_FALSE(detail::prefer_streamed(false, memory_space::device, small, 139 * gib, true, two_to(28)));
}

// A build side that the streamed join could not keep on the device beside its chunks goes to
// triton: 2^31 rows of 4-byte keys and payloads (16 GiB, 32 GiB of table) under an 8 GiB budget,
// while 2^27 of them (1 GiB, 2 GiB of table) stay streamed.
TEST(JoinChoice, BuildSidesPastHalfTheBudgetGoToTriton) {
  auto const gib = std::size_t{1} << 30;
  EXPECT_TRUE(detail::prefer_triton(16 * gib, 32 * gib, 8 * gib));
  EXPECT_FALSE(detail::prefer_triton(1 * gib, 2 * gib, 8 * gib));
  EXPECT_TRUE(detail::prefer_triton(1 * gib, 2 * gib, 4 * gib));
  EXPECT_FALSE(detail::prefer_triton(16 * gib, 32 * gib, 139 * gib));
}

}  // namespace
}  // namespace joinery::test
