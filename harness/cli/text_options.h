// Checks of the text options, shared by the commands.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace nkbench::cli {

// An empty value (`--out ''`, a variable that expanded to nothing) would
// otherwise mean the default or nothing at all (no file written), unsaid.
inline CLI::Validator nonEmpty() {
  return CLI::Validator(
      [](std::string& text) { return text.empty() ? std::string("must not be empty") : std::string(); }, "");
}

}  // namespace nkbench::cli
