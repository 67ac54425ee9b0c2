#pragma once
// Counter-based randomness for the workload generators. Every value is a pure function of
// (seed, stream, row), so a table does not depend on the thread count or the schedule, and any
// row can be produced without producing the others.
#include "core/hash.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

namespace joinery::gen::detail {

using joinery::detail::mix64;

inline constexpr std::uint64_t golden_gamma = 0x9e3779b97f4a7c15ULL;

/// Key of the stream `stream` of seed `seed`. Two mixing rounds, so that neighbouring seeds and
/// stream ids give unrelated keys.
constexpr std::uint64_t stream_key(std::uint64_t seed, std::uint64_t stream) noexcept {
  return mix64(mix64(seed ^ 0x6a09e667f3bcc909ULL) + (stream + 1) * golden_gamma);
}

/// Value number `i` of the stream with key `key` (splitmix64 indexed by the counter: streams are
/// far-apart offsets of one Weyl sequence, so they do not overlap within any realistic row count).
constexpr std::uint64_t counter_random(std::uint64_t key, std::uint64_t i) noexcept {
  return mix64(key + (i + 1) * golden_gamma);
}

/// Uniform integer in [0, n): the high word of a 64x64-bit product (bias below n / 2^64).
constexpr std::uint64_t bounded(std::uint64_t u, std::uint64_t n) noexcept {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(u) * n) >> 64);
}

/// Uniform double in [0, 1) from the top 53 bits.
constexpr double unit_double(std::uint64_t u) noexcept {
  return static_cast<double>(u >> 11) * 0x1.0p-53;
}

/// Several values for one row (rejection sampling needs a variable number of them): a splitmix64
/// sequence started at a state drawn from the row's counter.
class row_random {
 public:
  constexpr row_random(std::uint64_t key, std::uint64_t row) noexcept
      : state_(counter_random(key, row)) {}
  constexpr std::uint64_t next() noexcept {
    state_ += golden_gamma;
    return mix64(state_);
  }

 private:
  std::uint64_t state_;
};

/// A pseudo-random bijection of [0, n): a 4-round Feistel network on the smallest power of two
/// >= n (split into two halves of bits/2 and bits - bits/2 bits, rounds alternately modifying
/// one half from the other, which is invertible for unequal halves too), restricted to [0, n)
/// by cycle walking. Since 2^bits < 2n, a lookup walks fewer than two steps on average.
class feistel_permutation {
 public:
  feistel_permutation(std::uint64_t n, std::uint64_t key) noexcept : n_(n) {
    int const bits = n <= 1 ? 0 : static_cast<int>(std::bit_width(n - 1));
    right_bits_ = bits / 2;
    left_mask_ = (std::uint64_t{1} << (bits - right_bits_)) - 1;
    right_mask_ = (std::uint64_t{1} << right_bits_) - 1;
    for (int r = 0; r < rounds; ++r) { round_keys_[r] = counter_random(key, r); }
  }

  [[nodiscard]] std::uint64_t size() const noexcept { return n_; }

  /// The image of x, for x < size().
  [[nodiscard]] std::uint64_t operator()(std::uint64_t x) const noexcept {
    do { x = encrypt(x); } while (x >= n_);
    return x;
  }

 private:
  static constexpr int rounds = 4;

  [[nodiscard]] std::uint64_t encrypt(std::uint64_t x) const noexcept {
    std::uint64_t left = x >> right_bits_;
    std::uint64_t right = x & right_mask_;
    for (int r = 0; r < rounds; r += 2) {
      left = (left ^ mix64(right ^ round_keys_[r])) & left_mask_;
      right = (right ^ mix64(left ^ round_keys_[r + 1])) & right_mask_;
    }
    return (left << right_bits_) | right;
  }

  std::uint64_t n_;
  int right_bits_ = 0;
  std::uint64_t left_mask_ = 0;
  std::uint64_t right_mask_ = 0;
  std::uint64_t round_keys_[rounds] = {};
};

/// Zipf(s) over ranks [1, n], P(k) proportional to k^-s, for any s > 0 (s == 1 included) and
/// any n up to 2^63, in O(1) expected time and memory per sample.
///
/// Method: rejection-inversion (Hoermann & Derflinger 1996). With h(x) = x^-s and its antiderivative
/// H(x) = (x^(1-s) - 1) / (1-s) (log x when s == 1), draw u uniformly in (H(1.5) - 1, H(n + 0.5)]
/// and invert x = H^-1(u); rank k = round(x). The interval [H(k + 0.5) - h(k), H(k + 0.5)] has
/// length exactly h(k) and lies within k's bucket [H(k - 0.5), H(k + 0.5)] because h is convex, so
/// accepting u in it gives P(k) proportional to h(k); rank 1's bucket is exactly that interval
/// (hence the lower end H(1.5) - 1). Accepting without evaluating H when k - x <= squeeze_ is
/// the paper's shortcut: the threshold is exact for k == 2 and only looser for larger k.
/// H and H^-1 go through log1p/expm1 helpers, which are exact near s == 1 and reduce to the
/// log/exp limit at s == 1.
class zipf_sampler {
 public:
  zipf_sampler(std::uint64_t n, double s) noexcept
      : n_(n), s_(s), one_minus_s_(1.0 - s), n_double_(static_cast<double>(n)) {
    h_integral_low_ = h_integral(1.5) - 1.0;
    h_integral_high_ = h_integral(n_double_ + 0.5);
    squeeze_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
  }

  /// A rank in [1, n].
  template <class Random>
  std::uint64_t operator()(Random& rng) const noexcept {
    for (;;) {
      double const u =
        h_integral_high_ + unit_double(rng.next()) * (h_integral_low_ - h_integral_high_);
      double const x = h_integral_inverse(u);
      double const xr = x + 0.5;
      // Rounding may push x a hair outside [0.5, n + 0.5]; clamp (NaN-safe comparisons).
      std::uint64_t k;
      if (!(xr >= 1.0)) {
        k = 1;
      } else if (!(xr < n_double_ + 1.0)) {
        k = n_;
      } else {
        k = static_cast<std::uint64_t>(xr);
        if (k > n_) { k = n_; }
      }
      double const kd = static_cast<double>(k);
      if (kd - x <= squeeze_ || u >= h_integral(kd + 0.5) - h(kd)) { return k; }
    }
  }

 private:
  // log1p(x) / x, continuous at 0.
  static double log1p_ratio(double x) noexcept {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x / 3.0);
  }
  // expm1(x) / x, continuous at 0.
  static double expm1_ratio(double x) noexcept {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * (0.5 + x / 6.0);
  }
  [[nodiscard]] double h(double x) const noexcept { return std::exp(-s_ * std::log(x)); }
  [[nodiscard]] double h_integral(double x) const noexcept {
    double const lx = std::log(x);
    return expm1_ratio(one_minus_s_ * lx) * lx;
  }
  [[nodiscard]] double h_integral_inverse(double y) const noexcept {
    double t = one_minus_s_ * y;
    if (t < -1.0) { t = -1.0; }  // only reachable through rounding, at the far tail
    return std::exp(log1p_ratio(t) * y);
  }

  std::uint64_t n_;
  double s_;
  double one_minus_s_;
  double n_double_;
  double h_integral_low_ = 0;
  double h_integral_high_ = 0;
  double squeeze_ = 0;
};

}  // namespace joinery::gen::detail
