#pragma once
// Test helper: run a scope with a given OpenMP thread count (more threads than cores still
// exercises the splitting logic), then restore the previous count.
#include <omp.h>

namespace joinery::test {

class scoped_threads {
 public:
  explicit scoped_threads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~scoped_threads() { omp_set_num_threads(saved_); }
  scoped_threads(scoped_threads const&) = delete;
  scoped_threads& operator=(scoped_threads const&) = delete;

 private:
  int saved_;
};

}  // namespace joinery::test
