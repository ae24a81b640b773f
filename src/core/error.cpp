#include "asyncsolve/core/error.hpp"

#include <string_view>

namespace asyncsolve::core {

std::string one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      constexpr std::string_view hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4U];
      out += hex[c & 0xfU];
    } else {
      out += ch;
    }
  }
  return out;
}

InputError::InputError(const std::string& message) : std::runtime_error(one_line(message)) {}

const char* describe(ExitCode code) noexcept {
  switch (code) {
    case ExitCode::success:
      return "success";
    case ExitCode::bad_input:
      return "bad input";
    case ExitCode::not_converged:
      return "did not converge";
    case ExitCode::runtime_failure:
      return "runtime failure";
  }
  return "unknown";
}

}  // namespace asyncsolve::core
