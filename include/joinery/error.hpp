#pragma once
// Errors: every failure is an exception carrying a clear message.
#include <stdexcept>
#include <string>

namespace joinery {

/// Bad arguments or unsupported combinations (the caller's fault).
struct logic_error : std::logic_error {
  using std::logic_error::logic_error;
};

/// Inputs that cannot be read or parsed (files, headers, values).
struct input_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A CUDA runtime call failed.
struct cuda_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An exact result does not fit its type (a SUM under overflow_policy::error).
struct overflow_error : std::overflow_error {
  using std::overflow_error::overflow_error;
};

/// The result or the working set does not fit in the memory budget.
struct out_of_memory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {
[[noreturn]] void throw_logic_error(char const* file, int line, std::string const& msg);
}  // namespace detail

}  // namespace joinery

#define JOINERY_STRINGIFY_DETAIL(x) #x
#define JOINERY_STRINGIFY(x) JOINERY_STRINGIFY_DETAIL(x)

/// Throws joinery::logic_error with `msg` (a std::string or string literal) when `cond` is false.
#define JOINERY_EXPECTS(cond, msg)                                       \
  do {                                                                   \
    if (!(cond)) {                                                       \
      ::joinery::detail::throw_logic_error(__FILE__, __LINE__, (msg));   \
    }                                                                    \
  } while (0)

/// Unconditional failure for paths that must not be reached or are not supported.
#define JOINERY_FAIL(msg) ::joinery::detail::throw_logic_error(__FILE__, __LINE__, (msg))
