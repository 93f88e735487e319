// Whether a tuning file holds here: measured on this host, with this nkbench
// and MLIR, and every class's schedule one this build can run for the class.
// One rule for `run`, `list` and `show` (which use a file) and `tune` (which
// updates one).
#pragma once

#include <optional>
#include <string>

#include "harness/tune/tuning_file.h"

namespace nkbench {

// The build a tuning is measured with: another nkbench or MLIR may read a
// schedule's name otherwise, or compile it to other code.
struct TuningBuild {
  std::string nkbench_version;
  std::string llvm_version;  // as the mlir backend names it, "MLIR 22.1.8"
};

TuningBuild thisTuningBuild();

// Why a tuning measured with `tuned` does not hold for `here`, or nullopt.
std::optional<std::string> tuningBuildMismatch(const TuningBuild& tuned, const TuningBuild& here);

// The first class whose schedule does not fit it (mlir_backend::tunedScheduleProblem),
// or nullopt. `display_name` names the file.
std::optional<std::string> tunedScheduleMismatch(const Tuning& tuning, const std::string& display_name);

// Why `tuning` cannot be used here, as one line: "not for this host: ...",
// "tuned with nkbench ...", or a tuned schedule's problem; nullopt when it can.
std::optional<std::string> tuningUnusable(const Tuning& tuning, const std::string& display_name,
                                          const TuningHost& host, const TuningBuild& build);

}  // namespace nkbench
