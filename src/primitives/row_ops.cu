// The general key path's row steps on the GPU: elementwise kernels and CUB selections over
// device columns, ordered on one stream.
#include "core/cuda_try.hpp"
#include "primitives/row_ops.hpp"

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <cstdint>

namespace joinery::detail::keys {

namespace {

constexpr int block_threads = 256;

unsigned grid_for(size_type n) {
  auto const blocks = (n + block_threads - 1) / block_threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 * 4 ? 65535 * 4 : blocks));
}

/// Blocks of the reductions: enough to fill the GPU, few enough that their one atomic each on
/// a single word does not queue up (one block per 256 rows of 2^26 rows made them 8x slower).
unsigned reduce_grid_for(size_type n) {
  auto const g = grid_for(n);
  return g < 1024 ? g : 1024;
}

/// f(i) for every i < n, grid-stride.
template <class F>
__global__ void rows_kernel(size_type n, F f) {
  auto const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (auto i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    f(i);
  }
}

struct range_accumulator {
  unsigned long long min;
  unsigned long long max;
  unsigned long long has_null;
};

__global__ void range_kernel(key_column c, size_type n, bool nans_equal, range_accumulator* out) {
  unsigned long long lo = ~0ULL;
  unsigned long long hi = 0;
  unsigned long long null = 0;
  auto const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (auto i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (!valid_at(c, i)) {
      null = 1;
      continue;
    }
    if (!nans_equal && is_nan_at(c, i)) { continue; }
    auto const v = ordered_value(c, i);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  using reduce = cub::BlockReduce<unsigned long long, block_threads>;
  __shared__ typename reduce::TempStorage temp;
  auto const block_lo = reduce(temp).Reduce(lo, [](auto a, auto b) { return a < b ? a : b; });
  __syncthreads();
  auto const block_hi = reduce(temp).Reduce(hi, [](auto a, auto b) { return a > b ? a : b; });
  __syncthreads();
  auto const block_null = reduce(temp).Reduce(null, [](auto a, auto b) { return a | b; });
  if (threadIdx.x == 0) {
    atomicMin(&out->min, block_lo);
    atomicMax(&out->max, block_hi);
    if (block_null != 0) { atomicOr(&out->has_null, 1ULL); }
  }
}

__global__ void coalesced_sum_kernel(key_column a, std::int64_t const* ids_a, key_column b,
                                     std::int64_t const* ids_b, size_type n,
                                     unsigned long long* sum) {
  unsigned long long local = 0;
  auto const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (auto i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    local += coalesced_bits(a, ids_a, b, ids_b, i);
  }
  using reduce = cub::BlockReduce<unsigned long long, block_threads>;
  __shared__ typename reduce::TempStorage temp;
  auto const block_sum = reduce(temp).Sum(local);
  if (threadIdx.x == 0) { atomicAdd(sum, block_sum); }
}

/// The ids of the rows whose flag equals a value.
struct flag_equals {
  std::uint8_t const* flags;
  std::uint8_t value;
  __device__ bool operator()(std::int64_t i) const { return flags[i] == value; }
};

template <class T>
__global__ void gather_kernel(T const* a, std::uint8_t const* a_mask, std::int64_t const* ids_a,
                              T const* b, std::uint8_t const* b_mask, std::int64_t const* ids_b,
                              size_type n, T* out, std::uint8_t* valid) {
  auto const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  auto const bit = [](std::uint8_t const* m, std::int64_t r) {
    return m == nullptr || ((m[r >> 3] >> (r & 7)) & 1U) != 0;
  };
  for (auto i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    auto const ra = ids_a[i];
    std::uint8_t ok = 1;
    if (ra >= 0 && bit(a_mask, ra)) {
      out[i] = a[ra];
    } else if (ids_b != nullptr && ids_b[i] >= 0 && bit(b_mask, ids_b[i])) {
      out[i] = b[ids_b[i]];
    } else {
      out[i] = T{};
      ok = 0;
    }
    valid[i] = ok;
  }
}

/// Packs per-row validity bytes into an Arrow bitmap and counts the NULLs.
__global__ void pack_mask_kernel(std::uint8_t const* valid, size_type n, std::uint8_t* mask,
                                 unsigned long long* nulls) {
  auto const bytes = (n + 7) / 8;
  auto const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (auto byte = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; byte < bytes;
       byte += stride) {
    unsigned m = 0;
    for (int k = 0; k < 8 && byte * 8 + k < n; ++k) { m |= static_cast<unsigned>(valid[byte * 8 + k]) << k; }
    mask[byte] = static_cast<std::uint8_t>(m);
    auto const rows = n - byte * 8 < 8 ? n - byte * 8 : 8;
    auto const missing = static_cast<unsigned long long>(rows - __popc(m));
    if (missing != 0) { atomicAdd(nulls, missing); }
  }
}

class device_row_ops final : public row_ops {
 public:
  explicit device_row_ops(stream_ref stream)
      : stream_(stream), s_(static_cast<cudaStream_t>(stream.handle())) {}

  [[nodiscard]] memory_space space() const override { return memory_space::device; }

  column_range scan_range(key_column const& c, size_type rows, bool nans_equal) override {
    buffer acc(sizeof(range_accumulator), device_resource(), stream_);
    range_accumulator init{~0ULL, 0, 0};
    JOINERY_CUDA_TRY(
      cudaMemcpyAsync(acc.data(), &init, sizeof(init), cudaMemcpyHostToDevice, s_));
    if (rows > 0) {
      range_kernel<<<reduce_grid_for(rows), block_threads, 0, s_>>>(
        c, rows, nans_equal, static_cast<range_accumulator*>(acc.data()));
      JOINERY_CHECK_LAUNCH();
    }
    range_accumulator h{};
    JOINERY_CUDA_TRY(cudaMemcpyAsync(&h, acc.data(), sizeof(h), cudaMemcpyDeviceToHost, s_));
    JOINERY_CUDA_TRY(cudaStreamSynchronize(s_));
    return {h.min, h.max, h.has_null != 0};
  }

  encoded_keys encode(key_layout const& k, size_type rows, type_id key_type) override {
    encoded_keys out;
    bool const may_skip = may_hold_unmatchable_rows(k);
    if (may_skip) {
      out.matchable = make(type_id::uint8, rows);
      auto* flag = out.matchable.data_as<std::uint8_t>();
      launch(rows, [=] __device__(size_type i) { flag[i] = matchable(k, i) ? 1 : 0; });
      auto ids = select(out.matchable, 1);
      if (ids.size() < rows) {
        out.all_rows = false;
        out.row_ids = std::move(ids);
      } else {
        out.matchable = column();
      }
    }
    auto const n = out.all_rows ? rows : out.row_ids.size();
    out.keys = make(key_type, n);
    auto const* ids = out.all_rows ? nullptr : out.row_ids.view().data_as<std::int64_t>();
    if (key_type == type_id::uint64) {
      auto* d = out.keys.data_as<std::uint64_t>();
      launch(n, [=] __device__(size_type i) { d[i] = encode_key(k, ids ? ids[i] : i); });
    } else {
      auto* d = out.keys.data_as<std::uint32_t>();
      launch(n, [=] __device__(size_type i) {
        d[i] = static_cast<std::uint32_t>(encode_key(k, ids ? ids[i] : i));
      });
    }
    return out;
  }

  column remap(column_view const& ids, column_view const& subset) override {
    auto const n = ids.size();
    auto out = make(type_id::int64, n);
    auto const* in = ids.data_as<std::int64_t>();
    auto const* s = subset.data_as<std::int64_t>();
    auto* o = out.data_as<std::int64_t>();
    launch(n, [=] __device__(size_type i) { o[i] = in[i] < 0 ? -1 : s[in[i]]; });
    return out;
  }

  void keep_equal_pairs(key_layout const& build, key_layout const& probe, column& build_rows,
                        column& probe_rows) override {
    auto const n = build_rows.size();
    auto flags = make(type_id::uint8, n);
    auto* f = flags.data_as<std::uint8_t>();
    auto const* b = build_rows.view().data_as<std::int64_t>();
    auto const* p = probe_rows.view().data_as<std::int64_t>();
    launch(n, [=] __device__(size_type i) {
      f[i] = keys_equal(build, b[i], probe, p[i]) ? 1 : 0;
    });
    auto keep = select(flags, 1);
    if (keep.size() == n) { return; }
    build_rows = remap(keep, build_rows);
    probe_rows = remap(keep, probe_rows);
  }

  column flags_of(column_view const& ids, size_type rows) override {
    auto out = make(type_id::uint8, rows);
    auto* f = out.data_as<std::uint8_t>();
    if (rows > 0) { JOINERY_CUDA_TRY(cudaMemsetAsync(f, 0, static_cast<std::size_t>(rows), s_)); }
    auto const* in = ids.data_as<std::int64_t>();
    launch(ids.size(), [=] __device__(size_type i) {
      if (in[i] >= 0) { f[in[i]] = 1; }
    });
    return out;
  }

  column select(column_view const& flags, std::uint8_t value) override {
    auto const n = flags.size();
    auto out = make(type_id::int64, n);
    buffer count(sizeof(std::int64_t), device_resource(), stream_);
    auto* count_ptr = static_cast<std::int64_t*>(count.data());
    flag_equals pred{flags.data_as<std::uint8_t>(), value};
    thrust::counting_iterator<std::int64_t> first(0);
    std::size_t temp_bytes = 0;
    JOINERY_CUDA_TRY(cub::DeviceSelect::If(nullptr, temp_bytes, first,
                                           out.data_as<std::int64_t>(), count_ptr, n, pred, s_));
    buffer temp(temp_bytes, device_resource(), stream_);
    JOINERY_CUDA_TRY(cub::DeviceSelect::If(temp.data(), temp_bytes, first,
                                           out.data_as<std::int64_t>(), count_ptr, n, pred, s_));
    std::int64_t selected = 0;
    JOINERY_CUDA_TRY(
      cudaMemcpyAsync(&selected, count_ptr, sizeof(selected), cudaMemcpyDeviceToHost, s_));
    JOINERY_CUDA_TRY(cudaStreamSynchronize(s_));
    if (selected == n) { return out; }
    auto exact = make(type_id::int64, selected);
    copy_ids(exact.data_as<std::int64_t>(), out.view().data_as<std::int64_t>(), selected);
    return exact;
  }

  column concat(column_view const& a, column_view const& b) override {
    auto out = make(type_id::int64, a.size() + b.size());
    auto* o = out.data_as<std::int64_t>();
    copy_ids(o, a.data_as<std::int64_t>(), a.size());
    copy_ids(o + a.size(), b.data_as<std::int64_t>(), b.size());
    return out;
  }

  column constant(size_type rows, std::int64_t value) override {
    auto out = make(type_id::int64, rows);
    auto* o = out.data_as<std::int64_t>();
    launch(rows, [=] __device__(size_type i) { o[i] = value; });
    return out;
  }

  column gather(column_view const& a, column_view const& ids_a, column_view const& b,
                column_view const& ids_b) override {
    auto const n = ids_a.size();
    bool const two = ids_b.size() == n && !b.empty();
    auto out = make(a.type(), n);
    buffer valid(static_cast<std::size_t>(n > 0 ? n : 1), device_resource(), stream_);
    auto* v = static_cast<std::uint8_t*>(valid.data());
    auto const mask_of = [](column_view const& c) {
      return c.null_count() > 0 ? c.null_mask() : nullptr;
    };
    auto const width = size_of(a.type());
    auto const run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (n == 0) { return; }
      gather_kernel<T><<<grid_for(n), block_threads, 0, s_>>>(
        static_cast<T const*>(a.data()), mask_of(a), ids_a.data_as<std::int64_t>(),
        two ? static_cast<T const*>(b.data()) : nullptr, two ? mask_of(b) : nullptr,
        two ? ids_b.data_as<std::int64_t>() : nullptr, n, static_cast<T*>(out.data()), v);
      JOINERY_CHECK_LAUNCH();
    };
    with_unsigned_of_width(width, run);
    if (n == 0) { return out; }
    auto const mask_bytes = null_mask_bytes(n);
    buffer mask(mask_bytes, device_resource(), stream_);
    buffer count(sizeof(unsigned long long), device_resource(), stream_);
    auto* null_count = static_cast<unsigned long long*>(count.data());
    JOINERY_CUDA_TRY(cudaMemsetAsync(null_count, 0, sizeof(unsigned long long), s_));
    pack_mask_kernel<<<grid_for(static_cast<size_type>(mask_bytes)), block_threads, 0, s_>>>(
      v, n, static_cast<std::uint8_t*>(mask.data()), null_count);
    JOINERY_CHECK_LAUNCH();
    unsigned long long h = 0;
    JOINERY_CUDA_TRY(cudaMemcpyAsync(&h, null_count, sizeof(h), cudaMemcpyDeviceToHost, s_));
    JOINERY_CUDA_TRY(cudaStreamSynchronize(s_));
    if (h > 0) {
      JOINERY_CUDA_TRY(cudaMemcpyAsync(out.make_nullable(), mask.data(), mask_bytes,
                                       cudaMemcpyDeviceToDevice, s_));
      out.set_null_count(static_cast<size_type>(h));
    }
    return out;
  }

  std::uint64_t gathered_checksum(column_view const& a, column_view const& ids_a,
                                  column_view const& b, column_view const& ids_b) override {
    auto const n = ids_a.size();
    if (n == 0) { return 0; }
    bool const two = ids_b.size() == n && !b.empty();
    buffer sum(sizeof(unsigned long long), device_resource(), stream_);
    auto* d = static_cast<unsigned long long*>(sum.data());
    JOINERY_CUDA_TRY(cudaMemsetAsync(d, 0, sizeof(unsigned long long), s_));
    coalesced_sum_kernel<<<reduce_grid_for(n), block_threads, 0, s_>>>(
      key_column_of(a), ids_a.data_as<std::int64_t>(), two ? key_column_of(b) : key_column{},
      two ? ids_b.data_as<std::int64_t>() : nullptr, n, d);
    JOINERY_CHECK_LAUNCH();
    unsigned long long h = 0;
    JOINERY_CUDA_TRY(cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, s_));
    JOINERY_CUDA_TRY(cudaStreamSynchronize(s_));
    return h;
  }

  column fill_nulls(column_view const& c, type_id out_type, std::uint64_t fill_bits) override {
    auto const n = c.size();
    auto out = make(out_type, n);
    auto const k = key_column_of(c);
    switch (size_of(out_type)) {
      case 1: fill_typed(k, n, fill_bits, static_cast<std::uint8_t*>(out.data())); break;
      case 2: fill_typed(k, n, fill_bits, static_cast<std::uint16_t*>(out.data())); break;
      case 4: fill_typed(k, n, fill_bits, static_cast<std::uint32_t*>(out.data())); break;
      default: fill_typed(k, n, fill_bits, static_cast<std::uint64_t*>(out.data())); break;
    }
    return out;
  }

  column validity_as_int32(column_view const& c) override {
    auto const n = c.size();
    auto out = make(type_id::int32, n);
    auto const k = key_column_of(c);
    auto* d = out.data_as<std::int32_t>();
    launch(n, [=] __device__(size_type i) { d[i] = valid_at(k, i) ? 1 : 0; });
    return out;
  }

  column dense_codes(key_column const& c, size_type rows, column& dictionary) override {
    // The valid rows' ordered values, sorted, made unique: the dictionary.
    auto flags = make(type_id::uint8, rows);
    auto values = make(type_id::uint64, rows);
    auto* f = flags.data_as<std::uint8_t>();
    auto* v = values.data_as<std::uint64_t>();
    launch(rows, [=] __device__(size_type i) {
      bool const ok = valid_at(c, i);
      f[i] = ok ? 1 : 0;
      v[i] = ok ? ordered_value(c, i) : 0;
    });
    auto const valid_ids = select(flags, 1);
    auto const n = valid_ids.size();
    auto keys = make(type_id::uint64, n);
    auto* k = keys.data_as<std::uint64_t>();
    auto const* ids = valid_ids.view().data_as<std::int64_t>();
    launch(n, [=] __device__(size_type i) { k[i] = v[ids[i]]; });
    auto sorted = make(type_id::uint64, n);
    std::size_t temp_bytes = 0;
    JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, k,
                                                    sorted.data_as<std::uint64_t>(), n, 0, 64, s_));
    {
      buffer temp(temp_bytes, device_resource(), stream_);
      JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortKeys(temp.data(), temp_bytes, k,
                                                      sorted.data_as<std::uint64_t>(), n, 0, 64,
                                                      s_));
    }
    auto unique = make(type_id::uint64, n);
    buffer count(sizeof(std::int64_t), device_resource(), stream_);
    auto* count_ptr = static_cast<std::int64_t*>(count.data());
    temp_bytes = 0;
    JOINERY_CUDA_TRY(cub::DeviceSelect::Unique(nullptr, temp_bytes,
                                               sorted.data_as<std::uint64_t>(),
                                               unique.data_as<std::uint64_t>(), count_ptr, n, s_));
    {
      buffer temp(temp_bytes, device_resource(), stream_);
      JOINERY_CUDA_TRY(cub::DeviceSelect::Unique(temp.data(), temp_bytes,
                                                 sorted.data_as<std::uint64_t>(),
                                                 unique.data_as<std::uint64_t>(), count_ptr, n,
                                                 s_));
    }
    std::int64_t distinct = 0;
    JOINERY_CUDA_TRY(
      cudaMemcpyAsync(&distinct, count_ptr, sizeof(distinct), cudaMemcpyDeviceToHost, s_));
    JOINERY_CUDA_TRY(cudaStreamSynchronize(s_));
    dictionary = make(type_id::uint64, distinct);
    copy_ids(reinterpret_cast<std::int64_t*>(dictionary.data()),
             reinterpret_cast<std::int64_t const*>(unique.view().data()), distinct);
    // Each row's rank: a binary search of the dictionary.
    bool const wide = distinct >= (std::int64_t{1} << 32);
    auto out = make(wide ? type_id::uint64 : type_id::uint32, rows);
    auto const* dict = unique.view().data_as<std::uint64_t>();
    if (wide) {
      rank_typed(f, v, dict, distinct, rows, out.data_as<std::uint64_t>());
    } else {
      rank_typed(f, v, dict, distinct, rows, out.data_as<std::uint32_t>());
    }
    synchronize();  // the temporaries above are freed on return
    return out;
  }

  column negate(column_view const& keys) override {
    auto const n = keys.size();
    auto out = make(type_id::uint64, n);
    auto* d = out.data_as<std::uint64_t>();
    if (keys.type() == type_id::uint64) {
      auto const* k = keys.data_as<std::uint64_t>();
      launch(n, [=] __device__(size_type i) { d[i] = 0ULL - k[i]; });
    } else {
      auto const* k = keys.data_as<std::uint32_t>();
      launch(n, [=] __device__(size_type i) { d[i] = 0ULL - static_cast<std::uint64_t>(k[i]); });
    }
    return out;
  }

  column narrow(column_view const& ids) override {
    auto out = make(type_id::int32, ids.size());
    auto const* in = ids.data_as<std::int64_t>();
    auto* o = out.data_as<std::int32_t>();
    launch(ids.size(), [=] __device__(size_type i) { o[i] = static_cast<std::int32_t>(in[i]); });
    return out;
  }

  void synchronize() override { JOINERY_CUDA_TRY(cudaStreamSynchronize(s_)); }

  // Public: an extended __device__ lambda's enclosing function may not be private.
  template <class U>
  void fill_typed(key_column k, size_type n, std::uint64_t fill_bits, U* d) {
    launch(n, [=] __device__(size_type i) {
      d[i] = static_cast<U>(valid_at(k, i) ? load_bits(k, i) : fill_bits);
    });
  }

  /// d[i]: the index of v[i] in the sorted `dict` (a binary search), or `distinct` where f[i]
  /// is 0 (NULL).
  template <class U>
  void rank_typed(std::uint8_t const* f, std::uint64_t const* v, std::uint64_t const* dict,
                  size_type distinct, size_type rows, U* d) {
    launch(rows, [=] __device__(size_type i) {
      if (f[i] == 0) {
        d[i] = static_cast<U>(distinct);
        return;
      }
      auto const x = v[i];
      size_type lo = 0;
      size_type hi = distinct;
      while (lo < hi) {
        auto const mid = lo + (hi - lo) / 2;
        if (dict[mid] < x) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      d[i] = static_cast<U>(lo);
    });
  }

 private:
  column make(type_id t, size_type n) { return column(t, n, device_resource(), stream_); }

  template <class F>
  void launch(size_type n, F f) {
    if (n == 0) { return; }
    rows_kernel<<<grid_for(n), block_threads, 0, s_>>>(n, f);
    JOINERY_CHECK_LAUNCH();
  }

  void copy_ids(std::int64_t* dst, std::int64_t const* src, size_type n) {
    if (n == 0) { return; }
    JOINERY_CUDA_TRY(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(n) * sizeof(std::int64_t),
                                     cudaMemcpyDeviceToDevice, s_));
  }

  stream_ref stream_;
  cudaStream_t s_;
};

}  // namespace

std::unique_ptr<row_ops> make_device_row_ops(stream_ref stream) {
  return std::make_unique<device_row_ops>(stream);
}

}  // namespace joinery::detail::keys
