// GPU gather / scatter by 64-bit row ids against a CPU reference, for every type width (1, 2, 4,
// 8 bytes; integers and floats moved as bits), random (unclustered) and sorted (clustered) ids,
// sizes around the per-thread vector and the block tile, aligned and unaligned views (vector and
// scalar paths), the bounds check, and past 2^31 elements where the GPU has the memory.
#include <joinery/gen.hpp>
#include <joinery/primitives/gather.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace joinery::test {
namespace {

class GpuGather : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
  cuda_stream stream_;
};

// Only a CPU-only build has this refusal; a CUDA build runs the real tests instead.
#if !defined(JOINERY_HAS_CUDA)
TEST(GatherWithoutGpu, RefusesClearlyWhenBuiltWithoutCuda) {
  std::vector<std::int32_t> v{1, 2};
  std::vector<std::int64_t> ids{0};
  try {
    (void)gather(column_view::of(v), column_view::of(ids));
    FAIL() << "gather ran without the GPU backend";
  } catch (logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find("needs the GPU backend, built without CUDA"),
              std::string::npos)
        << e.what();
  }
  auto target = column::from_host(v);
  EXPECT_THROW(scatter(column_view::of(v), column_view::of(std::vector<std::int64_t>{0, 1}), target),
               logic_error);
}
#endif

/// Random non-zero bytes for `n` values of `t` (through gen's payload generator for integers;
/// floats reuse the bits of the unsigned type of their width).
std::vector<std::uint8_t> random_values(type_id t, size_type n, std::uint64_t seed) {
  type_id const as = t == type_id::float32 ? type_id::uint32
                     : t == type_id::float64 ? type_id::uint64
                                             : t;
  gen::relation_spec spec;
  spec.rows = n;
  spec.payload_types = {as};
  spec.seed = seed;
  auto const tab = gen::generate(spec);
  auto const& c = tab.view().column(1);
  auto const* p = static_cast<std::uint8_t const*>(c.data());
  return std::vector<std::uint8_t>(p, p + n * static_cast<size_type>(size_of(t)));
}

/// n row ids in [0, domain): uniform random, or sorted (clustered).
std::vector<std::int64_t> random_ids(size_type n, size_type domain, std::uint64_t seed,
                                     bool sorted) {
  gen::relation_spec spec;
  spec.rows = n;
  spec.kind = gen::key_kind::foreign;
  spec.key_type = type_id::int64;
  spec.domain = domain;
  spec.key_offset = 0;
  spec.seed = seed;
  auto const tab = gen::generate(spec);
  auto const* p = tab.view().column(0).data_as<std::int64_t>();
  std::vector<std::int64_t> ids(p, p + n);
  if (sorted) { std::sort(ids.begin(), ids.end()); }
  return ids;
}

/// A device copy of `bytes` placed `offset_elems` elements into a larger allocation, so that the
/// view's data is not 16-byte aligned when offset_elems * width is not a multiple of 16.
struct device_bytes {
  column storage;
  column_view view;
  device_bytes(type_id t, std::vector<std::uint8_t> const& bytes, size_type offset_elems,
               stream_ref s) {
    auto const w = static_cast<size_type>(size_of(t));
    auto const n = static_cast<size_type>(bytes.size()) / w;
    storage = column(t, n + offset_elems, device_resource(), s);
    auto* base = static_cast<std::uint8_t*>(storage.data()) + offset_elems * w;
    copy_bytes(base, memory_space::device, bytes.data(), memory_space::host, bytes.size(), s);
    view = column_view(t, n == 0 ? storage.data() : base, n, memory_space::device);
  }
};

std::vector<std::uint8_t> bytes_of(std::vector<std::int64_t> const& ids) {
  std::vector<std::uint8_t> b(ids.size() * sizeof(std::int64_t));
  if (!b.empty()) { std::memcpy(b.data(), ids.data(), b.size()); }
  return b;
}

std::vector<std::uint8_t> host_bytes(column_view const& c, stream_ref s) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(c.size()) * size_of(c.type()));
  copy_bytes(out.data(), memory_space::host, c.data(), c.space(), out.size(), s);
  return out;
}

/// Index of the first differing value ("" when equal).
std::string first_difference(std::vector<std::uint8_t> const& want,
                             std::vector<std::uint8_t> const& got, std::size_t width) {
  if (want.size() != got.size()) {
    return "sizes differ: " + std::to_string(want.size()) + " vs " + std::to_string(got.size());
  }
  for (std::size_t i = 0; i < want.size(); i += width) {
    if (std::memcmp(&want[i], &got[i], width) != 0) { return "value " + std::to_string(i / width); }
  }
  return "";
}

std::vector<type_id> const all_types{type_id::int8,   type_id::uint8,  type_id::int16,
                                     type_id::uint16, type_id::int32,  type_id::uint32,
                                     type_id::float32, type_id::int64, type_id::uint64,
                                     type_id::float64};

TEST_F(GpuGather, GatherMatchesCpuForEveryWidthSizeAndAlignment) {
  auto const s = stream_.ref();
  // Per-thread vectors hold 16 / 8 / 4 / 4 items of 1 / 2 / 4 / 8 bytes; a block 256 threads.
  for (type_id t : all_types) {
    auto const w = size_of(t);
    for (size_type n : {0, 1, 3, 15, 16, 17, 255, 256, 257, 4095, 4096, 4097, 16385, (1 << 20) + 3}) {
      for (size_type src_n : {size_type{1}, size_type{1000}, n + 5}) {
        auto const values = random_values(t, src_n, 17 + n);
        for (bool sorted : {false, true}) {
          auto const ids = random_ids(n, src_n, 31 + n, sorted);
          // Offsets: aligned (vector path), and ids / source off by one element (scalar path).
          for (size_type off : {0, 1}) {
            SCOPED_TRACE(std::string(to_string(t)) + " n=" + std::to_string(n) + " src=" +
                         std::to_string(src_n) + (sorted ? " sorted" : " random") +
                         " offset=" + std::to_string(off));
            device_bytes const src(t, values, off, s);
            device_bytes const d_ids(type_id::int64, bytes_of(ids), off, s);
            auto const check = off == 0 ? bounds_check::unchecked : bounds_check::checked;
            auto const out = gather(src.view, d_ids.view, check, s);
            ASSERT_EQ(out.type(), t);
            ASSERT_EQ(out.size(), n);
            std::vector<std::uint8_t> want(static_cast<std::size_t>(n) * w);
            for (size_type i = 0; i < n; ++i) {
              std::memcpy(&want[i * w], &values[ids[i] * w], w);
            }
            ASSERT_EQ(first_difference(want, host_bytes(out.view(), s), w), "");
          }
        }
      }
    }
  }
}

TEST_F(GpuGather, ScatterMatchesCpuForEveryWidthSizeAndAlignment) {
  auto const s = stream_.ref();
  std::mt19937_64 rng(5);
  for (type_id t : all_types) {
    auto const w = size_of(t);
    for (size_type n : {1, 15, 16, 17, 255, 256, 257, 4097, (1 << 20) + 3}) {
      size_type const target_n = 2 * n + 1;
      // Unique target positions (a random subset, shuffled) so the result is deterministic.
      std::vector<std::int64_t> ids(static_cast<std::size_t>(target_n));
      std::iota(ids.begin(), ids.end(), 0);
      std::shuffle(ids.begin(), ids.end(), rng);
      ids.resize(static_cast<std::size_t>(n));
      auto const values = random_values(t, n, 3 + n);
      auto const initial = random_values(t, target_n, 4 + n);
      for (size_type off : {0, 1}) {
        SCOPED_TRACE(std::string(to_string(t)) + " n=" + std::to_string(n) + " offset=" +
                     std::to_string(off));
        device_bytes const src(t, values, off, s);
        device_bytes const d_ids(type_id::int64, bytes_of(ids), off, s);
        device_bytes init(t, initial, 0, s);
        column target = std::move(init.storage);
        scatter(src.view, d_ids.view, target,
                off == 0 ? bounds_check::unchecked : bounds_check::checked, s);
        auto want = initial;
        for (size_type i = 0; i < n; ++i) { std::memcpy(&want[ids[i] * w], &values[i * w], w); }
        ASSERT_EQ(first_difference(want, host_bytes(target.view(), s), w), "");
      }
    }
  }
}

TEST_F(GpuGather, BoundsCheckRefusesOutOfRangeIds) {
  auto const s = stream_.ref();
  for (type_id t : {type_id::int8, type_id::int16, type_id::int32, type_id::float64}) {
    auto const values = random_values(t, 100, 1);
    device_bytes const src(t, values, 0, s);
    for (std::int64_t bad : {std::int64_t{-1}, std::int64_t{100}, std::int64_t{1} << 40,
                             std::numeric_limits<std::int64_t>::min()}) {
      // The bad id in the middle of a vectorised tile and in a scalar tail.
      for (size_type n : {64, 4099}) {
        auto ids = random_ids(n, 100, 2, false);
        ids[static_cast<std::size_t>(n / 2)] = bad;
        device_bytes const d_ids(type_id::int64, bytes_of(ids), 0, s);
        EXPECT_THROW((void)gather(src.view, d_ids.view, bounds_check::checked, s), logic_error)
            << "id " << bad;
        column target(t, 100, device_resource(), s);
        std::vector<std::int64_t> sids(static_cast<std::size_t>(n));
        std::iota(sids.begin(), sids.end(), 0);
        for (auto& id : sids) { id %= 100; }
        sids.back() = bad;
        device_bytes const d_sids(type_id::int64, bytes_of(sids), 0, s);
        auto const svalues = random_values(t, n, 3);
        device_bytes const ssrc(t, svalues, 0, s);
        EXPECT_THROW(scatter(ssrc.view, d_sids.view, target, bounds_check::checked, s),
                     logic_error)
            << "id " << bad;
      }
    }
  }
  // Argument errors.
  auto const values = random_values(type_id::int32, 10, 1);
  device_bytes const src(type_id::int32, values, 0, s);
  device_bytes const ids32(type_id::int32, values, 0, s);
  EXPECT_THROW((void)gather(src.view, ids32.view), logic_error) << "int32 row ids";
  std::vector<std::int64_t> host_ids{0, 1};
  EXPECT_THROW((void)gather(src.view, column_view::of(host_ids)), logic_error) << "pageable ids";
  column wrong_type(type_id::int64, 10, device_resource(), s);
  device_bytes const ids(type_id::int64, bytes_of(std::vector<std::int64_t>(10, 0)), 0, s);
  EXPECT_THROW(scatter(src.view, ids.view, wrong_type), logic_error) << "target type";
  device_bytes const few(type_id::int64, bytes_of(std::vector<std::int64_t>(3, 0)), 0, s);
  column target(type_id::int32, 10, device_resource(), s);
  EXPECT_THROW(scatter(src.view, few.view, target), logic_error) << "id count";
  column_view const empty_src(type_id::int32, nullptr, 0, memory_space::device);
  EXPECT_THROW((void)gather(empty_src, ids.view), logic_error) << "ids into an empty column";
  auto const none = gather(src.view, column_view(type_id::int64, nullptr, 0, memory_space::device));
  EXPECT_EQ(none.size(), 0);
}

/// Physical host memory in bytes.
std::size_t host_memory() {
  auto const pages = sysconf(_SC_PHYS_PAGES);
  auto const page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)
                               : 0;
}

TEST_F(GpuGather, PastTwoToThe31Elements) {
  // 1-byte values, 2^31 + 4099 of them, gathered by as many ids (the reversal with a twist), so
  // that both the source offsets and the output offsets pass 2^31 and 2^32 bytes of ids: every
  // index in the kernels must be 64-bit. Needs about 21 GiB of device memory and 45 GiB of host.
  size_type const n = (size_type{1} << 31) + 4099;
  std::size_t const need_device = static_cast<std::size_t>(n) * 10 + (std::size_t{2} << 30);
  auto const info = get_device_info(0);
  if (info.free_memory < need_device || host_memory() < std::size_t{48} << 30) {
    GTEST_SKIP() << "needs " << (need_device >> 30) << " GiB free on the GPU (has "
                 << (info.free_memory >> 30) << ") and 48 GiB of host memory";
  }
  auto const s = stream_.ref();
  std::vector<std::uint8_t> values(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < n; ++i) {
    values[i] = static_cast<std::uint8_t>((i * 0x9E3779B1ULL) >> 24 | 1);
  }
  std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < n; ++i) {
    ids[i] = (i % 3 == 0) ? n - 1 - i : (i * 7 + 13) % n;  // reads from both ends
  }
  auto const d_values = column::from_host(values, device_resource(), s);
  {
    auto const d_ids = column::from_host(ids, device_resource(), s);
    auto const out = gather(d_values.view(), d_ids.view(), bounds_check::checked, s);
    std::vector<std::uint8_t> got(static_cast<std::size_t>(n));
    copy_bytes(got.data(), memory_space::host, out.view().data(), memory_space::device, got.size(),
               s);
    size_type bad = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (size_type i = 0; i < n; ++i) { bad += got[i] != values[ids[i]]; }
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(got[n - 1], values[ids[n - 1]]);
  }
  // Scatter the values to the reversed positions of a target as large: target[n-1-i] = values[i].
#pragma omp parallel for schedule(static)
  for (size_type i = 0; i < n; ++i) { ids[i] = n - 1 - i; }
  auto const d_ids = column::from_host(ids, device_resource(), s);
  column target(type_id::uint8, n, device_resource(), s);
  column_view const src(type_id::uint8, d_values.view().data(), n, memory_space::device);
  scatter(src, d_ids.view(), target, bounds_check::unchecked, s);
  std::vector<std::uint8_t> got(static_cast<std::size_t>(n));
  copy_bytes(got.data(), memory_space::host, target.data(), memory_space::device, got.size(), s);
  size_type bad = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad)
  for (size_type i = 0; i < n; ++i) { bad += got[n - 1 - i] != values[i]; }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace joinery::test
