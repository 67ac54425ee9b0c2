// GPU perfect-hash array for dense unique keys: build (min/max by CUB, range check, CAS inserts
// that detect duplicates) and probes, explicitly instantiated over the four key types.
#include "primitives/detail/perfect_hash_array.cuh"
#include "primitives/hash_table_impl.hpp"

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <memory>
#include <string>

namespace joinery::detail {

namespace gpu {

namespace {

cudaStream_t cuda_stream_of(stream_ref stream) noexcept {
  return static_cast<cudaStream_t>(stream.handle());
}

unsigned perfect_hash_grid(size_type n) {
  return capped_grid_size(ceil_div(n, perfect_hash_policy::tile_items),
                          perfect_hash_policy::max_blocks_per_sm);
}

template <class Key>
class typed_perfect_hash final : public perfect_hash_impl {
 public:
  typed_perfect_hash(buffer rows, Key min_key, size_type range, size_type size)
      : rows_(std::move(rows)), min_key_(min_key), range_(range), size_(size) {}

  [[nodiscard]] perfect_hash_ref<Key> ref() const noexcept {
    return perfect_hash_ref<Key>(static_cast<size_type*>(const_cast<void*>(rows_.data())),
                                 min_key_, range_);
  }

  void find(column_view const& probe, column& out, stream_ref stream) const override {
    if (probe.empty()) { return; }
    perfect_hash_find_kernel<perfect_hash_policy>
        <<<perfect_hash_grid(probe.size()), perfect_hash_policy::threads_per_block, 0,
           cuda_stream_of(stream)>>>(ref(), probe.data_as<Key>(), probe.size(),
                                     out.data_as<size_type>());
    JOINERY_CHECK_LAUNCH();
  }
  void contains(column_view const& probe, column& out, stream_ref stream) const override {
    if (probe.empty()) { return; }
    perfect_hash_contains_kernel<perfect_hash_policy>
        <<<perfect_hash_grid(probe.size()), perfect_hash_policy::threads_per_block, 0,
           cuda_stream_of(stream)>>>(ref(), probe.data_as<Key>(), probe.size(),
                                     out.data_as<std::uint8_t>());
    JOINERY_CHECK_LAUNCH();
  }
  [[nodiscard]] type_id key_type() const noexcept override { return type_to_id_v<Key>; }
  [[nodiscard]] size_type size() const noexcept override { return size_; }
  [[nodiscard]] size_type range() const noexcept override { return range_; }

 private:
  buffer rows_;
  Key min_key_{};
  size_type range_ = 0;
  size_type size_ = 0;
};

template <class Key>
std::unique_ptr<perfect_hash_impl> build(column_view const& keys, double max_slack,
                                         stream_ref stream, memory_resource* mr,
                                         std::string& why) {
  if (mr == nullptr) { mr = device_resource(); }
  auto const n = keys.size();
  if (n == 0) { return std::make_unique<typed_perfect_hash<Key>>(buffer{}, Key{}, 0, 0); }
  auto const s = cuda_stream_of(stream);
  auto const* d_keys = keys.data_as<Key>();

  // Key bounds: two CUB reductions into one scratch buffer {min, max, failure flag, temp...}.
  std::size_t min_bytes = 0;
  std::size_t max_bytes = 0;
  JOINERY_CUDA_TRY(cub::DeviceReduce::Min(nullptr, min_bytes, d_keys, static_cast<Key*>(nullptr),
                                          n, s));
  JOINERY_CUDA_TRY(cub::DeviceReduce::Max(nullptr, max_bytes, d_keys, static_cast<Key*>(nullptr),
                                          n, s));
  constexpr std::size_t header = 32;  // min, max (<= 8 bytes each), flag; keeps temp aligned
  buffer scratch(header + std::max(min_bytes, max_bytes), mr, stream);
  auto* base = static_cast<unsigned char*>(scratch.data());
  auto* d_min = reinterpret_cast<Key*>(base);
  auto* d_max = reinterpret_cast<Key*>(base + 8);
  auto* d_failed = reinterpret_cast<unsigned int*>(base + 16);
  void* temp = base + header;
  JOINERY_CUDA_TRY(cub::DeviceReduce::Min(temp, min_bytes, d_keys, d_min, n, s));
  JOINERY_CUDA_TRY(cub::DeviceReduce::Max(temp, max_bytes, d_keys, d_max, n, s));
  Key bounds[2]{};
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&bounds[0], d_min, sizeof(Key), cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&bounds[1], d_max, sizeof(Key), cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));

  // Span max - min, exact mod 2^64 (it is below 2^64 for every key type).
  std::uint64_t const span = key_value_bits(bounds[1]) - key_value_bits(bounds[0]);
  long double const limit = static_cast<long double>(n) * max_slack;
  if (static_cast<long double>(span) + 1.0L > limit) {
    why = "the keys span " + std::to_string(bounds[0]) + " .. " + std::to_string(bounds[1]) +
          ", more values than size * max_slack = " + std::to_string(n) + " * " +
          std::to_string(max_slack);
    return nullptr;
  }
  JOINERY_EXPECTS(span < (std::uint64_t{1} << 60),
                  "perfect_hash_array: key range too large for one array");
  auto const range = static_cast<size_type>(span + 1);

  buffer rows(static_cast<std::size_t>(range) * sizeof(size_type), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(rows.data(), 0xff, rows.size(), s));  // every entry -1
  JOINERY_CUDA_TRY(cudaMemsetAsync(d_failed, 0, sizeof(unsigned int), s));
  perfect_hash_ref<Key> const ref(static_cast<size_type*>(rows.data()), bounds[0], range);
  perfect_hash_build<perfect_hash_policy>(ref, d_keys, n, d_failed, s);
  unsigned int failed = 0;
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&failed, d_failed, sizeof(failed), cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
  if (failed != 0) {
    why = "the keys are not unique";
    return nullptr;
  }
  return std::make_unique<typed_perfect_hash<Key>>(std::move(rows), bounds[0], range, n);
}

template class typed_perfect_hash<std::int32_t>;
template class typed_perfect_hash<std::int64_t>;
template class typed_perfect_hash<std::uint32_t>;
template class typed_perfect_hash<std::uint64_t>;

}  // namespace
}  // namespace gpu

std::unique_ptr<perfect_hash_impl> make_perfect_hash(column_view const& keys, double max_slack,
                                                     stream_ref stream, memory_resource* mr,
                                                     std::string& why) {
  return dispatch_key_type(keys.type(), [&](auto tag) -> std::unique_ptr<perfect_hash_impl> {
    using Key = typename decltype(tag)::type;
    return gpu::build<Key>(keys, max_slack, stream, mr, why);
  });
}

}  // namespace joinery::detail
