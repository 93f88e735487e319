// Checks of the text options, shared by the commands.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace nkbench::cli {

// An empty value (`--out ''`, a variable that expanded to nothing) would
// otherwise mean the default or nothing at all (no file written), unsaid.
inline CLI::Validator nonEmpty() {
  return CLI::Validator(
      [](std::string& text) { return text.empty() ? std::string("must not be empty") : std::string(); }, "");
}

// {"mlir,eigen", "libxsmm"} -> {"mlir", "eigen", "libxsmm"}; empty items
// stay ("1,,2" -> {"1", "", "2"}), for the option to refuse.
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

// A comma-separated list of names, none empty: CLI11's own splitting drops the
// empty item of `mlir,,eigen` unsaid, so the list is checked whole, then split
// (commaItems).
inline CLI::Validator commaListOfNames() {
  return CLI::Validator(
      [](std::string& text) {
        if (text.empty()) return std::string("must not be empty");
        for (const std::string& name : commaItems({text}))
          if (name.empty()) return "an empty name in '" + text + "'";
        return std::string();
      },
      "");
}

}  // namespace nkbench::cli
