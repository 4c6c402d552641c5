// expect_error: the one way the tests check a refusal (InvalidArgument with a telling message).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "spatialhash/spatialhash.hpp"

/// Expects `f` to throw spatialhash::InvalidArgument whose message contains `fragment`.
template <class F>
void expect_error(F f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << fragment << "'";
  } catch (const spatialhash::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}
