#pragma once
// Timing for benchmarks: CUDA events on the GPU backend, a steady clock on the CPU backend.
#include <joinery/memory.hpp>

#include <functional>
#include <vector>

namespace joinery::cli {

/// Seconds taken by `f`. With `gpu` the interval is measured by CUDA events recorded on `stream`
/// around the call (f must order its work on that stream).
double time_call(bool gpu, stream_ref stream, std::function<void()> const& f);

/// The median of `v` (the mean of the middle two for an even count; 0 when empty).
double median(std::vector<double> v);

}  // namespace joinery::cli
