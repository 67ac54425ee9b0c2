#pragma once
// Shared by the tests of refusals: runs a call and checks that it throws a logic_error whose
// message mentions a given phrase.
#include <joinery/error.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace joinery::test {

inline void expect_refusal(std::function<void()> const& f, std::string const& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected a logic_error mentioning '" << needle << "'";
  } catch (logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
      << "message '" << e.what() << "' does not mention '" << needle << "'";
  }
}

}  // namespace joinery::test
