#include <exception>
#include <iostream>
#include <string>

#include "harness/cli/commands.h"
#include "harness/core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"nkbench: compile, run and verify matmul nanokernels against libxsmm, oneDNN and Eigen"};
  app.require_subcommand(1);
  nkbench::cli::Action action;
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
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
    const int code = app.exit(error);
    return code == 0 ? 0 : nkbench::cli::kExitUsage;
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
