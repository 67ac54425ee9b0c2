#pragma once
// Internal: the global open-addressing hash multimap with linear probing (m:n joins).
//
// The cuCollections design (API shape only): an owning host object, open_addressing_table, that
// allocates and empties the slots on a stream and runs bulk operations, and a trivially copyable
// open_addressing_ref passed by value to kernels, with device functions insert / find / contains
// / count / for_each_match that other primitives and joins call from their own kernels.
//
// Slots and the empty marker. A slot holds (key, row id). Emptiness is marked in the row-id field
// (all ones), never by a reserved key, so every key value of the type is storable, its minimum
// and maximum included. Slots are set to all-ones bytes (cudaMemsetAsync 0xff) when created.
//   packed_slots (4-byte keys): one 64-bit word, row id in the high 32 bits, key bits in the low
//     32; row ids below 2^32 - 1. One 64-bit atomicCAS from the empty word publishes key and row
//     together.
//   wide_slots (any key): 16 bytes {key bits zero-extended to 64, row id}; one 128-bit atomicCAS
//     (sm_90+) publishes both together. Below sm_90 the row word is claimed with a 64-bit CAS and
//     the key stored after it: correct for the phase discipline below, not for a probe that runs
//     concurrently with inserts in one kernel.
//
// Concurrency contract. Inserts may run concurrently with each other (any keys, duplicates
// included: a slot goes from empty to full exactly once, by a CAS, and an inserter whose CAS fails
// moves on to the next slot, so two inserts of one key take two slots). Probes (find, contains,
// count, for_each_match) must run after the inserts they should see have completed (a later
// kernel on the stream, or after a grid-wide barrier): the multimap is built, then probed, as in
// every join. A probe stops at the first empty slot; the table always keeps one empty slot, and
// every loop is bounded by the number of slots.
//
// Hashing: the hash's high bits pick the home slot by fast range (no modulo), so the slot count
// is exactly capacity / load factor (not rounded to a power of two).
#include "core/cuda_try.hpp"
#include "primitives/detail/grid_size.cuh"
#include "primitives/detail/hash.cuh"
#include "primitives/detail/lookup_agent.cuh"

#include <joinery/column.hpp>
#include <joinery/memory.hpp>
#include <joinery/primitives/hash_table.hpp>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/atomic>
#include <cuda/std/type_traits>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace joinery::detail::gpu {

/// Launch shape of every bulk hash-table kernel (insert, probe, count, retrieve).
struct hash_table_policy {
  static constexpr int threads_per_block = 256;
  /// Keys per thread per tile, loaded (striped, coalesced) before the first probe starts.
  static constexpr int items_per_thread = 4;
  static constexpr int tile_items = threads_per_block * items_per_thread;
  /// Grid-stride cap: at most this many blocks per SM, each looping over tiles.
  static constexpr int max_blocks_per_sm = 8;
};

// ---------------------------------------------------------------------------------------------
// Slot layouts
// ---------------------------------------------------------------------------------------------

/// 4-byte key and 32-bit row id in one 64-bit word.
template <class Key>
struct packed_slots {
  static_assert(sizeof(Key) == 4, "packed slots hold 4-byte keys");
  using key_type = Key;
  using slot_type = unsigned long long;
  static constexpr std::uint32_t empty_row = 0xffffffffU;
  /// Row ids 0 .. 2^32 - 2: a table holds at most 2^32 - 1 rows.
  static constexpr size_type max_capacity = size_type{0xffffffff};

  __host__ __device__ static constexpr slot_type empty_slot() noexcept { return ~0ULL; }
  __host__ __device__ static constexpr slot_type make(Key k, size_type row) noexcept {
    return (static_cast<slot_type>(static_cast<std::uint32_t>(row)) << 32) | key_bits(k);
  }
  __host__ __device__ static constexpr bool is_empty(slot_type s) noexcept {
    return static_cast<std::uint32_t>(s >> 32) == empty_row;
  }
  /// Only meaningful for a non-empty slot.
  __host__ __device__ static constexpr bool holds(slot_type s, Key k) noexcept {
    return static_cast<std::uint32_t>(s) == static_cast<std::uint32_t>(key_bits(k));
  }
  __host__ __device__ static constexpr size_type row_of(slot_type s) noexcept {
    return static_cast<size_type>(s >> 32);
  }
  /// A relaxed look before the CAS: a full slot never becomes empty again, so seeing it full is
  /// final; seeing it empty is only a hint (the CAS decides).
  __device__ static bool looks_empty(slot_type* p) noexcept {
    return is_empty(cuda::atomic_ref<slot_type, cuda::thread_scope_device>(*p).load(
        cuda::memory_order_relaxed));
  }
  /// Publishes key and row in one CAS; true when this thread took the slot.
  __device__ static bool try_claim(slot_type* p, Key k, size_type row) noexcept {
    return atomicCAS(p, empty_slot(), make(k, row)) == empty_slot();
  }
};

/// 16-byte slot: key bits zero-extended to 64, 64-bit row id.
template <class Key>
struct wide_slots {
  using key_type = Key;
  struct alignas(16) slot_type {
    unsigned long long key;
    unsigned long long row;
  };
  static_assert(sizeof(slot_type) == 16 && alignof(slot_type) == 16);
  static constexpr unsigned long long empty_row = ~0ULL;
  static constexpr size_type max_capacity = std::numeric_limits<size_type>::max();

  __host__ __device__ static constexpr slot_type empty_slot() noexcept { return {~0ULL, ~0ULL}; }
  __host__ __device__ static constexpr slot_type make(Key k, size_type row) noexcept {
    return {key_bits(k), static_cast<unsigned long long>(row)};
  }
  __host__ __device__ static constexpr bool is_empty(slot_type s) noexcept {
    return s.row == empty_row;
  }
  __host__ __device__ static constexpr bool holds(slot_type s, Key k) noexcept {
    return s.key == key_bits(k);
  }
  __host__ __device__ static constexpr size_type row_of(slot_type s) noexcept {
    return static_cast<size_type>(s.row);
  }
  __device__ static bool looks_empty(slot_type* p) noexcept {
    return cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(p->row).load(
               cuda::memory_order_relaxed) == empty_row;
  }
  __device__ static bool try_claim(slot_type* p, Key k, size_type row) noexcept {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    // Both words in one 16-byte CAS. A slot whose row is empty is the all-ones empty slot (the
    // only writer of a row is this CAS), so comparing the returned row suffices.
    slot_type const old = atomicCAS(p, empty_slot(), make(k, row));
    return old.row == empty_row;
#else
    // Claim the row word, then store the key: visible to the probes of later kernels.
    if (atomicCAS(&p->row, empty_row, static_cast<unsigned long long>(row)) != empty_row) {
      return false;
    }
    p->key = key_bits(k);
    return true;
#endif
  }
};

// ---------------------------------------------------------------------------------------------
// Device reference
// ---------------------------------------------------------------------------------------------

/// Non-owning, trivially copyable view of a table's slots for device code.
template <class Key, class Layout, class Hasher>
class open_addressing_ref {
 public:
  using key_type = Key;
  using layout_type = Layout;
  using slot_type = typename Layout::slot_type;

  open_addressing_ref() = default;
  __host__ __device__ open_addressing_ref(slot_type* slots, size_type num_slots,
                                          Hasher hasher = {}) noexcept
      : slots_(slots), num_slots_(num_slots), hasher_(hasher) {}

  /// Inserts (k, row); row in [0, Layout's capacity limit). Returns false only when every slot is
  /// full (the owning table never lets that happen).
  __device__ bool insert(Key k, size_type row) const noexcept {
    auto i = home(k);
    for (size_type probes = 0; probes < num_slots_; ++probes) {
      slot_type* const p = slots_ + i;
      if (Layout::looks_empty(p) && Layout::try_claim(p, k, row)) { return true; }
      i = next(i);
    }
    return false;
  }

  /// Calls f(row) for each row inserted with key k, in probe order, until f returns false.
  template <class F>
  __device__ void for_each_match(Key k, F&& f) const noexcept {
    auto i = home(k);
    for (size_type probes = 0; probes < num_slots_; ++probes) {
      slot_type const s = slots_[i];
      if (Layout::is_empty(s)) { return; }
      if (Layout::holds(s, k) && !f(Layout::row_of(s))) { return; }
      i = next(i);
    }
  }

  /// Row of the first match in probe order, -1 when k is absent.
  __device__ size_type find(Key k) const noexcept {
    size_type found = -1;
    for_each_match(k, [&](size_type row) {
      found = row;
      return false;
    });
    return found;
  }
  __device__ bool contains(Key k) const noexcept { return find(k) >= 0; }
  /// Number of rows inserted with key k.
  __device__ size_type count(Key k) const noexcept {
    size_type n = 0;
    for_each_match(k, [&](size_type) {
      ++n;
      return true;
    });
    return n;
  }

  [[nodiscard]] __host__ __device__ size_type num_slots() const noexcept { return num_slots_; }
  [[nodiscard]] __host__ __device__ slot_type* slots() const noexcept { return slots_; }

 private:
  __device__ size_type home(Key k) const noexcept {
    return static_cast<size_type>(to_slot(hasher_(k), static_cast<std::uint64_t>(num_slots_)));
  }
  __device__ size_type next(size_type i) const noexcept {
    return i + 1 == num_slots_ ? 0 : i + 1;
  }

  slot_type* slots_ = nullptr;
  size_type num_slots_ = 0;
  Hasher hasher_{};
};

// ---------------------------------------------------------------------------------------------
// Tile agent and kernels
// ---------------------------------------------------------------------------------------------

template <class Policy, class Ref>
__global__ void __launch_bounds__(Policy::threads_per_block)
    hash_table_insert_kernel(Ref ref, typename Ref::key_type const* __restrict__ keys,
                             size_type n, size_type first_row) {
  lookup_agent<Policy>::for_each_key(keys, n, [&](size_type i, typename Ref::key_type k) {
    (void)ref.insert(k, first_row + i);
  });
}

/// Total matches: per-thread sums, a block reduction, one atomic per block.
template <class Policy, class Ref>
__global__ void __launch_bounds__(Policy::threads_per_block)
    hash_table_count_kernel(Ref ref, typename Ref::key_type const* __restrict__ keys,
                            size_type n, unsigned long long* total) {
  using block_reduce = cub::BlockReduce<unsigned long long, Policy::threads_per_block>;
  __shared__ typename block_reduce::TempStorage temp;
  unsigned long long mine = 0;
  lookup_agent<Policy>::for_each_key(keys, n, [&](size_type, typename Ref::key_type k) {
    mine += static_cast<unsigned long long>(ref.count(k));
  });
  auto const block_sum = block_reduce(temp).Sum(mine);
  if (threadIdx.x == 0 && block_sum != 0) { atomicAdd(total, block_sum); }
}

/// Phase 1 of the three-phase output: matches per probe key.
template <class Policy, class Ref>
__global__ void __launch_bounds__(Policy::threads_per_block)
    hash_table_count_each_kernel(Ref ref, typename Ref::key_type const* __restrict__ keys,
                                 size_type n, size_type* __restrict__ counts) {
  lookup_agent<Policy>::for_each_key(keys, n, [&](size_type i, typename Ref::key_type k) {
    counts[i] = ref.count(k);
  });
}

/// Phase 3: each probe key writes its matches at its scanned offset (never past the next one).
template <class Policy, class Ref>
__global__ void __launch_bounds__(Policy::threads_per_block)
    hash_table_retrieve_kernel(Ref ref, typename Ref::key_type const* __restrict__ keys,
                               size_type n, size_type const* __restrict__ offsets,
                               size_type* __restrict__ build_rows,
                               size_type* __restrict__ probe_rows) {
  lookup_agent<Policy>::for_each_key(keys, n, [&](size_type i, typename Ref::key_type k) {
    size_type pos = offsets[i];
    size_type const end = offsets[i + 1];
    ref.for_each_match(k, [&](size_type row) {
      if (pos == end) { return false; }
      build_rows[pos] = row;
      probe_rows[pos] = i;
      ++pos;
      return true;
    });
  });
}

template <class Policy, class Ref>
__global__ void __launch_bounds__(Policy::threads_per_block)
    hash_table_contains_kernel(Ref ref, typename Ref::key_type const* __restrict__ keys,
                               size_type n, std::uint8_t* __restrict__ out) {
  lookup_agent<Policy>::for_each_key(keys, n, [&](size_type i, typename Ref::key_type k) {
    out[i] = ref.contains(k) ? 1 : 0;
  });
}

template <class Policy, class Ref>
__global__ void __launch_bounds__(Policy::threads_per_block)
    hash_table_find_kernel(Ref ref, typename Ref::key_type const* __restrict__ keys, size_type n,
                           size_type* __restrict__ out) {
  lookup_agent<Policy>::for_each_key(keys, n, [&](size_type i, typename Ref::key_type k) {
    out[i] = ref.find(k);
  });
}

// ---------------------------------------------------------------------------------------------
// Owning host object
// ---------------------------------------------------------------------------------------------

/// Slots for `capacity` rows at `load_factor`: ceil(capacity / load_factor), and always at least
/// capacity + 1 so that one slot stays empty and every probe ends.
inline size_type hash_table_slots_for(size_type capacity, double load_factor) {
  JOINERY_EXPECTS(capacity >= 0, "hash table capacity must not be negative");
  JOINERY_EXPECTS(load_factor > 0.0 && load_factor < 1.0,
                  "hash table load factor must be in (0, 1), got " + std::to_string(load_factor));
  long double const want = std::ceil(static_cast<long double>(capacity) / load_factor);
  JOINERY_EXPECTS(want < static_cast<long double>(size_type{1} << 60),
                  "hash table capacity " + std::to_string(capacity) + " is too large");
  return std::max(static_cast<size_type>(want), capacity + 1);
}

/// Resource for results and temporaries: the given one, or the device resource.
inline memory_resource* device_or_default(memory_resource* mr) {
  return mr != nullptr ? mr : device_resource();
}

template <class Key, class Layout, class Hasher, class Policy = hash_table_policy>
class open_addressing_table {
 public:
  using key_type = Key;
  using layout_type = Layout;
  using slot_type = typename Layout::slot_type;
  using ref_type = open_addressing_ref<Key, Layout, Hasher>;
  static_assert(std::is_trivially_copyable_v<ref_type>, "device refs are passed by value");

  open_addressing_table(size_type capacity, double load_factor, stream_ref stream,
                        memory_resource* mr)
      : capacity_(capacity), num_slots_(hash_table_slots_for(capacity, load_factor)),
        mr_(device_or_default(mr)) {
    JOINERY_EXPECTS(capacity <= Layout::max_capacity,
                    "this slot layout holds at most " + std::to_string(Layout::max_capacity) +
                        " rows, asked for " + std::to_string(capacity));
    JOINERY_EXPECTS(mr_->space() == memory_space::device,
                    "hash table slots must be in device memory");
    auto const bytes = static_cast<std::size_t>(num_slots_) * sizeof(slot_type);
    slots_ = buffer(bytes, mr_, stream);
    JOINERY_CUDA_TRY(cudaMemsetAsync(slots_.data(), 0xff, bytes, cuda_stream_of(stream)));
  }

  [[nodiscard]] ref_type ref() const noexcept {
    return ref_type(static_cast<slot_type*>(const_cast<void*>(slots_.data())), num_slots_);
  }
  [[nodiscard]] size_type size() const noexcept { return size_; }
  [[nodiscard]] size_type capacity() const noexcept { return capacity_; }
  [[nodiscard]] size_type num_slots() const noexcept { return num_slots_; }
  [[nodiscard]] memory_resource* resource() const noexcept { return mr_; }

  /// Inserts n device keys with row ids size() .. size() + n - 1.
  void insert(Key const* keys, size_type n, stream_ref stream) {
    JOINERY_EXPECTS(n >= 0 && n <= capacity_ - size_,
                    "hash table insert of " + std::to_string(n) + " rows exceeds the capacity (" +
                        std::to_string(capacity_) + " rows, " + std::to_string(size_) +
                        " inserted)");
    if (n == 0) { return; }
    hash_table_insert_kernel<Policy><<<grid(n), Policy::threads_per_block, 0,
                                       cuda_stream_of(stream)>>>(ref(), keys, n, size_);
    JOINERY_CHECK_LAUNCH();
    size_ += n;
  }

  /// Total (build row, probe row) matches of n probe keys. Synchronizes the stream.
  [[nodiscard]] size_type count(Key const* probe, size_type n, stream_ref stream) const {
    if (n == 0 || size_ == 0) { return 0; }
    auto const s = cuda_stream_of(stream);
    buffer total(sizeof(unsigned long long), mr_, stream);
    auto* d_total = static_cast<unsigned long long*>(total.data());
    JOINERY_CUDA_TRY(cudaMemsetAsync(d_total, 0, sizeof(unsigned long long), s));
    hash_table_count_kernel<Policy><<<grid(n), Policy::threads_per_block, 0, s>>>(ref(), probe,
                                                                                 n, d_total);
    JOINERY_CHECK_LAUNCH();
    unsigned long long h_total = 0;
    JOINERY_CUDA_TRY(cudaMemcpyAsync(&h_total, d_total, sizeof(h_total), cudaMemcpyDeviceToHost, s));
    JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
    return static_cast<size_type>(h_total);
  }

  /// out[i] = 1 when probe[i] is in the table (device array of n bytes).
  void contains(Key const* probe, size_type n, std::uint8_t* out, stream_ref stream) const {
    if (n == 0) { return; }
    hash_table_contains_kernel<Policy><<<grid(n), Policy::threads_per_block, 0,
                                         cuda_stream_of(stream)>>>(ref(), probe, n, out);
    JOINERY_CHECK_LAUNCH();
  }

  /// out[i] = row of the first match of probe[i] in probe order, or -1.
  void find(Key const* probe, size_type n, size_type* out, stream_ref stream) const {
    if (n == 0) { return; }
    hash_table_find_kernel<Policy><<<grid(n), Policy::threads_per_block, 0,
                                     cuda_stream_of(stream)>>>(ref(), probe, n, out);
    JOINERY_CHECK_LAUNCH();
  }

  /// Every match as (build row, probe row): count per key, exclusive scan, write. Results and
  /// temporaries from `mr`; synchronizes once (the host sizes the result).
  [[nodiscard]] row_id_pairs retrieve_all(Key const* probe, size_type n, stream_ref stream,
                                          memory_resource* mr) const {
    mr = device_or_default(mr);
    if (n == 0 || size_ == 0) {
      return {column(type_id::int64, 0, mr, stream), column(type_id::int64, 0, mr, stream)};
    }
    auto const s = cuda_stream_of(stream);
    // Phase 1: counts[i] for i < n, counts[n] = 0, so that offsets[n] is the total.
    buffer offsets_buf(static_cast<std::size_t>(n + 1) * sizeof(size_type), mr, stream);
    auto* offsets = static_cast<size_type*>(offsets_buf.data());
    hash_table_count_each_kernel<Policy><<<grid(n), Policy::threads_per_block, 0, s>>>(
        ref(), probe, n, offsets);
    JOINERY_CHECK_LAUNCH();
    JOINERY_CUDA_TRY(cudaMemsetAsync(offsets + n, 0, sizeof(size_type), s));
    // Phase 2: in-place exclusive scan (CUB).
    std::size_t temp_bytes = 0;
    JOINERY_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, offsets, n + 1, s));
    {
      buffer temp(temp_bytes, mr, stream);
      JOINERY_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, offsets, n + 1, s));
    }
    size_type total = 0;
    JOINERY_CUDA_TRY(cudaMemcpyAsync(&total, offsets + n, sizeof(total), cudaMemcpyDeviceToHost, s));
    JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
    JOINERY_EXPECTS(total >= 0, "hash table retrieve: match count overflowed");
    row_id_pairs out;
    try {
      out.build_rows = column(type_id::int64, total, mr, stream);
      out.probe_rows = column(type_id::int64, total, mr, stream);
    } catch (out_of_memory const& e) {
      throw out_of_memory("hash table retrieve: " + std::to_string(total) +
                          " matches need " + std::to_string(2 * total * sizeof(size_type)) +
                          " bytes of output: " + e.what());
    }
    if (total == 0) { return out; }
    // Phase 3: write.
    hash_table_retrieve_kernel<Policy><<<grid(n), Policy::threads_per_block, 0, s>>>(
        ref(), probe, n, offsets, out.build_rows.template data_as<size_type>(),
        out.probe_rows.template data_as<size_type>());
    JOINERY_CHECK_LAUNCH();
    return out;
  }

  static cudaStream_t cuda_stream_of(stream_ref stream) noexcept {
    return static_cast<cudaStream_t>(stream.handle());
  }

 private:
  static unsigned grid(size_type n) {
    return capped_grid_size(ceil_div(n, Policy::tile_items), Policy::max_blocks_per_sm);
  }

  size_type capacity_ = 0;
  size_type num_slots_ = 0;
  size_type size_ = 0;
  memory_resource* mr_ = nullptr;
  buffer slots_;
};

}  // namespace joinery::detail::gpu
