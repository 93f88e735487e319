// Which tuning file a run uses (`--tuning FILE|none|auto`), one rule for `run`,
// `list` and `show`.
#pragma once

#include <map>
#include <string>

#include "harness/core/isa.h"
#include "harness/tune/tuning_file.h"
#include "harness/tune/tuning_fit.h"

namespace nkbench {

struct TuningSelection {
  std::string file;                             // empty: none, the analytic schedules
  std::map<std::string, std::string> by_class;  // shape class -> schedule, for the run's ISA level
  std::string warning;                          // one line on why a found file was not used; empty if none
};

// `option`:
//  - "none": no tuning file;
//  - a path: that file, which must be readable and hold here (tuningUnusable),
//    else Error;
//  - "auto" (the default): $NKBENCH_TUNING as if given ("none" switches tuning
//    off), else defaultTuningPath() where it exists; a found file that cannot be
//    read or does not hold here is not used, and `warning` says why.
TuningSelection selectTuning(const std::string& option, Isa isa, const TuningHost& here,
                             const TuningBuild& build = thisTuningBuild());

inline constexpr const char* kTuningHelp =
    "Tuned schedules (nkbench tune): FILE, none (the analytic schedules), or auto: $NKBENCH_TUNING, else "
    "$XDG_CACHE_HOME/nkbench/tuning.json (~/.cache/nkbench/tuning.json) where it exists";

}  // namespace nkbench
