// Running the nkbench binary as a user would, for the CLI tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cli_test {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline Outcome runNkbench(const std::string& arguments, const std::string& environment = "") {
  const std::string command =
      (environment.empty() ? "" : "env " + environment + " ") + std::string(NKBENCH_BINARY) + " " + arguments + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return outcome;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), int(buffer.size()), pipe)) outcome.output += buffer.data();
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

// The same, stopped by SIGTERM (exit status 124) if it is still running after
// `seconds`: for runs that could hang.
inline Outcome runNkbenchWithin(int seconds, const std::string& arguments) {
  return runNkbench(arguments, "timeout " + std::to_string(seconds));
}

// nkbench on this host masked to a smaller host class (NKBENCH_HOST_CLASS), so
// that the paths of smaller hosts run on every host.
inline Outcome nkbenchAs(const std::string& host_class, const std::string& arguments) {
  return runNkbench(arguments, "NKBENCH_HOST_CLASS=" + host_class);
}

inline std::string sourcePath(const std::string& relative) { return std::string(NKBENCH_SOURCE_DIR) + "/" + relative; }

inline fs::path tempPath(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("nkbench-cli-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

inline std::vector<std::string> readLines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline nlohmann::json readReport(const fs::path& json) {
  std::ifstream in(json);
  return nlohmann::json::parse(in);
}

inline constexpr const char* kQuick = "--reps 2 --min-time 0.01 --quiet";

// A suite of `cases` (YAML list items) written as NAME.yaml and run quickly with
// `options`, its JSON report written to `json` (NAME.json).
struct SuiteRun {
  Outcome outcome;
  fs::path json;
};
inline SuiteRun runCases(const std::string& name, const std::string& cases, const std::string& options) {
  const fs::path suite = tempPath(name + ".yaml");
  std::ofstream(suite) << "suite: " << name << "\ncases:\n" << cases;
  const fs::path json = tempPath(name + ".json");
  return {runNkbench("run --suite " + suite.string() + " " + options + " " + kQuick + " --json " + json.string()), json};
}

}  // namespace cli_test
