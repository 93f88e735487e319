// Shape suites: YAML files listing benchmark cases (format in README.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/core/problem.h"

namespace nkbench {

struct SuiteCase {
  std::string id;
  Problem problem;
  int line = 0;     // 1-based line of the case in its file
  int threads = 0;  // the case's own thread count; 0: the run's (--threads)
};

struct Suite {
  std::string name;
  std::string description;
  std::filesystem::path path;
  std::vector<SuiteCase> cases;
};

// Throws nkbench::Error("FILE:LINE: message") for unreadable or malformed files,
// unknown keys, duplicate ids and impossible shapes. Nothing is half-loaded.
Suite loadSuite(const std::filesystem::path& path);
Suite parseSuite(const std::string& yaml_text, const std::string& display_name);

}  // namespace nkbench
