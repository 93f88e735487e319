#include "harness/tune/tuning_fit.h"

#include <fmt/format.h>

#include "kernels/mlir/tuning/tuned_schedule.h"

namespace nkbench {

TuningBuild thisTuningBuild() { return {NKBENCH_VERSION, NKBENCH_MLIR_VERSION}; }

std::optional<std::string> tuningBuildMismatch(const TuningBuild& tuned, const TuningBuild& here) {
  if (tuned.nkbench_version == here.nkbench_version && tuned.llvm_version == here.llvm_version) return std::nullopt;
  return fmt::format("tuned with nkbench {} and {}, this is nkbench {} with {}", tuned.nkbench_version,
                     tuned.llvm_version, here.nkbench_version, here.llvm_version);
}

std::optional<std::string> tunedScheduleMismatch(const Tuning& tuning, const std::string& display_name) {
  for (const TunedClass& tuned : tuning.classes) {
    if (tuned.keepsAnalytic()) continue;
    const std::optional<Isa> isa = parseIsa(tuned.isa);  // the reader checked it
    if (!isa) return fmt::format("class {}: '{}' is not an ISA level", tuned.shape_class, tuned.isa);
    if (auto problem = mlir_backend::tunedScheduleProblem(*isa, tuned.shape_class, tuned.schedule, display_name))
      return problem;
  }
  return std::nullopt;
}

std::optional<std::string> tuningUnusable(const Tuning& tuning, const std::string& display_name,
                                          const TuningHost& host, const TuningBuild& build) {
  if (auto mismatch = tuningHostMismatch(tuning.host, host)) return "not for this host: " + *mismatch;
  if (auto mismatch = tuningBuildMismatch({tuning.nkbench_version, tuning.llvm_version}, build)) return mismatch;
  return tunedScheduleMismatch(tuning, display_name);
}

}  // namespace nkbench
