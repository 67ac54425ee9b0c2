// GFTR bundles (src/join/gpu/materialize_transform.cu): columns of mixed widths packed into one
// 4- or 8-byte value, then gathered back through positions, checked on the CPU against gathering
// each column on its own. Signed columns keep their bits (negative values included). Also the
// radix join's output-size estimate (a correlated hash sample) that lets automatic choose GFTR
// before partitioning, against exact counts on the host.
#include "core/cuda_try.hpp"
#include "join/gpu/gpu_join.hpp"
#include "join/gpu/materialize.hpp"
#include "join/materialize_model.hpp"

#include <joinery/memory.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

struct device_bytes {
  void* p = nullptr;
  explicit device_bytes(std::size_t n) { JOINERY_CUDA_TRY(cudaMalloc(&p, n == 0 ? 1 : n)); }
  ~device_bytes() { cudaFree(p); }
  device_bytes(device_bytes const&) = delete;
  device_bytes& operator=(device_bytes const&) = delete;
};

/// "" when packing columns of `widths` and gathering them through random positions gives back
/// each column's values at those positions.
std::string run_and_check(std::vector<int> const& widths, std::size_t n, std::size_t m,
                          std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  int total = 0;
  for (int w : widths) { total += w; }
  int const value_width = total <= 4 ? 4 : 8;
  std::vector<std::vector<unsigned char>> host(widths.size());
  std::vector<std::unique_ptr<device_bytes>> in, out;
  std::vector<void const*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (std::size_t c = 0; c < widths.size(); ++c) {
    auto const w = static_cast<std::size_t>(widths[c]);
    host[c].resize(n * w);
    for (auto& b : host[c]) { b = static_cast<unsigned char>(rng()); }
    in.push_back(std::make_unique<device_bytes>(n * w));
    out.push_back(std::make_unique<device_bytes>(m * w));
    if (n != 0) { JOINERY_CUDA_TRY(cudaMemcpy(in.back()->p, host[c].data(), n * w, cudaMemcpyHostToDevice)); }
    in_ptrs.push_back(in.back()->p);
    out_ptrs.push_back(out.back()->p);
  }
  std::vector<size_type> ids(m);
  for (auto& id : ids) { id = static_cast<size_type>(rng() % (n == 0 ? 1 : n)); }
  device_bytes d_ids(m * sizeof(size_type));
  if (m != 0) { JOINERY_CUDA_TRY(cudaMemcpy(d_ids.p, ids.data(), m * sizeof(size_type), cudaMemcpyHostToDevice)); }
  device_bytes packed(n * static_cast<std::size_t>(value_width));
  detail::gpu::pack_columns(in_ptrs, widths, static_cast<size_type>(n), value_width, packed.p,
                            default_stream());
  detail::gpu::gather_bundle(packed.p, value_width, static_cast<size_type const*>(d_ids.p),
                             static_cast<size_type>(m), out_ptrs, widths, default_stream());
  JOINERY_CUDA_TRY(cudaDeviceSynchronize());
  for (std::size_t c = 0; c < widths.size(); ++c) {
    auto const w = static_cast<std::size_t>(widths[c]);
    std::vector<unsigned char> got(m * w);
    if (m != 0) { JOINERY_CUDA_TRY(cudaMemcpy(got.data(), out[c]->p, m * w, cudaMemcpyDeviceToHost)); }
    for (std::size_t i = 0; i < m; ++i) {
      auto const src = static_cast<std::size_t>(ids[i]);
      if (std::memcmp(got.data() + i * w, host[c].data() + src * w, w) != 0) {
        return "column " + std::to_string(c) + " (width " + std::to_string(w) + "), row " +
               std::to_string(i) + " (position " + std::to_string(src) + ") differs";
      }
    }
  }
  return "";
}

class GftrBundles : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
};

TEST_F(GftrBundles, EveryBundleShapeOfThePlannerRoundTrips) {
  // Each shape is one bundle of detail::payload_bundles.
  for (auto const& widths : std::vector<std::vector<int>>{
         {4, 4}, {1, 2}, {2, 2, 4}, {1, 1, 1, 1, 1, 1, 1, 1}, {4, 2, 1, 1}, {1, 4, 2}, {8}}) {
    ASSERT_EQ(detail::payload_bundles(widths).size(), 1u);
    for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20}) {
      EXPECT_EQ(run_and_check(widths, n, 3 * n + 7, n + widths.size()), "") << widths.size();
    }
  }
}

TEST_F(GftrBundles, NoRows) { EXPECT_EQ(run_and_check({4, 4}, 0, 0, 1), ""); }

/// The estimate for the build keys (shuffled first) and the probe keys, with the exact
/// inner-join row count.
std::pair<std::optional<size_type>, size_type> estimate_for(std::vector<std::uint32_t> build,
                                                            std::vector<std::uint32_t> const& probe,
                                                            std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::shuffle(build.begin(), build.end(), rng);
  std::uint32_t top = 0;
  for (auto k : build) { top = std::max(top, k); }
  std::vector<std::uint32_t> copies(std::size_t{top} + 1, 0);  // build rows of each key
  for (auto k : build) { ++copies[k]; }
  size_type exact = 0;
  for (auto k : probe) { exact += k < copies.size() ? copies[k] : 0; }
  device_bytes db(build.size() * 4);
  device_bytes dp(probe.size() * 4);
  JOINERY_CUDA_TRY(cudaMemcpy(db.p, build.data(), build.size() * 4, cudaMemcpyHostToDevice));
  JOINERY_CUDA_TRY(cudaMemcpy(dp.p, probe.data(), probe.size() * 4, cudaMemcpyHostToDevice));
  detail::gpu::join_request rq;
  rq.build_keys = db.p;
  rq.build_rows = static_cast<size_type>(build.size());
  rq.probe_keys = dp.p;
  rq.probe_rows = static_cast<size_type>(probe.size());
  rq.key_type = type_id::uint32;
  auto const est = detail::gpu::estimate_inner_join_rows(rq, default_stream(), device_resource());
  return {est, exact};
}

TEST_F(GftrBundles, OutputRowEstimateFromACorrelatedSample) {
  // |R| = 2^22 primary keys, |S| = 2^23 foreign keys, a fraction of them matching: the estimate
  // (2^16 sampled build keys, 2^23 >> 6 probe keys) within 10% of the exact count.
  std::vector<std::uint32_t> build(1u << 22);
  std::iota(build.begin(), build.end(), 0u);
  std::mt19937_64 rng(7);
  for (double match : {1.0, 0.5, 0.1}) {
    std::vector<std::uint32_t> probe(1u << 23);
    for (auto& k : probe) {
      auto const r = static_cast<std::uint32_t>(rng() % build.size());
      k = std::uniform_real_distribution<double>(0, 1)(rng) < match ? r : r + (1u << 22);
    }
    auto const [est, exact] = estimate_for(build, probe, 11);
    ASSERT_TRUE(est.has_value()) << match;
    EXPECT_NEAR(static_cast<double>(*est), static_cast<double>(exact), 0.1 * exact) << match;
  }
  // A build side past the 2^24-row prefix each side is sampled from (build order random).
  std::vector<std::uint32_t> large(1u << 25);
  std::iota(large.begin(), large.end(), 0u);
  std::vector<std::uint32_t> half(1u << 25);
  for (auto& k : half) { k = static_cast<std::uint32_t>(rng() % (2 * large.size())); }
  auto const [est_large, exact_large] = estimate_for(large, half, 14);
  ASSERT_TRUE(est_large.has_value());
  EXPECT_NEAR(static_cast<double>(*est_large), static_cast<double>(exact_large),
              0.1 * exact_large);
  // No match at all: 0.
  std::vector<std::uint32_t> miss(1u << 20, (1u << 23) + 5);
  for (std::size_t i = 0; i < miss.size(); ++i) { miss[i] += static_cast<std::uint32_t>(i); }
  EXPECT_EQ(estimate_for(build, miss, 12).first, std::optional<size_type>(0));
}

TEST_F(GftrBundles, OutputRowEstimateOfManyToManyAndSmallSides) {
  // Every build key 4 times (duplicates share a map slot and count 4 each), and a build side
  // small enough that half of it is sampled.
  std::vector<std::uint32_t> build(1u << 20);
  for (std::size_t i = 0; i < build.size(); ++i) { build[i] = static_cast<std::uint32_t>(i / 4); }
  std::mt19937_64 rng(21);
  std::vector<std::uint32_t> probe(1u << 22);
  for (auto& k : probe) { k = static_cast<std::uint32_t>(rng() % (build.size() / 4)); }
  auto const [est, exact] = estimate_for(build, probe, 22);
  ASSERT_TRUE(est.has_value());
  EXPECT_EQ(exact, size_type{4} << 22);  // each probe key matches 4 build rows
  EXPECT_NEAR(static_cast<double>(*est), static_cast<double>(exact), 0.1 * exact);

  std::vector<std::uint32_t> small(1000);
  std::iota(small.begin(), small.end(), 0u);
  std::vector<std::uint32_t> few(3000);
  for (auto& k : few) { k = static_cast<std::uint32_t>(rng() % 2000); }
  auto const [est_small, exact_small] = estimate_for(small, few, 23);
  ASSERT_TRUE(est_small.has_value());
  EXPECT_NEAR(static_cast<double>(*est_small), static_cast<double>(exact_small),
              0.3 * exact_small);
}

}  // namespace
}  // namespace joinery::test
