// The GFUR / GFTR cost model on synthetic bandwidths (pure host code: runs without a GPU).
#include "join/materialize_model.hpp"

#include <gtest/gtest.h>

namespace joinery::test {
namespace {

using detail::device_bandwidths;
using detail::estimate_materialization;
using detail::materialize_workload;

/// H200-like: 3.8 TB/s copies, clustered gathers near it, unclustered 8x slower.
device_bandwidths h200_like() { return {3.8e12, 3.0e12, 0.45e12}; }

/// Wu et al.'s wide default: |R| = 2^27, |S| = 2^28, 4-byte keys, 2 four-byte payloads per side,
/// radix join partitioned on 16 bits; `match` of the probe rows find their key.
materialize_workload wide_default(double match) {
  materialize_workload w;
  w.build_rows = size_type{1} << 27;
  w.probe_rows = size_type{1} << 28;
  w.output_rows = static_cast<size_type>(match * static_cast<double>(w.probe_rows));
  w.key_bytes = 4;
  w.build_widths = {4, 4};
  w.probe_widths = {4, 4};
  w.build_sort_bits = 16;
  w.probe_sort_bits = 16;
  return w;
}

TEST(MaterializeModel, GftrWinsTheWideDefaultAtFullMatch) {
  auto const e = estimate_materialization(wide_default(1.0), h200_like());
  EXPECT_EQ(e.choice, materialization::gftr);
  EXPECT_LT(e.gftr_seconds, e.gfur_seconds / 2);
  EXPECT_GT(e.gftr_seconds, 0);
}

TEST(MaterializeModel, GfurWinsAtLowMatchRatiosAndTheCrossoverIsMonotone) {
  EXPECT_EQ(estimate_materialization(wide_default(0.02), h200_like()).choice,
            materialization::gfur);
  EXPECT_EQ(estimate_materialization(wide_default(0.0), h200_like()).choice,
            materialization::gfur);
  // Once GFTR wins it keeps winning as the match ratio grows, and the gap widens.
  bool gftr_seen = false;
  double last_gap = -1e30;
  for (int pct = 0; pct <= 100; pct += 5) {
    auto const e = estimate_materialization(wide_default(pct / 100.0), h200_like());
    double const gap = e.gfur_seconds - e.gftr_seconds;
    EXPECT_GT(gap, last_gap) << pct << "%";
    last_gap = gap;
    if (gftr_seen) { EXPECT_EQ(e.choice, materialization::gftr) << pct << "%"; }
    gftr_seen = gftr_seen || e.choice == materialization::gftr;
  }
  EXPECT_TRUE(gftr_seen);
}

TEST(MaterializeModel, NoRandomAccessPenaltyMeansGfur) {
  // Gathers as fast at random as in order: transforming first only adds work.
  device_bandwidths const flat{3.8e12, 3.0e12, 3.0e12};
  EXPECT_EQ(estimate_materialization(wide_default(1.0), flat).choice, materialization::gfur);
}

TEST(MaterializeModel, UnsortedSidesCostTheSameAndTieToGfur) {
  auto w = wide_default(1.0);
  w.build_sort_bits = w.probe_sort_bits = 0;  // small inputs: the radix join does not partition
  auto const e = estimate_materialization(w, h200_like());
  EXPECT_DOUBLE_EQ(e.gfur_seconds, e.gftr_seconds);
  EXPECT_EQ(e.choice, materialization::gfur);
}

TEST(MaterializeModel, EachPayloadWidensGftrsLeadAtFullMatch) {
  // Every payload column costs GFUR a random gather of the output and GFTR a sequential
  // transform plus a clustered gather: at full match the gap grows with each column.
  double last_gap = 0;
  for (int k = 1; k <= 8; ++k) {
    auto w = wide_default(1.0);
    w.build_widths.assign(static_cast<std::size_t>(k), 4);
    w.probe_widths.assign(static_cast<std::size_t>(k), 4);
    auto const e = estimate_materialization(w, h200_like());
    EXPECT_EQ(e.choice, materialization::gftr) << k;
    EXPECT_GT(e.gfur_seconds - e.gftr_seconds, last_gap) << k;
    last_gap = e.gfur_seconds - e.gftr_seconds;
  }
}

TEST(MaterializeModel, KeyOnlyTablesTakeTheSortedKeys) {
  // No payloads: GFTR only gathers the key, clustered, from the join's sorted probe keys.
  auto w = wide_default(0.5);
  w.build_widths.clear();
  w.probe_widths.clear();
  auto const e = estimate_materialization(w, h200_like());
  EXPECT_EQ(e.choice, materialization::gftr);
  EXPECT_LT(e.gftr_seconds, e.gfur_seconds);
}

TEST(MaterializeModel, InputsThatFitTheL2CacheStayWithGfur) {
  // The L2 cache serves random reads into columns smaller than it: gathering at random from a
  // small build side costs about what a clustered gather does, so transforming first only adds.
  auto bw = h200_like();
  bw.l2_bytes = 60e6;
  bw.unclustered_column_bytes = 256e6;  // measured over 4x the L2
  auto small = wide_default(1.0);
  small.build_rows = size_type{1} << 20;  // 4 MiB columns
  small.probe_rows = size_type{1} << 21;
  small.output_rows = small.probe_rows;
  small.build_sort_bits = small.probe_sort_bits = 9;
  EXPECT_EQ(estimate_materialization(small, bw).choice, materialization::gfur);
  // Join-sized columns miss the cache: GFTR, and GFUR dearer than the measured blend suggests.
  auto const large = estimate_materialization(wide_default(1.0), bw);
  EXPECT_EQ(large.choice, materialization::gftr);
  auto const blended = estimate_materialization(wide_default(1.0), h200_like());
  EXPECT_GT(large.gfur_seconds, blended.gfur_seconds);
}

TEST(MaterializeModel, TransformPicksSortPairsUnlessTheSortHasManyPasses) {
  auto const bw = h200_like();
  // Radix partitioning on 16 bits: two sequential passes beat a random permutation.
  EXPECT_TRUE(detail::sort_transform_cheaper(size_type{1} << 27, 4, 4, 16, bw));
  // A full sort of 8-byte keys (8 passes) with fast random reads: permuting wins.
  device_bandwidths const fast_random{3.8e12, 3.0e12, 2.5e12};
  EXPECT_FALSE(detail::sort_transform_cheaper(size_type{1} << 27, 8, 4, 64, fast_random));
  EXPECT_EQ(detail::transform_seconds(size_type{1} << 27, 4, 4, 0, bw), 0.0);
}

TEST(MaterializeModel, RefusesMissingBandwidths) {
  EXPECT_THROW((void)estimate_materialization(wide_default(1.0), device_bandwidths{}),
               logic_error);
}

}  // namespace
}  // namespace joinery::test
