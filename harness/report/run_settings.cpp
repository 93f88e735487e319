#include "harness/report/run_settings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace nkbench {
namespace {

// 0 is what reports before the setting was recorded read as.
std::string numberOrUnknown(double value) { return value > 0 ? fmt::format("{:g}", value) : ""; }

std::string libraries(const RunMetadata& m) {
  std::vector<std::string> versions;
  for (const auto& [backend, version] : m.library_versions) versions.push_back(backend + " " + version);
  return fmt::format("{}", fmt::join(versions, ", "));
}

std::string caseThreads(const RunMetadata& m) {
  std::vector<std::string> counts;
  for (const auto& [id, threads] : m.case_threads) counts.push_back(fmt::format("{} {}", id, threads));
  return fmt::format("{}", fmt::join(counts, ", "));
}

}  // namespace

const std::vector<RunSetting>& runSettings() {
  // what, value, defines a run (merge), sets compared runs apart (compare)
  static const std::vector<RunSetting> settings = {
      {"suite", [](const RunMetadata& m) { return m.suite; }, true, true},
      {"isa", [](const RunMetadata& m) { return m.isa; }, true, true},
      {"fill", [](const RunMetadata& m) { return m.fill; }, true, true},
      {"cache", [](const RunMetadata& m) { return m.cache; }, true, true},
      // By default twice the host's last-level cache: shards on other machines may differ.
      {"cold span (MiB)", [](const RunMetadata& m) { return numberOrUnknown(m.cold_mib); }, false, true},
      {"tuning", [](const RunMetadata& m) { return m.tuning; }, true, true},
      {"--schedule", [](const RunMetadata& m) { return m.schedule_option; }, true, true},
      // The thread counts asked for; a shard's own (thread_counts) are those of its cases.
      {"--threads",
       [](const RunMetadata& m) { return fmt::format("{}", fmt::join(m.requested_threads, ",")); }, true, true},
      {"the thread counts cases set", caseThreads, true, false},
      {"backends and library versions", libraries, true, true},
      {"--reps", [](const RunMetadata& m) { return numberOrUnknown(m.repetitions); }, true, true},
      {"--min-time", [](const RunMetadata& m) { return numberOrUnknown(m.min_time_s); }, true, true},
      {"--noisy-iqr", [](const RunMetadata& m) { return numberOrUnknown(m.noisy_iqr); }, true, false},
      // Shards may come from other machines and builds: merge notes those instead.
      {"compiler", [](const RunMetadata& m) { return m.compiler; }, false, true},
      {"host CPU", [](const RunMetadata& m) { return m.cpu_model; }, false, true},
  };
  return settings;
}

}  // namespace nkbench
