// The public gather / scatter: argument checks and NVTX ranges, then the untyped detail layer
// (gather.cu, or the host stubs without CUDA).
#include "primitives/gather_impl.hpp"

#include <joinery/primitives/gather.hpp>

#include <string>

namespace joinery {

namespace {
void check_device_column(column_view const& c, char const* what, char const* which) {
  JOINERY_EXPECTS(c.space() != memory_space::host,
                  std::string(what) + ": " + which +
                      " must be in device or pinned host memory (the GPU cannot read pageable "
                      "host memory)");
  JOINERY_EXPECTS(c.null_count() == 0,
                  std::string(what) + ": " + which + " with nulls is not supported yet");
}
}  // namespace

column gather(column_view const& source, column_view const& row_ids, bounds_check check,
              stream_ref stream, memory_resource_ref mr) {
  JOINERY_EXPECTS(built_with_cuda(), "gather needs the GPU backend, built without CUDA");
  JOINERY_EXPECTS(row_ids.type() == type_id::int64,
                  "gather: row ids must be int64, not " + std::string(to_string(row_ids.type())));
  check_device_column(source, "gather", "the source column");
  check_device_column(row_ids, "gather", "the row-id column");
  if (mr == nullptr) { mr = device_resource(); }
  JOINERY_EXPECTS(mr->space() != memory_space::host,
                  "gather: the result must go to device or pinned host memory");
  JOINERY_EXPECTS(row_ids.empty() || !source.empty(),
                  "gather: row ids into an empty column are out of range");
  scoped_range range("joinery::gather");
  column out(source.type(), row_ids.size(), mr, stream);
  bool const ok = detail::gather(source.data(), source.size(), row_ids.data_as<size_type>(),
                                 row_ids.size(), out.data(), size_of(source.type()),
                                 check == bounds_check::checked, stream);
  JOINERY_EXPECTS(ok, "gather: a row id is outside [0, " + std::to_string(source.size()) + ")");
  return out;
}

void scatter(column_view const& source, column_view const& row_ids, column& target,
             bounds_check check, stream_ref stream) {
  JOINERY_EXPECTS(built_with_cuda(), "scatter needs the GPU backend, built without CUDA");
  JOINERY_EXPECTS(row_ids.type() == type_id::int64,
                  "scatter: row ids must be int64, not " + std::string(to_string(row_ids.type())));
  JOINERY_EXPECTS(row_ids.size() == source.size(),
                  "scatter: " + std::to_string(row_ids.size()) + " row ids for " +
                      std::to_string(source.size()) + " source rows");
  JOINERY_EXPECTS(target.type() == source.type(),
                  "scatter: the target column is " + std::string(to_string(target.type())) +
                      " but the source is " + std::string(to_string(source.type())));
  check_device_column(source, "scatter", "the source column");
  check_device_column(row_ids, "scatter", "the row-id column");
  check_device_column(target.view(), "scatter", "the target column");
  JOINERY_EXPECTS(source.empty() || target.size() > 0,
                  "scatter: row ids into an empty column are out of range");
  scoped_range range("joinery::scatter");
  bool const ok = detail::scatter(source.data(), source.size(), row_ids.data_as<size_type>(),
                                  target.data(), target.size(), size_of(source.type()),
                                  check == bounds_check::checked, stream);
  JOINERY_EXPECTS(ok, "scatter: a row id is outside [0, " + std::to_string(target.size()) + ")");
}

}  // namespace joinery
