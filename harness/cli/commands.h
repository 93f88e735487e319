// The nkbench subcommands. Each adds itself to the app and, when chosen,
// leaves in `action` the function main() runs; it returns the exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace nkbench::cli {

using Action = std::function<int()>;

// `command_line` is recorded in the run's metadata.
void addRunCommand(CLI::App& app, Action& action, const std::string& command_line);
void addListCommand(CLI::App& app, Action& action);
void addPeakCommand(CLI::App& app, Action& action);
void addCompareCommand(CLI::App& app, Action& action);
void addMergeCommand(CLI::App& app, Action& action);
void addShowCommand(CLI::App& app, Action& action);
void addTuneCommand(CLI::App& app, Action& action, const std::string& command_line);

// Exit codes shared by all commands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitVerificationFailed = 1;
inline constexpr int kExitUsage = 2;

}  // namespace nkbench::cli
