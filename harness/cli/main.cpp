#include <algorithm>
#include <exception>
#include <iostream>
#include <string>

#include "harness/cli/commands.h"
#include "harness/core/error.h"

namespace {

// A word as a POSIX shell reads it back: quoted where it holds anything but
// plain characters, so that a report's command line can be run again.
std::string shellWord(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_./=:,@%+-") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nkbench: compile, run and verify matmul nanokernels against libxsmm, oneDNN and Eigen"};
  app.require_subcommand(1);
  nkbench::cli::Action action;
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + shellWord(argv[i]);
  nkbench::cli::addRunCommand(app, action, command_line);
  nkbench::cli::addListCommand(app, action);
  nkbench::cli::addPeakCommand(app, action);
  nkbench::cli::addCompareCommand(app, action);
  nkbench::cli::addMergeCommand(app, action);
  nkbench::cli::addShowCommand(app, action);
  nkbench::cli::addTuneCommand(app, action, command_line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help
    // One line, as every other refusal of bad input.
    std::string message = error.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::cerr << "nkbench: error: " << message << " (see --help)\n";
    return nkbench::cli::kExitUsage;
  }
  try {
    return action();
  } catch (const nkbench::Error& error) {
    std::cerr << "nkbench: error: " << error.what() << "\n";
    return nkbench::cli::kExitUsage;
  } catch (const std::exception& error) {  // e.g. out of memory for a case's operands
    std::cerr << "nkbench: error: " << error.what() << "\n";
    return nkbench::cli::kExitVerificationFailed;
  }
}
