#pragma once
// What the command-line unit tests share: parsing a command line as the
// program would, and the one-line error it gives.
#include <string>
#include <utility>
#include <vector>

#include "app/cli.hpp"
#include "asyncsolve/core/error.hpp"

namespace asyncsolve_test {

/// parse_command_line of `args` after the program name.
inline asyncsolve::app::Command parse(std::vector<std::string> args) {
  args.insert(args.begin(), "asyncsolve");
  return asyncsolve::app::parse_command_line(args);
}

/// The InputError message `args` gives, or "(no error)".
inline std::string error_of(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const asyncsolve::core::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace asyncsolve_test
