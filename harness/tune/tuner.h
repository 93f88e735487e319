// `nkbench tune`: measures candidate schedules of the mlir backend on a suite's
// cases, per ISA level and shape class, and keeps the fastest that verified.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/isa.h"
#include "harness/suite/suite.h"
#include "harness/tune/tuning_file.h"

namespace nkbench {

struct TuneOptions {
  std::optional<Isa> isa;  // nullopt: the best the host has
  std::string filter;      // regex on case ids; empty: all
  std::filesystem::path out;  // the tuning file, read first and updated class by class (tuning_update.h)
  bool out_is_default = false;  // `out` is the default path: a file there that does not hold here is replaced
  bool out_from_environment = false;  // `out` is $NKBENCH_TUNING's
  // Seconds the measurements may take in all; past it, the classes not yet
  // tuned keep the analytic schedules (and are not written).
  double budget_s = 600.0;
  // Register blocks measured per class besides the analytic one (GEMM classes
  // then measure up to 5 cache blocks around the best one).
  std::size_t candidates = 5;
  // Cases measured per class, the largest, the smallest and those between.
  std::size_t cases_per_class = 3;
  bool progress = true;
  bool isolate = true;  // candidates run in child processes, as `run --isolate`
  std::string kernel_cache_dir;  // mlir's kernel cache; empty: off
  std::string command_line;
};

struct TuneSummary {
  Tuning tuning;                     // as last written to `out`, with other tunes' classes
  std::vector<TunedClass> tuned;     // the classes tuned in this run
  std::vector<std::string> skipped;  // classes not tuned, with why
  // Cases measured that the suite gives more than one thread: on one core, as
  // every case is (a tuning chooses the block kernel each core runs).
  std::vector<std::string> measured_on_one_core;
  double elapsed_s = 0.0;
  std::size_t measurements = 0;  // (candidate, case) pairs timed
};

// Throws nkbench::Error for bad options (ISA the host lacks, no case) before measuring anything.
TuneSummary tuneSuite(const Suite& suite, const TuneOptions& options);

}  // namespace nkbench
