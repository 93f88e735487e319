#include "harness/compare/run_differences.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "harness/report/run_settings.h"

namespace nkbench {

std::string runDifferences(const StoredRun& base, const StoredRun& current) {
  std::vector<std::string> differences;
  for (const RunSetting& setting : runSettings()) {
    if (!setting.sets_runs_apart) continue;
    const std::string then = setting.value(base.metadata), now = setting.value(current.metadata);
    if (!then.empty() && !now.empty() && then != now)
      differences.push_back(fmt::format("{} ({} then, {} now)", setting.what, then, now));
  }
  return fmt::format("{}", fmt::join(differences, ", "));
}

}  // namespace nkbench
