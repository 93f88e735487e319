// The --threads option of `run`: one thread count, or a list to run each case at.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "harness/cli/text_options.h"
#include "harness/core/error.h"

namespace nkbench::cli {

inline constexpr const char* kThreadsHelp =
    "Threads per kernel call, one per core: a count, or a comma-separated list to run each case at each (e.g. "
    "1,2); a case's own 'threads' in the suite wins";

// "2" -> {2}; "1,2" -> {1, 2}. Counts from 1 to 1024, each once; whether the
// machine has the cores is the run's to say.
inline std::vector<int> parseThreadsOption(const std::string& text) {
  constexpr int kMaxThreads = 1024;
  std::vector<int> counts;
  for (const std::string& item : commaItems({text})) {
    int count = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), count);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || count < 1 || count > kMaxThreads)
      throw Error(fmt::format("--threads '{}': expected thread counts from 1 to {}, comma-separated, e.g. 1,2",
                              text.substr(0, 40), kMaxThreads));
    if (std::find(counts.begin(), counts.end(), count) != counts.end())
      throw Error(fmt::format("--threads '{}': {} is given twice", text.substr(0, 40), count));
    counts.push_back(count);
  }
  return counts;
}

}  // namespace nkbench::cli
