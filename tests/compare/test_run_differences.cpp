// What compare names when two runs differ in how they ran (run_settings.h).
#include <gtest/gtest.h>

#include "harness/compare/run_differences.h"

namespace nkbench {
namespace {

StoredRun runWith(const RunMetadata& metadata) {
  StoredRun run;
  run.metadata = metadata;
  return run;
}

RunMetadata gateRun() {
  RunMetadata m;
  m.suite = "gate";
  m.isa = "avx512-bf16";
  m.fill = "exact-integer";
  m.requested_threads = {1};
  m.library_versions = {{"libxsmm", "1.17"}, {"mlir", "MLIR 22.1.8"}};
  m.compiler = "GNU 12.2.0";
  m.schedule_option = "none";
  m.cpu_model = "CPU A";
  m.repetitions = 9;
  m.min_time_s = 0.05;
  return m;
}

TEST(RunDifferences, TheSameSettingsSayNothing) {
  EXPECT_EQ(runDifferences(runWith(gateRun()), runWith(gateRun())), "");
}

// The relative gate's yardstick, the ISA, the threads, the schedule and the compiler all change the times.
TEST(RunDifferences, EverySettingThatChangesTheTimesIsNamed) {
  RunMetadata other = gateRun();
  other.isa = "avx2";
  other.requested_threads = {2};
  other.library_versions["libxsmm"] = "1.18";
  other.compiler = "Clang 14";
  other.schedule_option = "avx512.f32.4x16";
  other.repetitions = 3;
  const std::string said = runDifferences(runWith(gateRun()), runWith(other));
  for (const char* part : {"isa (avx512-bf16 then, avx2 now)", "--threads (1 then, 2 now)",
                           "backends and library versions (libxsmm 1.17, mlir MLIR 22.1.8 then, libxsmm 1.18",
                           "compiler (GNU 12.2.0 then, Clang 14 now)", "--reps (9 then, 3 now)",
                           "--schedule (none then, avx512.f32.4x16 now)"})
    EXPECT_NE(said.find(part), std::string::npos) << part << ": " << said;
}

// Older reports do not record a setting: nothing is claimed about it.
TEST(RunDifferences, UnrecordedSettingsAreNotDifferences) {
  RunMetadata older = gateRun();
  older.repetitions = 0;
  older.min_time_s = 0;
  older.compiler.clear();
  older.schedule_option.clear();
  EXPECT_EQ(runDifferences(runWith(older), runWith(gateRun())), "");
}

}  // namespace
}  // namespace nkbench
