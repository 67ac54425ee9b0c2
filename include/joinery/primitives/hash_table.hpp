#pragma once
// GPU hash tables over device key columns: a global open-addressing multimap with linear probing
// (m:n joins) and a perfect-hash array for dense unique key ranges. Host-only: no CUDA types.
//
// Both map a key to the build row ids it was inserted with. They are GPU primitives: keys are
// device columns (int32, int64, uint32 or uint64, no nulls), results are device columns from the
// caller's resource, all work is ordered on the caller's stream. Without the CUDA backend every
// operation throws joinery::logic_error.
#include <joinery/column.hpp>
#include <joinery/memory.hpp>
#include <joinery/types.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

namespace joinery {

namespace detail {
class hash_table_impl;
class perfect_hash_impl;
}  // namespace detail

/// The hash function of a hash table (applied to the key widened to 64 bits).
enum class hash_function : std::uint8_t {
  murmur,          ///< MurmurHash3's fmix64 finaliser: robust on any key distribution
  multiply_shift,  ///< Fibonacci multiply-shift: one multiply, fine for dense and random keys
};

/// How a slot stores (key, row id). Every key value (the type's min and max included) can be
/// stored in either: emptiness is marked in the row-id field, never by a reserved key.
enum class slot_layout : std::uint8_t {
  automatic,  ///< packed for 4-byte keys when the capacity allows it, wide otherwise
  packed,     ///< 4-byte keys only: key and a 32-bit row id in one 64-bit word (< 2^32 - 1 rows)
  wide,       ///< 16-byte slot: key widened to 64 bits and a 64-bit row id
};

struct hash_table_options {
  /// Inserted rows / slots at full capacity, in (0, 1). The table always keeps an empty slot.
  double load_factor = 0.5;
  hash_function hash = hash_function::murmur;
  slot_layout layout = slot_layout::automatic;
};

/// Row-id pairs of an equi-join match list, as device int64 columns of equal length.
struct row_id_pairs {
  column build_rows;
  column probe_rows;
};

/// Global open-addressing hash multimap with linear probing (the cuCollections design: this owning
/// host object; a trivially copyable device reference for kernels lives in
/// src/primitives/detail/open_addressing_table.cuh). Duplicate keys are kept: it is built for m:n
/// joins. Insertions and probes are separate phases ordered on a stream; a probe sees every row
/// inserted by earlier work on the stream.
class hash_table {
 public:
  /// A table for up to `capacity` rows of keys of `key_type`, its slots from `mr` (nullptr: the
  /// device resource; it must be device memory), set to empty on `stream`.
  hash_table(type_id key_type, size_type capacity, hash_table_options const& options = {},
             stream_ref stream = default_stream(), memory_resource_ref mr = nullptr);
  ~hash_table();
  hash_table(hash_table&&) noexcept;
  hash_table& operator=(hash_table&&) noexcept;
  hash_table(hash_table const&) = delete;
  hash_table& operator=(hash_table const&) = delete;

  /// Inserts every key of a device column; row i of `keys` gets row id size() + i (so batches
  /// continue the numbering). Refuses more rows than the capacity left.
  void insert(column_view const& keys, stream_ref stream = default_stream());
  /// Number of (build row, probe row) matches of the probe keys.
  [[nodiscard]] size_type count(column_view const& probe_keys,
                                stream_ref stream = default_stream()) const;
  /// All matching (build row, probe row) pairs (count, scan, write: He et al.'s three-phase
  /// output), grouped by probe row in probe order; within one probe row in slot order.
  [[nodiscard]] row_id_pairs retrieve_all(column_view const& probe_keys,
                                          stream_ref stream = default_stream(),
                                          memory_resource_ref mr = nullptr) const;
  /// uint8 column: 1 where the probe key is in the table, else 0.
  [[nodiscard]] column contains(column_view const& probe_keys,
                                stream_ref stream = default_stream(),
                                memory_resource_ref mr = nullptr) const;
  /// int64 column: the build row of the first match in probe order, -1 where there is none.
  [[nodiscard]] column find(column_view const& probe_keys, stream_ref stream = default_stream(),
                            memory_resource_ref mr = nullptr) const;

  [[nodiscard]] type_id key_type() const noexcept;
  /// Rows inserted so far.
  [[nodiscard]] size_type size() const noexcept;
  [[nodiscard]] size_type capacity() const noexcept;
  [[nodiscard]] size_type num_slots() const noexcept;
  /// The layout chosen (packed or wide, never automatic).
  [[nodiscard]] slot_layout layout() const noexcept;

 private:
  std::unique_ptr<detail::hash_table_impl> impl_;
};

/// Perfect hashing for dense unique keys (Lutz et al.): a direct array indexed by key - min that
/// holds each key's build row id (or an empty marker). Built from a device key column whose keys
/// are unique and span at most size * max_slack values.
class perfect_hash_array {
 public:
  /// Builds over `keys` (row i gets row id i). Throws logic_error when the keys are not unique or
  /// span more than keys.size() * max_slack values (max_slack >= 1).
  perfect_hash_array(column_view const& keys, double max_slack = 2.0,
                     stream_ref stream = default_stream(), memory_resource_ref mr = nullptr);
  /// As the constructor, but returns nullopt instead of throwing when the keys do not qualify.
  static std::optional<perfect_hash_array> try_build(column_view const& keys,
                                                     double max_slack = 2.0,
                                                     stream_ref stream = default_stream(),
                                                     memory_resource_ref mr = nullptr);
  ~perfect_hash_array();
  perfect_hash_array(perfect_hash_array&&) noexcept;
  perfect_hash_array& operator=(perfect_hash_array&&) noexcept;
  perfect_hash_array(perfect_hash_array const&) = delete;
  perfect_hash_array& operator=(perfect_hash_array const&) = delete;

  /// int64 column: the build row of each probe key, -1 where it is absent.
  [[nodiscard]] column find(column_view const& probe_keys, stream_ref stream = default_stream(),
                            memory_resource_ref mr = nullptr) const;
  /// uint8 column: 1 where the probe key is present, else 0.
  [[nodiscard]] column contains(column_view const& probe_keys,
                                stream_ref stream = default_stream(),
                                memory_resource_ref mr = nullptr) const;

  [[nodiscard]] type_id key_type() const noexcept;
  [[nodiscard]] size_type size() const noexcept;
  /// Array length: max - min + 1 (0 for an empty build).
  [[nodiscard]] size_type range() const noexcept;

 private:
  struct from_impl {};
  perfect_hash_array(from_impl, std::unique_ptr<detail::perfect_hash_impl> impl);
  std::unique_ptr<detail::perfect_hash_impl> impl_;
};

}  // namespace joinery
