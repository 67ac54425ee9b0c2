// Public merge path partitioning and sorted search: argument checks, NVTX range, then the GPU
// dispatch layer (merge_path.cu). Built without CUDA, every GPU entry point refuses.
#include <joinery/primitives/merge_path.hpp>

#if defined(JOINERY_HAS_CUDA)
#include "primitives/sort_dispatch.hpp"
#endif

#include <climits>
#include <cstdint>
#include "primitives/checks.hpp"

#include <string>

namespace joinery {

namespace {

using detail::expect_cuda;
using detail::expect_device;
using detail::expect_key_column;
using detail::result_resource;

void expect_same_type(column_view const& x, column_view const& y, char const* fn,
                      std::string const& xs, std::string const& ys) {
  JOINERY_EXPECTS(x.type() == y.type(), std::string(fn) + ": the " + xs + " column is " +
                                          std::string(to_string(x.type())) + " but the " + ys +
                                          " column is " + std::string(to_string(y.type())) +
                                          "; both must have the same key type");
}

column search(column_view const& sorted, column_view const& probes, bool upper,
              stream_ref stream, memory_resource_ref mr) {
  char const* fn = upper ? "upper_bound" : "lower_bound";
  expect_cuda(fn);
  expect_key_column(sorted, fn, "sorted");
  expect_key_column(probes, fn, "probe");
  expect_same_type(sorted, probes, fn, "sorted", "probe");
  expect_device(sorted, fn, "sorted");
  expect_device(probes, fn, "probe");
  auto* res = result_resource(mr, fn);
  scoped_range range(upper ? "joinery::upper_bound" : "joinery::lower_bound");
  column out(type_id::int64, probes.size(), res, stream);
#if defined(JOINERY_HAS_CUDA)
  dispatch_key_type(sorted.type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    detail::gpu::sorted_search<K>(static_cast<K const*>(sorted.data()), sorted.size(),
                                  static_cast<K const*>(probes.data()), probes.size(), upper,
                                  out.data_as<std::int64_t>(), stream);
  });
#endif
  return out;
}

}  // namespace

merge_path_splits merge_path_partition(column_view const& a, column_view const& b,
                                       size_type parts, stream_ref stream,
                                       memory_resource_ref mr) {
  constexpr char const* fn = "merge_path_partition";
  expect_cuda(fn);
  JOINERY_EXPECTS(parts >= 1 && parts <= INT_MAX,
                  std::string(fn) + ": parts must lie in [1, 2^31), got " +
                    std::to_string(parts));
  expect_key_column(a, fn, "A");
  expect_key_column(b, fn, "B");
  expect_same_type(a, b, fn, "A", "B");
  expect_device(a, fn, "A");
  expect_device(b, fn, "B");
  auto* res = result_resource(mr, fn);
  scoped_range range("joinery::merge_path_partition");
  merge_path_splits out;
  out.parts = parts;
  out.a = column(type_id::int64, parts + 1, res, stream);
  out.b = column(type_id::int64, parts + 1, res, stream);
#if defined(JOINERY_HAS_CUDA)
  dispatch_key_type(a.type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    detail::gpu::merge_path_partition<K>(static_cast<K const*>(a.data()), a.size(),
                                         static_cast<K const*>(b.data()), b.size(), parts,
                                         out.a.data_as<std::int64_t>(),
                                         out.b.data_as<std::int64_t>(), stream);
  });
#endif
  return out;
}

column lower_bound(column_view const& sorted, column_view const& probes, stream_ref stream,
                   memory_resource_ref mr) {
  return search(sorted, probes, false, stream, mr);
}

column upper_bound(column_view const& sorted, column_view const& probes, stream_ref stream,
                   memory_resource_ref mr) {
  return search(sorted, probes, true, stream, mr);
}

}  // namespace joinery
