#include "harness/tune/tuning_selection.h"

#include <fmt/format.h>

#include "harness/core/error.h"

namespace nkbench {
namespace {

TuningSelection use(const std::filesystem::path& path, const Tuning& tuning, Isa isa) {
  TuningSelection selection;
  selection.file = path.string();
  for (const TunedClass& tuned : tuning.classes)
    if (tuned.isa == toString(isa) && !tuned.keepsAnalytic())
      selection.by_class.emplace(tuned.shape_class, tuned.schedule);
  return selection;
}

TuningSelection explicitFile(const std::filesystem::path& path, const std::string& what, Isa isa,
                             const TuningHost& here, const TuningBuild& build) {
  const Tuning tuning = readTuningFile(path);
  if (auto unusable = tuningUnusable(tuning, path.string(), here, build))
    throw Error(fmt::format("{} {}: {}", what, path.string(), *unusable));
  return use(path, tuning, isa);
}

}  // namespace

TuningSelection selectTuning(const std::string& option, Isa isa, const TuningHost& here, const TuningBuild& build) {
  if (option == "none") return {};
  if (option != "auto") return explicitFile(option, "--tuning", isa, here, build);
  if (environmentSwitchesTuningOff()) return {};
  if (const std::optional<std::filesystem::path> named = environmentTuningPath()) {
    try {
      return explicitFile(*named, "NKBENCH_TUNING", isa, here, build);
    } catch (const Error& error) {
      // Name where the path came from: the user may not know the variable is set.
      const std::string why = error.what();
      throw Error(why.rfind("NKBENCH_TUNING", 0) == 0 ? why : "NKBENCH_TUNING: " + why);
    }
  }
  const std::filesystem::path found = defaultTuningPath();
  std::error_code error;
  if (!std::filesystem::exists(found, error)) return {};
  try {
    const Tuning tuning = readTuningFile(found);
    if (auto unusable = tuningUnusable(tuning, found.string(), here, build)) {
      TuningSelection none;
      none.warning = fmt::format("warning: tuning file {} not used: {}", found.string(), *unusable);
      return none;
    }
    return use(found, tuning, isa);
  } catch (const Error& bad) {
    TuningSelection none;
    none.warning = fmt::format("warning: {}; the analytic schedules are used", bad.what());
    return none;
  }
}

}  // namespace nkbench
