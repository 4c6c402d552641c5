// Errors of the spatialhash command-line tool. Each class of failure has its own exit status so
// scripts can tell "you called it wrong" from "the input is bad" from "the output failed".
#pragma once

#include <stdexcept>
#include <string>

namespace spatialhash::cli {

/// Process exit statuses (documented in --help and docs/cli.md).
enum class ExitCode : int {
  ok = 0,
  failure = 1,  ///< anything unexpected: out of memory, internal error
  usage = 2,    ///< bad command line: missing or invalid option, unsupported combination
  input = 3,    ///< unreadable or malformed input file
  output = 4,   ///< the result could not be written
};

/// An error the user can act on. The message is complete (it names the file, line, option...).
class CliError : public std::runtime_error {
 public:
  CliError(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

/// A bad command line (exit status 2).
class UsageError : public CliError {
 public:
  explicit UsageError(const std::string& message) : CliError(ExitCode::usage, message) {}
};

/// Input that cannot be read or parsed (exit status 3).
class InputError : public CliError {
 public:
  explicit InputError(const std::string& message) : CliError(ExitCode::input, message) {}
};

/// Output that cannot be written (exit status 4).
class OutputError : public CliError {
 public:
  explicit OutputError(const std::string& message) : CliError(ExitCode::output, message) {}
};

}  // namespace spatialhash::cli
