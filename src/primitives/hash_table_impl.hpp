#pragma once
// Internal, host-only: the type-erased implementations behind joinery::hash_table and
// joinery::perfect_hash_array. Defined in hash_table.cu / perfect_hash.cu (GPU backend) or as
// stubs that throw in primitives_host_stubs.cpp (built without CUDA). Arguments are checked by the
// public layer (hash_table.cpp) before they get here.
#include <joinery/primitives/hash_table.hpp>

#include <memory>
#include <string>

namespace joinery::detail {

class hash_table_impl {
 public:
  virtual ~hash_table_impl() = default;
  virtual void insert(column_view const& keys, stream_ref stream) = 0;
  [[nodiscard]] virtual size_type count(column_view const& probe, stream_ref stream) const = 0;
  [[nodiscard]] virtual row_id_pairs retrieve_all(column_view const& probe, stream_ref stream,
                                                  memory_resource* mr) const = 0;
  virtual void contains(column_view const& probe, column& out, stream_ref stream) const = 0;
  virtual void find(column_view const& probe, column& out, stream_ref stream) const = 0;
  [[nodiscard]] virtual type_id key_type() const noexcept = 0;
  [[nodiscard]] virtual size_type size() const noexcept = 0;
  [[nodiscard]] virtual size_type capacity() const noexcept = 0;
  [[nodiscard]] virtual size_type num_slots() const noexcept = 0;
  [[nodiscard]] virtual slot_layout layout() const noexcept = 0;
};

/// The table for `key_type` with the layout and hash the options ask for (automatic resolved).
std::unique_ptr<hash_table_impl> make_hash_table(type_id key_type, size_type capacity,
                                                 hash_table_options const& options,
                                                 stream_ref stream, memory_resource* mr);

class perfect_hash_impl {
 public:
  virtual ~perfect_hash_impl() = default;
  virtual void find(column_view const& probe, column& out, stream_ref stream) const = 0;
  virtual void contains(column_view const& probe, column& out, stream_ref stream) const = 0;
  [[nodiscard]] virtual type_id key_type() const noexcept = 0;
  [[nodiscard]] virtual size_type size() const noexcept = 0;
  [[nodiscard]] virtual size_type range() const noexcept = 0;
};

/// Builds a perfect-hash array over `keys`; nullptr (and the reason in `why`) when the keys span
/// more than keys.size() * max_slack values or are not unique.
std::unique_ptr<perfect_hash_impl> make_perfect_hash(column_view const& keys, double max_slack,
                                                     stream_ref stream, memory_resource* mr,
                                                     std::string& why);

}  // namespace joinery::detail
