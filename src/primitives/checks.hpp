#pragma once
// Internal: the argument checks shared by the public GPU primitives (host-only code).
#include <joinery/column.hpp>
#include <joinery/memory.hpp>

#include <string>

namespace joinery::detail {

/// Refuses clearly when joinery was built without the GPU backend.
[[maybe_unused]] inline void expect_cuda(char const* fn) {
#if !defined(JOINERY_HAS_CUDA)
  JOINERY_FAIL(std::string(fn) + " needs the GPU backend, built without CUDA");
#else
  (void)fn;
#endif
}

inline void expect_no_nulls(column_view const& c, char const* fn, std::string const& what) {
  JOINERY_EXPECTS(!c.nullable(),
                  std::string(fn) + ": the " + what + " column is nullable; nulls are not supported");
}

inline void expect_device(column_view const& c, char const* fn, std::string const& what,
                          std::string const& hint = "") {
  JOINERY_EXPECTS(c.space() == memory_space::device,
                  std::string(fn) + ": the " + what + " column is in " +
                    std::string(to_string(c.space())) +
                    " memory but must be in device memory (copy it with column::copy_of(view, "
                    "device_resource(), stream)" + hint + ")");
}

/// A key column: one of the four key types, no nulls.
inline void expect_key_column(column_view const& c, char const* fn, std::string const& what) {
  JOINERY_EXPECTS(is_key_type(c.type()), std::string(fn) + ": the " + what +
                                           " column must be int32, int64, uint32 or uint64, got " +
                                           std::string(to_string(c.type())));
  expect_no_nulls(c, fn, what);
}

/// The keys of a primitive: one of the four key types, no nulls.
inline void expect_keys(column_view const& keys, char const* fn) {
  JOINERY_EXPECTS(is_key_type(keys.type()),
                  std::string(fn) + ": keys must be int32, int64, uint32 or uint64, got " +
                    std::string(to_string(keys.type())));
  expect_no_nulls(keys, fn, "key");
}

/// The resource results come from: the caller's, which must allocate device memory, or the
/// default device pool.
inline memory_resource* result_resource(memory_resource_ref mr, char const* fn) {
  if (mr == nullptr) { return device_resource(); }
  JOINERY_EXPECTS(mr->space() == memory_space::device,
                  std::string(fn) + ": the memory resource must allocate device memory, not " +
                    std::string(to_string(mr->space())) + " memory");
  return mr;
}

}  // namespace joinery::detail
