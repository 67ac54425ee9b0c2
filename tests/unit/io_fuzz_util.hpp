#pragma once
// Helpers of the seeded mutation tests of the readers (test_io_fuzz_*.cpp): the time budget, the
// seeds, random choices and printable inputs.
//
// JOINERY_FUZZ_SECONDS: seconds each fuzz test runs (default 2; ctest's io_fuzz runs them longer).
// JOINERY_FUZZ_SEED: the first case's seed (default random); a failure prints the seed that
// replays it as the first case.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace joinery::test::fuzz {

using rng_t = std::mt19937_64;

// Inputs stay small enough to read thousands a second, yet span many chunks (the CSV chunk size
// is shrunk per case).
inline constexpr std::size_t max_input_bytes = std::size_t{256} << 10;

inline double fuzz_seconds() {
  char const* s = std::getenv("JOINERY_FUZZ_SECONDS");
  return s != nullptr && *s != '\0' ? std::strtod(s, nullptr) : 2.0;
}

inline std::uint64_t first_seed() {
  char const* s = std::getenv("JOINERY_FUZZ_SEED");
  if (s != nullptr && *s != '\0') { return std::strtoull(s, nullptr, 10); }
  return (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
}

/// Runs `one_case(rng, seed)` with seeds first_seed(), +1, ... until the time is up or a case
/// fails; returns the number of cases run.
template <class F>
std::uint64_t run_cases(F const& one_case) {
  auto const seed0 = first_seed();
  auto const until = std::chrono::steady_clock::now() +
                     std::chrono::duration<double>(std::max(0.0, fuzz_seconds()));
  std::uint64_t n = 0;
  do {
    auto const seed = seed0 + n;
    rng_t rng(seed);
    one_case(rng, seed);
    ++n;
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "replay this case first with JOINERY_FUZZ_SEED=" << seed;
      break;
    }
  } while (std::chrono::steady_clock::now() < until);
  return n;
}

inline std::size_t below(rng_t& rng, std::size_t n) { return n == 0 ? 0 : rng() % n; }
inline bool chance(rng_t& rng, int percent) { return static_cast<int>(rng() % 100) < percent; }

/// Bytes as C escapes, the first `limit` of them, for failure messages.
inline std::string escaped(std::string const& s, std::size_t limit = 400) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
    auto const c = static_cast<unsigned char>(s[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 32 || c >= 127 || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > limit) { out += "... (" + std::to_string(s.size()) + " bytes)"; }
  return out;
}

}  // namespace joinery::test::fuzz
