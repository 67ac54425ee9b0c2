// The map primitive (hash_keys) against a CPU reference: every key type, both hash functions,
// sizes around the tile, a non-blocking stream, > 2^31 rows; and the refusals (which also run
// without a GPU).
#include "core/hash.hpp"
#include "primitives/detail/map_policy.hpp"
#include "support/refusal.hpp"

#include <joinery/primitives/map.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace joinery::test {
namespace {

/// The reference: the functions of core/hash.hpp on the key's bit pattern.
template <class U>
U reference_hash(U bits, hash_function fn) {
  if constexpr (sizeof(U) == 4) {
    return fn == hash_function::murmur ? detail::fmix32(bits) : detail::multiply_shift_a32 * bits;
  } else {
    return fn == hash_function::murmur ? detail::fmix64(bits) : detail::multiply_shift_a64 * bits;
  }
}

class Map : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
  cuda_stream stream_;

  /// Hashes n random keys of type T (bits drawn from mix64) and compares every row.
  template <class T>
  void check(size_type n, hash_function fn, std::uint64_t seed) {
    using U = std::make_unsigned_t<T>;
    std::vector<T> keys(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < keys.size(); ++i) {
      keys[i] = static_cast<T>(detail::mix64(i ^ (seed << 40)));
    }
    auto const d = column::from_host(keys, device_resource(), stream_);
    auto const out = hash_keys(d.view(), fn, stream_);
    ASSERT_EQ(out.type(), sizeof(T) == 4 ? type_id::uint32 : type_id::uint64);
    ASSERT_EQ(out.size(), n);
    ASSERT_EQ(out.space(), memory_space::device);
    stream_.ref().synchronize();
    auto const got = out.template to_vector<U>();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(got[i], reference_hash(static_cast<U>(keys[i]), fn))
        << "row " << i << " of " << n << ", key " << keys[i];
    }
  }
};

TEST_F(Map, EveryKeyTypeAndHashAroundTiles) {
  constexpr size_type tile = detail::gpu::map_policy::tile_items;
  std::uint64_t seed = 1;
  for (size_type n : {size_type{0}, size_type{1}, size_type{31}, tile - 1, tile, tile + 1,
                      37 * tile + 5, (size_type{1} << 20) + 3}) {
    for (auto fn : {hash_function::murmur, hash_function::multiply_shift}) {
      check<std::int32_t>(n, fn, ++seed);
      check<std::uint32_t>(n, fn, ++seed);
      check<std::int64_t>(n, fn, ++seed);
      check<std::uint64_t>(n, fn, ++seed);
    }
  }
}

TEST_F(Map, BeyondTwoToThe31Rows) {
  // 2^31 + 1000 uint32 keys (8 GiB in, 8 GiB out): rows past 2^31 need 64-bit indices.
  size_type const n = (size_type{1} << 31) + 1000;
  if (get_device_info(0).total_memory < (std::size_t{20} << 30)) {
    GTEST_SKIP() << "needs 20 GiB of device memory";
  }
  check<std::uint32_t>(n, hash_function::murmur, 99);
}

TEST(MapRefusals, ClearMessages) {
  std::vector<std::int32_t> k32{5, -3, 7, 9};
  std::vector<std::int16_t> k16{5, 3, 7, 9};
  if (!built_with_cuda()) {
    expect_refusal([&] { (void)hash_keys(column_view::of(k32)); }, "built without CUDA");
    return;
  }
  expect_refusal([&] { (void)hash_keys(column_view::of(k16)); },
                 "keys must be int32, int64, uint32 or uint64, got int16");
  expect_refusal([&] { (void)hash_keys(column_view::of(k32)); },
                 "the key column is in host memory but must be in device memory");
  expect_refusal([&] { (void)hash_keys(column_view::of(k32), static_cast<hash_function>(7)); },
                 "unknown hash function");
  std::uint8_t mask = 0x0f;
  column_view const nullable(type_id::int32, k32.data(), 4, memory_space::host, &mask, 0);
  expect_refusal([&] { (void)hash_keys(nullable); }, "nullable");
  if (device_count() == 0) { return; }
  cuda_stream s;
  auto const dk = column::copy_of(column_view::of(k32), device_resource(), s);
  expect_refusal([&] { (void)hash_keys(dk.view(), hash_function::murmur, s, host_resource()); },
                 "the memory resource must allocate device memory, not host memory");
  s.ref().synchronize();
}

}  // namespace
}  // namespace joinery::test
