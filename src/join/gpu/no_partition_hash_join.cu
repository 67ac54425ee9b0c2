// No-partitioning hash join (Lutz et al.'s baseline; the libcudf shape): one global
// open-addressing table with linear probing over the build keys at the requested load factor,
// or a perfect-hash array when the build keys are unique and dense; probed by every probe row,
// m:n matches through retrieve-all, output by the three-phase driver.
#include "join/gpu/join_common.cuh"
#include "primitives/detail/open_addressing_table.cuh"
#include "primitives/detail/perfect_hash_array.cuh"

#include <cub/device/device_reduce.cuh>

#include <optional>

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

template <class U, class Layout>
device_matches probe_hash_table(join_request const& rq, phase_clock& clock, stream_ref stream,
                                memory_resource* mr) {
  auto const* build = static_cast<U const*>(rq.build_keys);
  auto const* probe = static_cast<U const*>(rq.probe_keys);
  open_addressing_table<U, Layout, murmur_hash> table(rq.build_rows, rq.load_factor, stream, mr);
  table.insert(build, rq.build_rows, stream);
  table_matcher<U, typename decltype(table)::ref_type> m{table.ref(), probe,
                                                         codec_of(rq.key_type, false)};
  return run_three_phase(m, rq.probe_rows, rq, m.codec, "no_partition_hash", clock, stream, mr);
}

template <class U>
device_matches run(join_request const& rq, stream_ref stream, memory_resource* mr) {
  phase_clock clock(stream);
  clock.mark("build");
  auto const* probe = static_cast<U const*>(rq.probe_keys);
  device_matches out;
  buffer perfect_storage;
  if (auto ref = try_perfect_hash(static_cast<U const*>(rq.build_keys), rq.build_rows,
                                  perfect_storage, stream, mr)) {
    table_matcher<U, perfect_hash_ref<U>> m{*ref, probe, codec_of(rq.key_type, false)};
    out = run_three_phase(m, rq.probe_rows, rq, m.codec, "no_partition_hash", clock, stream, mr);
  } else if (sizeof(U) == 4 && rq.build_rows < packed_slots<std::uint32_t>::max_capacity) {
    if constexpr (sizeof(U) == 4) {
      out = probe_hash_table<U, packed_slots<U>>(rq, clock, stream, mr);
    }
  } else {
    out = probe_hash_table<U, wide_slots<U>>(rq, clock, stream, mr);
  }
  out.phases = clock.finish();
  return out;
}

}  // namespace

device_matches no_partition_hash_join(join_request const& rq, stream_ref stream,
                                      memory_resource* mr) {
  return dispatch_key_width(rq.key_type,
                            [&](auto u) { return run<decltype(u)>(rq, stream, mr); });
}

}  // namespace joinery::detail::gpu
