// Checks of the text options, shared by the commands.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace nkbench::cli {

// An empty value (`--out ''`, a variable that expanded to nothing) would
// otherwise mean the default or nothing at all (no file written), unsaid.
inline CLI::Validator nonEmpty() {
  return CLI::Validator(
      [](std::string& text) { return text.empty() ? std::string("must not be empty") : std::string(); }, "");
}

// A comma-separated list of names, none empty: CLI11's own splitting drops the
// empty item of `mlir,,eigen` unsaid, so the list is checked whole, then split
// (commaItems).
inline CLI::Validator commaListOfNames() {
  return CLI::Validator(
      [](std::string& text) {
        if (text.empty()) return std::string("must not be empty");
        const std::string_view list = text;
        for (std::size_t start = 0;;) {
          const std::size_t comma = list.find(',', start);
          if (list.substr(start, comma - start).empty()) return "an empty name in '" + text + "'";
          if (comma == std::string_view::npos) return std::string();
          start = comma + 1;
        }
      },
      "");
}

// {"mlir,eigen", "libxsmm"} -> {"mlir", "eigen", "libxsmm"}.
inline std::vector<std::string> commaItems(const std::vector<std::string>& values) {
  std::vector<std::string> items;
  for (const std::string& value : values) {
    std::size_t start = 0;
    for (std::size_t comma; (comma = value.find(',', start)) != std::string::npos; start = comma + 1)
      items.push_back(value.substr(start, comma - start));
    items.push_back(value.substr(start));
  }
  return items;
}

}  // namespace nkbench::cli
