// Checks of the text options, shared by the commands.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace nkbench::cli {

// An empty value (`--kernel-cache ''`, a variable that expanded to nothing)
// would otherwise mean the default, or name a file called "", unsaid.
inline CLI::Validator nonEmpty() {
  return CLI::Validator(
      [](std::string& text) { return text.empty() ? std::string("must not be empty") : std::string(); }, "");
}

}  // namespace nkbench::cli
