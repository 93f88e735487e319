// A whole file as text, for tests that compare what a file holds.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace nkbench::test {

inline std::string fileText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace nkbench::test
