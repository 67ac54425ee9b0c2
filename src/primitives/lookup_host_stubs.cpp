// Without the CUDA backend: the detail layer of the GPU hash tables and gather/scatter refuses
// with a clear message (the public layer in hash_table.cpp / gather.cpp is built either way).
#if !defined(JOINERY_HAS_CUDA)

#include "primitives/gather_impl.hpp"
#include "primitives/hash_table_impl.hpp"

#include <string>

namespace joinery::detail {

namespace {
[[noreturn]] void needs_gpu(char const* what) {
  JOINERY_FAIL(std::string(what) + " needs the GPU backend, built without CUDA");
}
}  // namespace

std::unique_ptr<hash_table_impl> make_hash_table(type_id, size_type, hash_table_options const&,
                                                 stream_ref, memory_resource*) {
  needs_gpu("hash_table");
}

std::unique_ptr<perfect_hash_impl> make_perfect_hash(column_view const&, double, stream_ref,
                                                     memory_resource*, std::string&) {
  needs_gpu("perfect_hash_array");
}

bool gather(void const*, size_type, size_type const*, size_type, void*, std::size_t, bool,
            stream_ref) {
  needs_gpu("gather");
}

bool scatter(void const*, size_type, size_type const*, void*, size_type, std::size_t, bool,
             stream_ref) {
  needs_gpu("scatter");
}

}  // namespace joinery::detail

#endif  // !JOINERY_HAS_CUDA
