#include "core/cancel.hpp"

namespace joinery {
namespace {
thread_local std::atomic<bool> const* current_flag = nullptr;
}  // namespace

cancellation_scope::cancellation_scope(std::atomic<bool> const& flag) noexcept
    : previous_(current_flag) {
  current_flag = &flag;
}

cancellation_scope::~cancellation_scope() { current_flag = previous_; }

namespace detail {

std::atomic<bool> const* cancel_flag() noexcept { return current_flag; }

bool cancel_requested() noexcept {
  return current_flag != nullptr && current_flag->load(std::memory_order_relaxed);
}

void throw_if_cancelled() {
  if (cancel_requested()) { throw cancelled("the call was cancelled"); }
}

}  // namespace detail
}  // namespace joinery
