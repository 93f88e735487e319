#include "harness/compare/run_differences.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <vector>

namespace nkbench {
namespace {

struct Setting {
  const char* what;
  std::function<std::string(const RunMetadata&)> value;
};

const std::vector<Setting>& settings() {
  static const std::vector<Setting> list = {
      {"suite", [](const RunMetadata& m) { return m.suite; }},
      {"fill", [](const RunMetadata& m) { return m.fill; }},
      {"cache", [](const RunMetadata& m) { return m.cache; }},
      {"tuning", [](const RunMetadata& m) { return m.tuning; }},
      {"host CPU", [](const RunMetadata& m) { return m.cpu_model; }},
  };
  return list;
}

}  // namespace

std::string runDifferences(const StoredRun& base, const StoredRun& current) {
  std::vector<std::string> differences;
  for (const Setting& setting : settings()) {
    const std::string then = setting.value(base.metadata), now = setting.value(current.metadata);
    if (!then.empty() && !now.empty() && then != now)
      differences.push_back(fmt::format("{} ({} then, {} now)", setting.what, then, now));
  }
  return fmt::format("{}", fmt::join(differences, ", "));
}

}  // namespace nkbench
