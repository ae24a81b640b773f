// libFuzzer harness of the command-line option parser (issue 19). The input
// is split at NUL bytes into arguments after "asyncsolve"; the parser must
// either return a command (whose canonical configuration, the text the
// ranks compare, can be made) or throw core::InputError with a one-line
// message. Anything else (another exception, a crash, a sanitizer report, a
// hang) is a finding. Built by tests/fuzz/build_fuzz_options.sh with clang-14.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/agreement.hpp"
#include "app/cli.hpp"
#include "asyncsolve/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t max_args = 64;
  std::vector<std::string> args{"asyncsolve"};
  std::string current;
  for (std::size_t i = 0; i < size && args.size() < max_args; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty()) args.push_back(current);
  try {
    const asyncsolve::app::Command command = asyncsolve::app::parse_command_line(args);
    (void)asyncsolve::app::canonical(command);
  } catch (const asyncsolve::core::InputError& e) {
    const std::string message = e.what();
    if (message.empty() || message.find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
