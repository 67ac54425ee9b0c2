// The GFUR / GFTR cost model (see materialize_model.hpp); pure host arithmetic.
#include "join/materialize_model.hpp"

#include <joinery/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>

namespace joinery::detail {

namespace {

constexpr double id_bytes = 8;      // int64 ids / positions of the output
constexpr double order_bytes = 4;   // the 32-bit row ids the joins' sorts carry
constexpr double sector_bytes = 32;  // the granule of a random device-memory read
constexpr int radix_digit_bits = 8;  // CUB's onesweep digit

double seq(double bytes, device_bandwidths const& bw) { return bytes / bw.sequential; }

/// Seconds per element of the source reads of a measured 4-byte gather: the whole less its
/// sequential part (ids in, values out), never below a sequential read.
double read4_seconds(double gather_bandwidth, device_bandwidths const& bw) {
  return std::max(16.0 / gather_bandwidth - seq(12.0, bw), seq(4.0, bw));
}

/// Fraction of random reads into `column_bytes` that the L2 cache serves.
double l2_hits(double column_bytes, device_bandwidths const& bw) {
  if (bw.l2_bytes <= 0 || column_bytes <= 0) { return 0; }
  return std::min(1.0, bw.l2_bytes / column_bytes);
}

/// Seconds per element of a gather's source reads from a column of n `width`-byte values.
/// Sequential and clustered reads scale with the width. Unclustered reads cost a sector whatever
/// the width up to it, from DRAM (the measurement less its cache hits) except for the share the
/// L2 serves.
double read_seconds(int width, access_pattern access, size_type n, device_bandwidths const& bw) {
  if (access == access_pattern::sequential) { return seq(width, bw); }
  double const c4 = read4_seconds(bw.clustered_gather, bw);
  if (access == access_pattern::clustered) { return c4 * width / 4.0; }
  double const measured = read4_seconds(bw.unclustered_gather, bw);
  double const h0 = l2_hits(bw.unclustered_column_bytes, bw);
  double const dram = h0 < 1 ? std::max((measured - h0 * c4) / (1 - h0), c4) : measured;
  double const h = l2_hits(static_cast<double>(n) * width, bw);
  return (h * c4 + (1 - h) * dram) * std::max(1.0, width / sector_bytes);
}

/// Seconds per row of one digit pass of a sort of `tuple_bytes`-byte (key, value) pairs: the
/// measured one-digit sorts less their histogram pass (a read of the 4-byte keys), linear in
/// the tuple's bytes through the 8- and 12-byte measurements, never faster than a copy.
double digit_pass_seconds(double tuple_bytes, device_bandwidths const& bw) {
  double const copy = seq(2 * tuple_bytes, bw);
  if (bw.sort_pass_4_4 <= 0 || bw.sort_pass_4_8 <= 0) { return copy; }
  double const p8 = 16.0 / bw.sort_pass_4_4 - seq(4, bw);
  double const p12 = 24.0 / bw.sort_pass_4_8 - seq(4, bw);
  return std::max(p8 + (p12 - p8) * (tuple_bytes - 8.0) / 4.0, copy);
}

double permute_seconds(size_type n, int width, device_bandwidths const& bw) {
  auto const rows = static_cast<double>(n);
  return seq(rows * (order_bytes + width), bw) +
         rows * read_seconds(width, access_pattern::unclustered, n, bw);
}

}  // namespace

device_bandwidths parse_bandwidths(std::string const& text, std::string const& source) {
  std::vector<double> v;
  std::size_t at = 0;
  while (at <= text.size()) {
    auto const end = std::min(text.find(',', at), text.size());
    auto const field = text.substr(at, end - at);
    char* stop = nullptr;
    double const x = std::strtod(field.c_str(), &stop);
    if (field.empty() || stop != field.c_str() + field.size() || !std::isfinite(x) || x < 0) {
      throw input_error(source + ": field " + std::to_string(v.size() + 1) + " ('" + field +
                        "') is not a finite number >= 0");
    }
    v.push_back(x);
    at = end + 1;
  }
  if (v.size() != 7) {
    throw input_error(source + ": expected 7 comma-separated numbers (sequential, clustered_gather, "
                      "unclustered_gather, l2_bytes, unclustered_column_bytes, sort_pass_4_4, "
                      "sort_pass_4_8), got " + std::to_string(v.size()));
  }
  if (v[0] <= 0 || v[1] <= 0 || v[2] <= 0) {
    throw input_error(source + ": the sequential and gather bandwidths must be positive");
  }
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
}

std::string bandwidths_problem(device_bandwidths const& bw) {
  struct field {
    char const* name;
    double value;
    bool positive;
  };
  for (auto const& f : {field{"sequential", bw.sequential, true},
                        field{"clustered_gather", bw.clustered_gather, true},
                        field{"unclustered_gather", bw.unclustered_gather, true},
                        field{"l2_bytes", bw.l2_bytes, false},
                        field{"unclustered_column_bytes", bw.unclustered_column_bytes, false},
                        field{"sort_pass_4_4", bw.sort_pass_4_4, false},
                        field{"sort_pass_4_8", bw.sort_pass_4_8, false}}) {
    if (!std::isfinite(f.value) || f.value < 0 || (f.positive && f.value <= 0)) {
      std::ostringstream os;
      os << f.name << " is " << f.value << "; it must be a finite number "
         << (f.positive ? "> 0" : ">= 0");
      return os.str();
    }
  }
  return {};
}

std::vector<payload_bundle> payload_bundles(std::vector<int> const& widths) {
  std::vector<payload_bundle> out;
  for (int i = 0; i < static_cast<int>(widths.size()); ++i) {
    int const w = widths[static_cast<std::size_t>(i)];
    if (!out.empty() && out.back().bytes + w <= 8) {
      ++out.back().count;
      out.back().bytes += w;
    } else {
      out.push_back({i, 1, w});
    }
  }
  return out;
}

bool fused_output(materialize_workload const& w) {
  return w.carry_first_bundle && w.bundle_payloads && !w.build_nullable &&
         payload_bundles(w.build_widths).size() <= 1 && payload_bundles(w.probe_widths).size() <= 1;
}

double sort_pairs_seconds(size_type n, int key_bytes, int width, int sort_bits,
                          device_bandwidths const& bw) {
  int const passes = (sort_bits + radix_digit_bits - 1) / radix_digit_bits;
  auto const rows = static_cast<double>(n);
  return seq(rows * key_bytes, bw) +
         passes * rows * digit_pass_seconds(key_bytes + static_cast<double>(width), bw);
}

double gather_seconds(size_type m, int width, access_pattern access, size_type n,
                      device_bandwidths const& bw) {
  auto const rows = static_cast<double>(m);
  double const reads = access == access_pattern::unclustered && m > n
                         ? static_cast<double>(n) * read_seconds(width, access, n, bw) +
                             static_cast<double>(m - n) *
                               read_seconds(width, access_pattern::clustered, n, bw)
                         : rows * read_seconds(width, access, n, bw);
  return seq(rows * (id_bytes + width), bw) + reads;
}

bool sort_transform_cheaper(size_type n, int key_bytes, int width, int sort_bits,
                            device_bandwidths const& bw) {
  return sort_pairs_seconds(n, key_bytes, width, sort_bits, bw) <=
         permute_seconds(n, width, bw);
}

double transform_seconds(size_type n, int key_bytes, int width, int sort_bits,
                         device_bandwidths const& bw) {
  if (sort_bits <= 0 || n == 0) { return 0; }  // the identity order: the column as it is
  return std::min(sort_pairs_seconds(n, key_bytes, width, sort_bits, bw),
                  permute_seconds(n, width, bw));
}

materialize_estimate estimate_materialization(materialize_workload const& w,
                                              device_bandwidths const& bw) {
  JOINERY_EXPECTS(bw.sequential > 0 && bw.clustered_gather > 0 && bw.unclustered_gather > 0,
                  "the materialization model needs positive bandwidths");
  materialize_estimate e;
  auto const m = w.output_rows;
  // GFTR's positions walk the probe side in order and each build partition at random; a side
  // sorted by no bits keeps its input order, so its GFUR row ids walk it the same way.
  using enum access_pattern;
  auto gfur_access = [](int bits, access_pattern gftr) { return bits == 0 ? gftr : unclustered; };
  // The probe key: GFUR gathers it from the input, GFTR from the join's sorted probe keys.
  e.gfur_seconds = gather_seconds(m, w.key_bytes, gfur_access(w.probe_sort_bits, sequential),
                                  w.probe_rows, bw);
  e.gftr_seconds = gather_seconds(m, w.key_bytes, sequential, w.probe_rows, bw);
  // Fused: the join writes the table itself (the key from its registers, the payloads from the
  // carried values), not positions to gather through, so GFUR alone writes and reads ids.
  bool const fused = fused_output(w);
  if (fused) {
    e.gftr_seconds = seq(static_cast<double>(m) * w.key_bytes, bw);
    e.gfur_seconds += seq(static_cast<double>(m) * 2 * id_bytes, bw);
  }
  // GFUR's join write reads each match's two row ids from the sorted sides (probe in order,
  // build within a partition); GFTR's writes positions without reading them.
  if (w.build_sort_bits > 0 || w.probe_sort_bits > 0) {
    e.gfur_seconds += static_cast<double>(m) *
                      (read_seconds(order_bytes, sequential, w.probe_rows, bw) +
                       read_seconds(order_bytes, clustered, w.build_rows, bw));
  }
  auto side = [&](std::vector<int> const& widths, size_type n, int bits, access_pattern gftr,
                  bool nullable) {
    for (int width : widths) {
      e.gfur_seconds += gather_seconds(m, width, gfur_access(bits, gftr), n, bw);
    }
    if (!w.bundle_payloads || bits <= 0 || nullable) {
      for (int width : widths) {
        e.gftr_seconds += transform_seconds(n, w.key_bytes, width, bits, bw) +
                          gather_seconds(m, width, gftr, n, bw);
      }
      return;
    }
    // A bundle of several columns: packed (the columns read, the bundle written), transformed
    // once, and gathered once (ids and bundle read, every column written).
    bool first = true;
    for (auto const& b : payload_bundles(widths)) {
      auto const rows = static_cast<double>(n);
      auto const out_rows = static_cast<double>(m);
      if (std::exchange(first, false) && w.carry_first_bundle) {
        // Carried by the join's sort: its values replace 4-byte row ids.
        int const passes = (bits + radix_digit_bits - 1) / radix_digit_bits;
        double const key = w.key_bytes;
        bool const packed = b.count > 1 || b.bytes < 4;
        e.gftr_seconds += (packed ? seq(rows * (b.bytes + b.value_bytes()), bw) : 0) +
                          passes * rows *
                            (digit_pass_seconds(key + b.value_bytes(), bw) -
                             digit_pass_seconds(key + order_bytes, bw)) +
                          seq(out_rows * ((fused ? 0 : id_bytes) + b.bytes), bw) +
                          out_rows * read_seconds(b.value_bytes(), gftr, n, bw);
        continue;
      }
      if (b.count == 1) {
        e.gftr_seconds += transform_seconds(n, w.key_bytes, b.bytes, bits, bw) +
                          gather_seconds(m, b.bytes, gftr, n, bw);
        continue;
      }
      e.gftr_seconds += seq(rows * (b.bytes + b.value_bytes()), bw) +
                        transform_seconds(n, w.key_bytes, b.value_bytes(), bits, bw) +
                        seq(out_rows * (id_bytes + b.bytes), bw) +
                        out_rows * read_seconds(b.value_bytes(), gftr, n, bw);
    }
  };
  side(w.build_widths, w.build_rows, w.build_sort_bits, clustered, w.build_nullable);
  side(w.probe_widths, w.probe_rows, w.probe_sort_bits, sequential, false);
  e.choice = e.gftr_seconds < e.gfur_seconds ? materialization::gftr : materialization::gfur;
  return e;
}

}  // namespace joinery::detail
