#pragma once
// Internal, host-only: the untyped detail layer of gather and scatter (gather.cu with CUDA, stubs
// that throw without). Values are moved as `width`-byte words (1, 2, 4 or 8). Arguments are
// checked by the public layer (gather.cpp).
#include <joinery/memory.hpp>
#include <joinery/types.hpp>

#include <cstddef>

namespace joinery::detail {

/// out[i] = source[row_ids[i]] for i < n. With `checked`, out-of-range ids are skipped (their
/// output is 0) and the call returns false after synchronizing the stream; otherwise it returns
/// true at once (asynchronous).
bool gather(void const* source, size_type source_size, size_type const* row_ids, size_type n,
            void* out, std::size_t width, bool checked, stream_ref stream);

/// target[row_ids[i]] = source[i] for i < n; as gather for `checked`.
bool scatter(void const* source, size_type n, size_type const* row_ids, void* target,
             size_type target_size, std::size_t width, bool checked, stream_ref stream);

}  // namespace joinery::detail
