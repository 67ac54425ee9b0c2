#pragma once
// Internal: host-callable dispatch layer of the sort and merge-path primitives (defined in
// sort.cu, merge_sort.cu and merge_path.cu, explicitly instantiated there over the four key
// types and the payload widths). Arguments are already checked by the public functions (sort.cpp,
// merge_path.cpp). Every pointer is device memory; work is ordered on `stream`, temporaries come
// from `mr`. K: std::int32_t, std::int64_t, std::uint32_t or std::uint64_t (sorted by value).
#include <joinery/memory.hpp>
#include <joinery/types.hpp>

#include <cstdint>

namespace joinery::detail::gpu {

/// keys_out = keys_in ascending (CUB DeviceRadixSort::SortKeys). Only the key bits
/// [begin_bit, end_bit) are compared (0 <= begin_bit < end_bit <= 8 * sizeof(K)), one radix pass
/// per digit of them: keys known to be below 2^b sort in fewer passes with end_bit = b.
template <class K>
void radix_sort_keys(K const* keys_in, K* keys_out, size_type n, stream_ref stream,
                     memory_resource* mr, int begin_bit = 0,
                     int end_bit = static_cast<int>(8 * sizeof(K)));

/// (keys, values) sorted by key, stably (CUB DeviceRadixSort::SortPairs), comparing the key bits
/// [begin_bit, end_bit) as radix_sort_keys. V: std::uint32_t or std::uint64_t (4- and 8-byte
/// payloads moved bit for bit).
template <class K, class V>
void radix_sort_pairs(K const* keys_in, K* keys_out, V const* values_in, V* values_out,
                      size_type n, stream_ref stream, memory_resource* mr, int begin_bit = 0,
                      int end_bit = static_cast<int>(8 * sizeof(K)));

/// keys_out = keys ascending and row_ids_out[i] = the input row of keys_out[i] (stable).
template <class K>
void radix_sort_row_ids(K const* keys_in, K* keys_out, std::int64_t* row_ids_out, size_type n,
                        stream_ref stream, memory_resource* mr);

/// Comparators of merge_sort_pairs with explicit instantiations (merge_sort.cu). constexpr, so
/// device code may call them (the library builds with --expt-relaxed-constexpr).
struct sort_less {
  template <class T>
  constexpr bool operator()(T const& x, T const& y) const noexcept { return x < y; }
};
struct sort_greater {
  template <class T>
  constexpr bool operator()(T const& x, T const& y) const noexcept { return y < x; }
};

/// The row ids merge_sort_pairs carries through its passes: 32-bit while n < 2^32 (less traffic
/// per pass), else 64-bit. `wide` forces 64-bit ids at any n (the tests' way into that path).
enum class merge_sort_ids : std::uint8_t { automatic, wide };

/// Stable merge sort by `comp` (Rui & Tu 2017, 3.3.1): keys_out = keys_in ordered by comp, equal
/// keys in input order, and row_ids_out[i] = the input row of keys_out[i]. keys_in must not
/// alias keys_out. Temporaries: n keys, n row ids and one split per tile. The template is
/// defined in detail/merge_sort.cuh: merge_sort.cu instantiates it for the four key types with
/// sort_less and sort_greater; a .cu needing another comparator instantiates it there.
template <class K, class Compare>
void merge_sort_pairs(K const* keys_in, K* keys_out, std::int64_t* row_ids_out, size_type n,
                      Compare comp, merge_sort_ids ids, stream_ref stream, memory_resource* mr);

/// a_splits[i] = merge_path_search(a, na, b, nb, merge_path_diagonal(na + nb, parts, i)) and
/// b_splits[i] = that diagonal - a_splits[i], for 0 <= i <= parts.
template <class K>
void merge_path_partition(K const* a, size_type na, K const* b, size_type nb, size_type parts,
                          std::int64_t* a_splits, std::int64_t* b_splits, stream_ref stream);

/// out[i] = lower (upper == false) or upper bound of probes[i] in sorted[0, n).
template <class K>
void sorted_search(K const* sorted, size_type n, K const* probes, size_type m, bool upper,
                   std::int64_t* out, stream_ref stream);

}  // namespace joinery::detail::gpu
