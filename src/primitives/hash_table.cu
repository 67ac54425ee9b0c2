// GPU open-addressing hash multimap: the type-erased detail layer over open_addressing_table,
// explicitly instantiated over the four key types, both slot layouts and both hash functions.
#include "primitives/detail/open_addressing_table.cuh"
#include "primitives/hash_table_impl.hpp"

#include <memory>
#include <string>

namespace joinery::detail {

namespace gpu {

template class open_addressing_table<std::int32_t, packed_slots<std::int32_t>, murmur_hash>;
template class open_addressing_table<std::int32_t, packed_slots<std::int32_t>, multiply_shift_hash>;
template class open_addressing_table<std::uint32_t, packed_slots<std::uint32_t>, murmur_hash>;
template class open_addressing_table<std::uint32_t, packed_slots<std::uint32_t>, multiply_shift_hash>;
template class open_addressing_table<std::int32_t, wide_slots<std::int32_t>, murmur_hash>;
template class open_addressing_table<std::int32_t, wide_slots<std::int32_t>, multiply_shift_hash>;
template class open_addressing_table<std::uint32_t, wide_slots<std::uint32_t>, murmur_hash>;
template class open_addressing_table<std::uint32_t, wide_slots<std::uint32_t>, multiply_shift_hash>;
template class open_addressing_table<std::int64_t, wide_slots<std::int64_t>, murmur_hash>;
template class open_addressing_table<std::int64_t, wide_slots<std::int64_t>, multiply_shift_hash>;
template class open_addressing_table<std::uint64_t, wide_slots<std::uint64_t>, murmur_hash>;
template class open_addressing_table<std::uint64_t, wide_slots<std::uint64_t>, multiply_shift_hash>;

namespace {

template <class Key, class Layout, class Hasher>
class typed_hash_table final : public hash_table_impl {
 public:
  static constexpr slot_layout layout_id =
      std::is_same_v<Layout, packed_slots<Key>> ? slot_layout::packed : slot_layout::wide;

  typed_hash_table(size_type capacity, double load_factor, stream_ref stream, memory_resource* mr)
      : table_(capacity, load_factor, stream, mr) {}

  void insert(column_view const& keys, stream_ref stream) override {
    table_.insert(keys.data_as<Key>(), keys.size(), stream);
  }
  [[nodiscard]] size_type count(column_view const& probe, stream_ref stream) const override {
    return table_.count(probe.data_as<Key>(), probe.size(), stream);
  }
  [[nodiscard]] row_id_pairs retrieve_all(column_view const& probe, stream_ref stream,
                                          memory_resource* mr) const override {
    return table_.retrieve_all(probe.data_as<Key>(), probe.size(), stream, mr);
  }
  void contains(column_view const& probe, column& out, stream_ref stream) const override {
    table_.contains(probe.data_as<Key>(), probe.size(), out.data_as<std::uint8_t>(), stream);
  }
  void find(column_view const& probe, column& out, stream_ref stream) const override {
    table_.find(probe.data_as<Key>(), probe.size(), out.data_as<size_type>(), stream);
  }
  [[nodiscard]] type_id key_type() const noexcept override { return type_to_id_v<Key>; }
  [[nodiscard]] size_type size() const noexcept override { return table_.size(); }
  [[nodiscard]] size_type capacity() const noexcept override { return table_.capacity(); }
  [[nodiscard]] size_type num_slots() const noexcept override { return table_.num_slots(); }
  [[nodiscard]] slot_layout layout() const noexcept override { return layout_id; }

 private:
  open_addressing_table<Key, Layout, Hasher> table_;
};

template <class Key, class Layout>
std::unique_ptr<hash_table_impl> make_with_layout(size_type capacity,
                                                  hash_table_options const& options,
                                                  stream_ref stream, memory_resource* mr) {
  switch (options.hash) {
    case hash_function::murmur:
      return std::make_unique<typed_hash_table<Key, Layout, murmur_hash>>(
          capacity, options.load_factor, stream, mr);
    case hash_function::multiply_shift:
      return std::make_unique<typed_hash_table<Key, Layout, multiply_shift_hash>>(
          capacity, options.load_factor, stream, mr);
  }
  JOINERY_FAIL("unknown hash function");
}

}  // namespace
}  // namespace gpu

std::unique_ptr<hash_table_impl> make_hash_table(type_id key_type, size_type capacity,
                                                 hash_table_options const& options,
                                                 stream_ref stream, memory_resource* mr) {
  return dispatch_key_type(key_type, [&](auto tag) -> std::unique_ptr<hash_table_impl> {
    using Key = typename decltype(tag)::type;
    if constexpr (sizeof(Key) == 4) {
      bool const packed =
          options.layout == slot_layout::packed ||
          (options.layout == slot_layout::automatic &&
           capacity <= gpu::packed_slots<Key>::max_capacity);
      if (packed) {
        return gpu::make_with_layout<Key, gpu::packed_slots<Key>>(capacity, options, stream, mr);
      }
    } else {
      JOINERY_EXPECTS(options.layout != slot_layout::packed,
                      "packed hash-table slots hold 4-byte keys only");
    }
    return gpu::make_with_layout<Key, gpu::wide_slots<Key>>(capacity, options, stream, mr);
  });
}

}  // namespace joinery::detail
