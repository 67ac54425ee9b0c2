#pragma once
// The library's side of cancellation_scope (include/joinery/cancel.hpp): the checks.
#include <joinery/cancel.hpp>

namespace joinery::detail {

/// The innermost cancellation_scope's flag of this thread, or nullptr: what a parallel region
/// reads on its worker threads (the scope is the calling thread's).
std::atomic<bool> const* cancel_flag() noexcept;
/// True when the innermost cancellation_scope of this thread has its flag set.
bool cancel_requested() noexcept;
/// Throws joinery::cancelled when cancel_requested(): called between phases.
void throw_if_cancelled();

}  // namespace joinery::detail
