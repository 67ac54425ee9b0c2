// Public sort primitives: argument checks, NVTX range, then the GPU dispatch layer (sort.cu,
// merge_sort.cu) and, for several payloads or the merge sort, the project's gather by the sorted
// row ids. Built without CUDA, every entry point refuses.
#include <joinery/primitives/gather.hpp>
#include <joinery/primitives/sort.hpp>

#if defined(JOINERY_HAS_CUDA)
#include "primitives/sort_dispatch.hpp"
#endif

#include <cstdint>
#include "primitives/checks.hpp"

#include <string>
#include <utility>

namespace joinery {

namespace {

using detail::expect_cuda;
using detail::expect_device;
using detail::expect_keys;
using detail::expect_no_nulls;
using detail::result_resource;

/// Checks the arguments of sort_pairs and merge_sort_pairs (a device key column and device
/// payloads of 1/2/4/8-byte types, as long as the keys, no nulls anywhere) and returns the
/// resource the results come from.
memory_resource* checked_sort_resource(column_view const& keys,
                                       std::vector<column_view> const& payloads,
                                       memory_resource_ref mr, char const* fn) {
  expect_cuda(fn);
  expect_keys(keys, fn);
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    auto const& p = payloads[i];
    std::string const what = "payload " + std::to_string(i);
    auto const w = size_of(p.type());
    JOINERY_EXPECTS(w == 1 || w == 2 || w == 4 || w == 8,
                    std::string(fn) + ": the " + what + " column is " +
                      std::string(to_string(p.type())) + "; payloads must be 1/2/4/8-byte types");
    JOINERY_EXPECTS(p.size() == keys.size(),
                    std::string(fn) + ": the " + what + " column has " +
                      std::to_string(p.size()) + " rows but the keys have " +
                      std::to_string(keys.size()));
    expect_no_nulls(p, fn, what);
  }
  expect_device(keys, fn, "key");
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    expect_device(payloads[i], fn, "payload " + std::to_string(i));
  }
  return result_resource(mr, fn);
}

/// The result's columns so far: the sorted keys' column, not yet written.
std::vector<column> sorted_keys_column(column_view const& keys, stream_ref stream,
                                       memory_resource* res) {
  std::vector<column> out;
  out.emplace_back(keys.type(), keys.size(), res, stream);
  return out;
}

#if defined(JOINERY_HAS_CUDA)
/// Appends every payload gathered by the sorted row ids to `out`.
void gather_payloads(std::vector<column>& out, std::vector<column_view> const& payloads,
                     column const& ids, stream_ref stream, memory_resource* res) {
  for (auto const& p : payloads) {
    out.push_back(gather(p, ids.view(), bounds_check::unchecked, stream, res));
  }
}
#endif

}  // namespace

column sort_keys(column_view const& keys, stream_ref stream, memory_resource_ref mr) {
  constexpr char const* fn = "sort_keys";
  expect_cuda(fn);
  expect_keys(keys, fn);
  expect_device(keys, fn, "key");
  auto* res = result_resource(mr, fn);
  scoped_range range("joinery::sort_keys");
  column out(keys.type(), keys.size(), res, stream);
#if defined(JOINERY_HAS_CUDA)
  dispatch_key_type(keys.type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    detail::gpu::radix_sort_keys<K>(static_cast<K const*>(keys.data()),
                                    static_cast<K*>(out.data()), keys.size(), stream, res);
  });
#endif
  return out;
}

table sort_pairs(column_view const& keys, std::vector<column_view> const& payloads,
                 stream_ref stream, memory_resource_ref mr) {
  constexpr char const* fn = "sort_pairs";
  auto* res = checked_sort_resource(keys, payloads, mr, fn);
  scoped_range range("joinery::sort_pairs");
  auto out = sorted_keys_column(keys, stream, res);
#if defined(JOINERY_HAS_CUDA)
  size_type const n = keys.size();
  bool const direct = payloads.size() == 1 && (size_of(payloads[0].type()) == 4 ||
                                                size_of(payloads[0].type()) == 8);
  dispatch_key_type(keys.type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    auto const* k_in = static_cast<K const*>(keys.data());
    auto* k_out = static_cast<K*>(out.front().data());
    if (payloads.empty()) {
      detail::gpu::radix_sort_keys<K>(k_in, k_out, n, stream, res);
    } else if (direct) {
      auto const& p = payloads.front();
      out.emplace_back(p.type(), n, res, stream);
      if (size_of(p.type()) == 4) {
        detail::gpu::radix_sort_pairs<K, std::uint32_t>(
          k_in, k_out, static_cast<std::uint32_t const*>(p.data()),
          static_cast<std::uint32_t*>(out.back().data()), n, stream, res);
      } else {
        detail::gpu::radix_sort_pairs<K, std::uint64_t>(
          k_in, k_out, static_cast<std::uint64_t const*>(p.data()),
          static_cast<std::uint64_t*>(out.back().data()), n, stream, res);
      }
    } else {
      // (key, row id) pairs sorted, then every payload gathered by the ids. The ids are a
      // temporary: on the caller's resource, freed in stream order after the gathers.
      column ids(type_id::int64, n, res, stream);
      detail::gpu::radix_sort_row_ids<K>(k_in, k_out, ids.data_as<std::int64_t>(), n, stream,
                                         res);
      gather_payloads(out, payloads, ids, stream, res);
    }
  });
#else
  for (auto const& p : payloads) { out.emplace_back(p.type(), p.size(), res, stream); }
#endif
  return table(std::move(out));
}

table merge_sort_pairs(column_view const& keys, std::vector<column_view> const& payloads,
                       sort_order order, stream_ref stream, memory_resource_ref mr) {
  constexpr char const* fn = "merge_sort_pairs";
  expect_cuda(fn);
  JOINERY_EXPECTS(order == sort_order::ascending || order == sort_order::descending,
                  std::string(fn) + ": the order must be ascending or descending, got " +
                    std::to_string(static_cast<int>(order)));
  auto* res = checked_sort_resource(keys, payloads, mr, fn);
  scoped_range range("joinery::merge_sort_pairs");
  auto out = sorted_keys_column(keys, stream, res);
#if defined(JOINERY_HAS_CUDA)
  // The ids are a temporary: on the caller's resource, freed in stream order after the gathers.
  size_type const n = keys.size();
  column ids(type_id::int64, n, res, stream);
  dispatch_key_type(keys.type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    auto const* k_in = static_cast<K const*>(keys.data());
    auto* k_out = static_cast<K*>(out.front().data());
    auto* id_out = ids.data_as<std::int64_t>();
    if (order == sort_order::ascending) {
      detail::gpu::merge_sort_pairs<K>(k_in, k_out, id_out, n, detail::gpu::sort_less{},
                                       detail::gpu::merge_sort_ids::automatic, stream, res);
    } else {
      detail::gpu::merge_sort_pairs<K>(k_in, k_out, id_out, n, detail::gpu::sort_greater{},
                                       detail::gpu::merge_sort_ids::automatic, stream, res);
    }
  });
  gather_payloads(out, payloads, ids, stream, res);
#endif
  return table(std::move(out));
}

}  // namespace joinery
