#pragma once
// Deterministic, parallel workload generators (counter-based: row i depends only on seed and i).
#include <joinery/table.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace joinery::gen {

enum class key_kind : std::uint8_t {
  primary,  ///< a shuffled dense range: every key once
  foreign,  ///< keys drawn from a domain, uniform or Zipf
};

struct relation_spec {
  size_type rows = 0;
  key_kind kind = key_kind::primary;
  type_id key_type = type_id::int32;
  /// foreign: keys are drawn from [key_offset, key_offset + domain); 0 means `rows`.
  /// Many-to-many inputs are two foreign relations over a domain of |K| keys; group-by inputs a
  /// foreign relation over g keys.
  size_type domain = 0;
  /// foreign: 0 for uniform, else Zipf(zipf) over the domain with rank 1 (key_offset) most frequent.
  double zipf = 0.0;
  /// primary: fraction of the keys kept; the others are replaced by unique values above the
  /// domain, so that a foreign relation over [key_offset, key_offset + rows) finds no match.
  double match_ratio = 1.0;
  /// Fraction of rows whose key is replaced by the hot key (key_offset), as He et al. do.
  double hot_key_fraction = 0.0;
  std::int64_t key_offset = 1;
  /// One payload column per entry (1/2/4/8-byte integer types), random non-zero-biased values.
  std::vector<type_id> payload_types;
  std::uint64_t seed = 42;
};

/// Host table: column 0 the key, then the payloads. Throws logic_error on an invalid spec (keys
/// that do not fit the key type, fractions outside [0, 1], a negative size, ...).
table generate(relation_spec const& spec);

/// "key", "p0", "p1", ...
std::vector<std::string> column_names(relation_spec const& spec);

}  // namespace joinery::gen
