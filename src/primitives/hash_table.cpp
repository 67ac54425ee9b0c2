// The public GPU hash tables: argument checks and NVTX ranges, then the type-erased detail layer
// (hash_table.cu / perfect_hash.cu, or the host stubs without CUDA).
#include "primitives/hash_table_impl.hpp"

#include <joinery/primitives/hash_table.hpp>

#include <string>

namespace joinery {

namespace {

void check_keys(column_view const& keys, type_id expected, char const* what) {
  JOINERY_EXPECTS(keys.type() == expected,
                  std::string(what) + ": the key column is " + std::string(to_string(keys.type())) +
                      " but the table holds " + std::string(to_string(expected)) + " keys");
  JOINERY_EXPECTS(keys.space() != memory_space::host,
                  std::string(what) +
                      ": keys must be in device or pinned host memory (the GPU cannot read "
                      "pageable host memory)");
  JOINERY_EXPECTS(keys.null_count() == 0, std::string(what) + ": null keys are not supported");
}

memory_resource* result_resource(memory_resource* mr, char const* what) {
  if (mr == nullptr) { mr = device_resource(); }
  JOINERY_EXPECTS(mr->space() != memory_space::host,
                  std::string(what) + ": results must go to device or pinned host memory");
  return mr;
}

/// The shared shape of the bulk lookups: check, open a range, allocate the result, fill it.
template <class Impl, class Fill>
column lookup(Impl const* impl, column_view const& probe_keys, char const* what, type_id out_type,
              stream_ref stream, memory_resource_ref mr, Fill fill) {
  JOINERY_EXPECTS(impl != nullptr, std::string(what) + " on a moved-from object");
  check_keys(probe_keys, impl->key_type(), what);
  mr = result_resource(mr, what);
  scoped_range range(what);
  column out(out_type, probe_keys.size(), mr, stream);
  fill(out);
  return out;
}

}  // namespace

// ---- hash_table --------------------------------------------------------------------------------

hash_table::hash_table(type_id key_type, size_type capacity, hash_table_options const& options,
                       stream_ref stream, memory_resource_ref mr) {
  JOINERY_EXPECTS(is_key_type(key_type), "hash_table keys must be int32, int64, uint32 or uint64, "
                                         "not " + std::string(to_string(key_type)));
  JOINERY_EXPECTS(capacity >= 0, "hash_table capacity must not be negative");
  JOINERY_EXPECTS(options.load_factor > 0.0 && options.load_factor < 1.0,
                  "hash_table load factor must be in (0, 1), got " +
                      std::to_string(options.load_factor));
  JOINERY_EXPECTS(options.layout != slot_layout::packed || size_of(key_type) == 4,
                  "packed hash-table slots hold 4-byte keys only");
  JOINERY_EXPECTS(mr == nullptr || mr->space() == memory_space::device,
                  "hash_table slots must be in device memory");
  scoped_range range("joinery::hash_table::hash_table");
  impl_ = detail::make_hash_table(key_type, capacity, options, stream, mr);
}

hash_table::~hash_table() = default;
hash_table::hash_table(hash_table&&) noexcept = default;
hash_table& hash_table::operator=(hash_table&&) noexcept = default;

void hash_table::insert(column_view const& keys, stream_ref stream) {
  JOINERY_EXPECTS(impl_ != nullptr, "hash_table::insert on a moved-from table");
  check_keys(keys, impl_->key_type(), "hash_table::insert");
  JOINERY_EXPECTS(keys.size() <= impl_->capacity() - impl_->size(),
                  "hash_table::insert of " + std::to_string(keys.size()) +
                      " rows exceeds the capacity (" + std::to_string(impl_->capacity()) +
                      " rows, " + std::to_string(impl_->size()) + " inserted)");
  scoped_range range("joinery::hash_table::insert");
  impl_->insert(keys, stream);
}

size_type hash_table::count(column_view const& probe_keys, stream_ref stream) const {
  JOINERY_EXPECTS(impl_ != nullptr, "hash_table::count on a moved-from table");
  check_keys(probe_keys, impl_->key_type(), "hash_table::count");
  scoped_range range("joinery::hash_table::count");
  return impl_->count(probe_keys, stream);
}

row_id_pairs hash_table::retrieve_all(column_view const& probe_keys, stream_ref stream,
                                      memory_resource_ref mr) const {
  JOINERY_EXPECTS(impl_ != nullptr, "hash_table::retrieve_all on a moved-from table");
  check_keys(probe_keys, impl_->key_type(), "hash_table::retrieve_all");
  mr = result_resource(mr, "hash_table::retrieve_all");
  scoped_range range("joinery::hash_table::retrieve_all");
  return impl_->retrieve_all(probe_keys, stream, mr);
}

column hash_table::contains(column_view const& probe_keys, stream_ref stream,
                            memory_resource_ref mr) const {
  return lookup(impl_.get(), probe_keys, "joinery::hash_table::contains", type_id::uint8, stream, mr,
                [&](column& out) { impl_->contains(probe_keys, out, stream); });
}

column hash_table::find(column_view const& probe_keys, stream_ref stream,
                        memory_resource_ref mr) const {
  return lookup(impl_.get(), probe_keys, "joinery::hash_table::find", type_id::int64, stream, mr,
                [&](column& out) { impl_->find(probe_keys, out, stream); });
}

type_id hash_table::key_type() const noexcept {
  return impl_ ? impl_->key_type() : type_id::int32;
}
size_type hash_table::size() const noexcept { return impl_ ? impl_->size() : 0; }
size_type hash_table::capacity() const noexcept { return impl_ ? impl_->capacity() : 0; }
size_type hash_table::num_slots() const noexcept { return impl_ ? impl_->num_slots() : 0; }
slot_layout hash_table::layout() const noexcept {
  return impl_ ? impl_->layout() : slot_layout::automatic;
}

// ---- perfect_hash_array ------------------------------------------------------------------------

namespace {
std::unique_ptr<detail::perfect_hash_impl> build_perfect_hash(column_view const& keys,
                                                              double max_slack, stream_ref stream,
                                                              memory_resource* mr,
                                                              std::string& why) {
  JOINERY_EXPECTS(is_key_type(keys.type()),
                  "perfect_hash_array keys must be int32, int64, uint32 or uint64, not " +
                      std::string(to_string(keys.type())));
  check_keys(keys, keys.type(), "perfect_hash_array");
  JOINERY_EXPECTS(max_slack >= 1.0, "perfect_hash_array max_slack must be >= 1, got " +
                                        std::to_string(max_slack));
  JOINERY_EXPECTS(mr == nullptr || mr->space() == memory_space::device,
                  "perfect_hash_array must be in device memory");
  scoped_range range("joinery::perfect_hash_array::build");
  return detail::make_perfect_hash(keys, max_slack, stream, mr, why);
}
}  // namespace

perfect_hash_array::perfect_hash_array(column_view const& keys, double max_slack,
                                       stream_ref stream, memory_resource_ref mr) {
  std::string why;
  impl_ = build_perfect_hash(keys, max_slack, stream, mr, why);
  JOINERY_EXPECTS(impl_ != nullptr, "perfect_hash_array: " + why);
}

perfect_hash_array::perfect_hash_array(from_impl, std::unique_ptr<detail::perfect_hash_impl> impl)
    : impl_(std::move(impl)) {}

std::optional<perfect_hash_array> perfect_hash_array::try_build(column_view const& keys,
                                                                double max_slack,
                                                                stream_ref stream,
                                                                memory_resource_ref mr) {
  std::string why;
  auto impl = build_perfect_hash(keys, max_slack, stream, mr, why);
  if (!impl) { return std::nullopt; }
  return perfect_hash_array(from_impl{}, std::move(impl));
}

perfect_hash_array::~perfect_hash_array() = default;
perfect_hash_array::perfect_hash_array(perfect_hash_array&&) noexcept = default;
perfect_hash_array& perfect_hash_array::operator=(perfect_hash_array&&) noexcept = default;

column perfect_hash_array::find(column_view const& probe_keys, stream_ref stream,
                                memory_resource_ref mr) const {
  return lookup(impl_.get(), probe_keys, "joinery::perfect_hash_array::find", type_id::int64, stream, mr,
                [&](column& out) { impl_->find(probe_keys, out, stream); });
}

column perfect_hash_array::contains(column_view const& probe_keys, stream_ref stream,
                                    memory_resource_ref mr) const {
  return lookup(impl_.get(), probe_keys, "joinery::perfect_hash_array::contains", type_id::uint8, stream, mr,
                [&](column& out) { impl_->contains(probe_keys, out, stream); });
}

type_id perfect_hash_array::key_type() const noexcept {
  return impl_ ? impl_->key_type() : type_id::int32;
}
size_type perfect_hash_array::size() const noexcept { return impl_ ? impl_->size() : 0; }
size_type perfect_hash_array::range() const noexcept { return impl_ ? impl_->range() : 0; }

}  // namespace joinery
