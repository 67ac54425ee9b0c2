#pragma once
// Merge path partitioning of two sorted key columns, and sorted search (vectorised lower_bound /
// upper_bound of many probe keys in one sorted column).
//
// Host-only header (no CUDA types). The GPU functions work on device columns, order their work on
// `stream` and return without waiting; results come from `mr` (null: joinery::device_resource()),
// which must be a device resource. Without the GPU backend (built with -DJOINERY_CUDA=OFF) they
// throw joinery::logic_error. The host templates below work everywhere.
//
// Merge order (Green, McColl & Bader; Rui & Tu 2017, section 3.3.1): the stable merge of A and B
// takes A's element first on ties. Diagonal d (0 <= d <= |A| + |B|) of the merge matrix is split
// at (a, b), a + b = d, where a is the number of A's elements among the first d merged ones. The
// split satisfies the merge-path invariant
//     a == 0 || b == |B| || A[a - 1] <= B[b]      and      b == 0 || a == |A| || B[b - 1] < A[a],
// so merging A[a_i, a_{i+1}) with B[b_i, b_{i+1}) for consecutive splits and concatenating the
// pieces gives std::merge(A, B) exactly.
#include <joinery/column.hpp>
#include <joinery/memory.hpp>
#include <joinery/types.hpp>

#include <functional>
#include <span>
#include <vector>

namespace joinery {

/// The i-th of `parts` equal diagonals over `total` merged elements: floor(i * total / parts),
/// computed without overflowing for any total, parts < 2^31 and 0 <= i <= parts.
constexpr size_type merge_path_diagonal(size_type total, size_type parts, size_type i) noexcept {
  return (total / parts) * i + (total % parts) * i / parts;
}

/// The split a of diagonal `diagonal` (b = diagonal - a) by binary search on the cross-diagonal:
/// O(log min(|A|, |B|)). Both arrays ordered by `comp` (a strict weak order: comp(x, y) when x
/// goes first); 0 <= diagonal <= na + nb. Host and device (the GPU kernels call this same
/// function; `comp` must then be callable on the device).
template <class K, class Compare>
constexpr size_type merge_path_search(K const* a, size_type na, K const* b, size_type nb,
                                      size_type diagonal, Compare comp) noexcept {
  size_type lo = diagonal > nb ? diagonal - nb : 0;
  size_type hi = diagonal < na ? diagonal : na;
  while (lo < hi) {
    size_type const mid = lo + (hi - lo) / 2;
    // A[mid] precedes B[diagonal - 1 - mid] in the merge (ties: A first): at least mid + 1 of
    // the first `diagonal` merged elements come from A.
    if (!comp(b[diagonal - 1 - mid], a[mid])) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// merge_path_search over ascending arrays (operator<).
template <class K>
constexpr size_type merge_path_search(K const* a, size_type na, K const* b, size_type nb,
                                      size_type diagonal) noexcept {
  return merge_path_search(a, na, b, nb, diagonal, std::less<>{});
}

/// Host merge path partitioning of host-resident sorted arrays into `parts` >= 1 equal diagonals:
/// parts + 1 values a_i (a_0 = 0, a_parts = |A|); b_i = merge_path_diagonal(|A| + |B|, parts, i)
/// - a_i.
template <class K>
std::vector<size_type> merge_path_partition(std::span<K const> a, std::span<K const> b,
                                            size_type parts) {
  JOINERY_EXPECTS(parts >= 1, "merge_path_partition: parts must be at least 1, got " +
                                std::to_string(parts));
  auto const na = static_cast<size_type>(a.size());
  auto const nb = static_cast<size_type>(b.size());
  std::vector<size_type> splits(static_cast<std::size_t>(parts) + 1);
  for (size_type i = 0; i <= parts; ++i) {
    splits[static_cast<std::size_t>(i)] =
      merge_path_search(a.data(), na, b.data(), nb, merge_path_diagonal(na + nb, parts, i));
  }
  return splits;
}

/// Splits of the GPU merge path partitioning: int64 device columns of parts + 1 entries each.
/// Diagonal i = merge_path_diagonal(|A| + |B|, parts, i) is split at (a[i], b[i]).
struct merge_path_splits {
  column a;
  column b;
  size_type parts = 0;
};

/// GPU merge path partitioning of two ascending device key columns of one key type (no nulls)
/// into `parts` equal diagonals, 1 <= parts < 2^31: one thread per diagonal, binary search on
/// the cross-diagonal. Inputs that are not sorted give unspecified (but in-range) splits.
merge_path_splits merge_path_partition(column_view const& a, column_view const& b,
                                       size_type parts, stream_ref stream = default_stream(),
                                       memory_resource_ref mr = nullptr);

/// Sorted search: out[i] = the first position p in `sorted` with !(sorted[p] < probes[i])
/// (std::lower_bound), as an int64 device column of probes.size() rows. `sorted` (ascending)
/// and `probes` (any order): device columns of one key type, no nulls.
column lower_bound(column_view const& sorted, column_view const& probes,
                   stream_ref stream = default_stream(), memory_resource_ref mr = nullptr);

/// Sorted search: out[i] = the first position p in `sorted` with probes[i] < sorted[p]
/// (std::upper_bound). Same arguments as lower_bound.
column upper_bound(column_view const& sorted, column_view const& probes,
                   stream_ref stream = default_stream(), memory_resource_ref mr = nullptr);

}  // namespace joinery
