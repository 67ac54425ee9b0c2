#pragma once
// Timing for benchmarks: CUDA events on the GPU backend, a steady clock on the CPU backend.
#include <joinery/memory.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace joinery::cli {

/// Seconds taken by `f`. With `gpu` the interval is measured by CUDA events recorded on `stream`
/// around the call (f must order its work on that stream).
double time_call(bool gpu, stream_ref stream, std::function<void()> const& f);

/// The median of `v` (the mean of the middle two for an even count; 0 when empty).
double median(std::vector<double> v);

/// Whether `part` is one of the comma-separated `parts` (empty: every part is wanted).
bool wants_part(std::string const& parts, std::string const& part);

/// Wall seconds of each of `runs` calls of `f` after `warmup` untimed ones, and what the last
/// call returned.
template <class F>
auto wall_runs(int warmup, int runs, F&& f) -> std::pair<std::vector<double>, decltype(f())> {
  decltype(f()) last{};
  for (int i = 0; i < warmup; ++i) { last = f(); }
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto const t0 = std::chrono::steady_clock::now();
    last = f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return {std::move(t), std::move(last)};
}

}  // namespace joinery::cli
