// No-partitioning hash join (Lutz et al.'s baseline; the libcudf shape): one global
// open-addressing table with linear probing over the build keys at the requested load factor,
// or a perfect-hash array when the build keys are unique and dense; probed by every probe row,
// m:n matches through retrieve-all, output by the three-phase driver.
#include "join/gpu/join_common.cuh"
#include "primitives/detail/open_addressing_table.cuh"
#include "primitives/detail/perfect_hash_array.cuh"

#include <cub/device/device_reduce.cuh>

#include <memory>
#include <optional>
#include <utility>

namespace joinery::detail::gpu {

namespace {

using nphj_policy = three_phase_policy<256, 4>;

template <class Key, class Layout, class Hasher, class F>
__device__ void visit_matches(open_addressing_ref<Key, Layout, Hasher> const& ref, Key k, F&& f) {
  ref.for_each_match(k, [&](size_type row) {
    f(row);
    return true;
  });
}

template <class Key, class F>
__device__ void visit_matches(perfect_hash_ref<Key> const& ref, Key k, F&& f) {
  size_type const row = ref.find(k);
  if (row >= 0) { f(row); }
}

/// Probe items are probe rows; matches come from a table reference (hash or perfect).
template <class U, class Ref>
struct table_matcher {
  using policy = nphj_policy;
  Ref ref;
  U const* probe;
  key_codec codec;

  std::size_t smem_bytes() const { return 0; }
  __device__ void init_block(unsigned char*) const {}
  template <int N, int Stride, class F>
  __device__ void match_items(unsigned char*, size_type base, size_type end, unsigned active,
                              F&& f) const {
    U k[N];
#pragma unroll
    for (int j = 0; j < N; ++j) {
      size_type const item = base + static_cast<size_type>(j) * Stride;
      if (item < end) { k[j] = probe[item]; }
    }
#pragma unroll
    for (int j = 0; j < N; ++j) {
      if (base + static_cast<size_type>(j) * Stride < end && ((active >> j) & 1u) != 0) {
        visit_matches(ref, k[j], [&](size_type row) { f(j, row); });
      }
    }
  }
  __device__ size_type probe_row(size_type item) const { return item; }
  __device__ std::uint64_t probe_value(size_type item) const {
    return checksum_of(probe[item], codec);
  }
};

/// Builds a perfect-hash array when the build keys are unique and span at most 2x their count;
/// nullopt otherwise (the caller falls back to the hash table).
template <class U>
std::optional<perfect_hash_ref<U>> try_perfect_hash(U const* keys, size_type n, buffer& storage,
                                                    stream_ref stream, memory_resource* mr) {
  if (n == 0) { return std::nullopt; }
  auto const s = to_cuda(stream);
  buffer minmax(2 * sizeof(U), mr, stream);
  auto* d = static_cast<U*>(minmax.data());
  std::size_t temp = 0;
  JOINERY_CUDA_TRY(cub::DeviceReduce::Min(nullptr, temp, keys, d, n, s));
  std::size_t temp2 = 0;
  JOINERY_CUDA_TRY(cub::DeviceReduce::Max(nullptr, temp2, keys, d + 1, n, s));
  buffer scratch(scratch_bytes(std::max(temp, temp2)), mr, stream);
  JOINERY_CUDA_TRY(cub::DeviceReduce::Min(scratch.data(), temp, keys, d, n, s));
  JOINERY_CUDA_TRY(cub::DeviceReduce::Max(scratch.data(), temp2, keys, d + 1, n, s));
  U h[2];
  JOINERY_CUDA_TRY(cudaMemcpyAsync(h, d, sizeof(h), cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
  std::uint64_t const span = static_cast<std::uint64_t>(h[1] - h[0]);
  if (span >= static_cast<std::uint64_t>(2 * n)) { return std::nullopt; }
  auto const range = static_cast<size_type>(span) + 1;
  storage = buffer(sizeof(size_type) * static_cast<std::size_t>(range), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(storage.data(), 0xff, storage.size(), s));
  perfect_hash_ref<U> ref(static_cast<size_type*>(storage.data()), h[0], range);
  buffer failed(sizeof(unsigned int), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(failed.data(), 0, failed.size(), s));
  perfect_hash_build<perfect_hash_policy>(ref, keys, n, static_cast<unsigned int*>(failed.data()),
                                          s);
  if (read_scalar(static_cast<unsigned int const*>(failed.data()), stream) != 0) {
    return std::nullopt;  // a duplicate key: the multimap handles it
  }
  return ref;
}

/// The build side as a table reference of type Ref, kept alive by its storage.
template <class U, class Ref, class Storage>
class build_table_of final : public build_table {
 public:
  build_table_of(Storage storage, Ref ref, type_id key_type, std::size_t bytes)
      : storage_(std::move(storage)), ref_(ref), codec_(codec_of(key_type, false)), bytes_(bytes) {}

  device_matches probe(join_request const& rq, phase_clock& clock, stream_ref stream,
                       memory_resource* mr) const override {
    table_matcher<U, Ref> m{ref_, static_cast<U const*>(rq.probe_keys), codec_};
    return run_three_phase(m, rq.probe_rows, rq, codec_, "no_partition_hash", clock,
                           stream, mr);
  }
  [[nodiscard]] std::size_t bytes() const noexcept override { return bytes_; }

 private:
  Storage storage_;
  Ref ref_;
  key_codec codec_;
  std::size_t bytes_;
};

template <class U, class Layout>
std::unique_ptr<build_table> make_hash_table(join_request const& rq, stream_ref stream,
                                             memory_resource* mr) {
  using table_type = open_addressing_table<U, Layout, murmur_hash>;
  auto table = std::make_unique<table_type>(rq.build_rows, rq.load_factor, stream, mr);
  table->insert(static_cast<U const*>(rq.build_keys), rq.build_rows, stream);
  auto const ref = table->ref();
  auto const bytes =
    static_cast<std::size_t>(table->num_slots()) * sizeof(typename Layout::slot_type);
  return std::make_unique<build_table_of<U, typename table_type::ref_type,
                                         std::unique_ptr<table_type>>>(std::move(table), ref,
                                                                       rq.key_type, bytes);
}

template <class U>
std::unique_ptr<build_table> make_table(join_request const& rq, stream_ref stream,
                                        memory_resource* mr) {
  buffer perfect_storage;
  if (auto ref = try_perfect_hash(static_cast<U const*>(rq.build_keys), rq.build_rows,
                                  perfect_storage, stream, mr)) {
    auto const bytes = perfect_storage.size();
    return std::make_unique<build_table_of<U, perfect_hash_ref<U>, buffer>>(
      std::move(perfect_storage), *ref, rq.key_type, bytes);
  }
  if constexpr (sizeof(U) == 4) {
    if (rq.build_rows < packed_slots<std::uint32_t>::max_capacity) {
      return make_hash_table<U, packed_slots<U>>(rq, stream, mr);
    }
  }
  return make_hash_table<U, wide_slots<U>>(rq, stream, mr);
}

}  // namespace

std::unique_ptr<build_table> make_build_table(join_request const& rq, stream_ref stream,
                                              memory_resource* mr) {
  return dispatch_key_width(rq.key_type, [&](auto u) -> std::unique_ptr<build_table> {
    return make_table<decltype(u)>(rq, stream, mr);
  });
}

std::size_t build_table_bytes(size_type build_rows, type_id key_type, double load_factor) {
  auto const slots = static_cast<std::size_t>(hash_table_slots_for(build_rows, load_factor));
  bool const packed = size_of(key_type) == 4 && build_rows < packed_slots<std::uint32_t>::max_capacity;
  return slots * (packed ? sizeof(packed_slots<std::uint32_t>::slot_type)
                         : sizeof(wide_slots<std::uint64_t>::slot_type));
}

device_matches no_partition_hash_join(join_request const& rq, stream_ref stream,
                                      memory_resource* mr) {
  phase_clock clock(stream);
  clock.mark("build");
  auto const table = make_build_table(rq, stream, mr);
  auto out = table->probe(rq, clock, stream, mr);
  out.phases = clock.finish();
  return out;
}

}  // namespace joinery::detail::gpu
