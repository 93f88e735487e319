#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nkbench {

// `text` with each control character written as an escape (\n, \t, \r, \xNN),
// so that it stays on one line and a NUL does not cut it short.
inline std::string escapeControlCharacters(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      escaped += "\\n";
    } else if (c == '\t') {
      escaped += "\\t";
    } else if (c == '\r') {
      escaped += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", byte);
      escaped += hex;
    } else {
      escaped += c;
    }
  }
  return escaped;
}

// An error with a message meant for the user, printed as one line. Messages
// quote input (suite values, report fields, option arguments) that may hold
// newlines or NULs; they are escaped here, once for every message.
class Error : public std::runtime_error {
 public:
  explicit Error(std::string_view message) : std::runtime_error(escapeControlCharacters(message)) {}
};

}  // namespace nkbench
