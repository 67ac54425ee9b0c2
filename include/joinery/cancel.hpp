#pragma once
// Cooperative cancellation of joins and group-bys: a caller's flag checked between phases.
#include <atomic>
#include <stdexcept>

namespace joinery {

/// Thrown by a join or group-by that found its cancellation flag set; nothing of its result is
/// kept and the inputs are untouched.
struct cancelled : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// While alive, the joins and group-bys this thread calls check `flag` between their phases (the
/// CPU backend's phases and row blocks of its nested-loop join, the streamed join's chunks, the
/// group-by's copy and run) and throw joinery::cancelled once it is set, from another thread
/// (e.g. on Ctrl-C). Scopes nest; the innermost one's flag is checked. The flag must outlive the
/// scope.
class cancellation_scope {
 public:
  explicit cancellation_scope(std::atomic<bool> const& flag) noexcept;
  ~cancellation_scope();
  cancellation_scope(cancellation_scope const&) = delete;
  cancellation_scope& operator=(cancellation_scope const&) = delete;

 private:
  std::atomic<bool> const* previous_;
};

}  // namespace joinery
