// GoogleTest expectations shared by the command-line tool's tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_harness.hpp"

namespace clitest {

/// Runs the tool (with `stdin_file` as standard input when given) and expects exit status
/// `code`, one error message starting "spatialhash: error: " that contains every fragment, and
/// nothing on standard output. Returns the run (for its peak memory, say).
inline Result expect_failure(const std::vector<std::string>& args, int code,
                             const std::vector<std::string>& fragments,
                             const std::string& stdin_file = "") {
  const Result res = run(args, stdin_file);
  EXPECT_EQ(res.exit_code, code) << res.err;
  EXPECT_EQ(res.err.rfind("spatialhash: error: ", 0), 0u) << res.err;
  for (const std::string& f : fragments) {
    EXPECT_NE(res.err.find(f), std::string::npos) << "message lacks '" << f << "':\n" << res.err;
  }
  EXPECT_EQ(res.out, "");
  return res;
}

}  // namespace clitest
