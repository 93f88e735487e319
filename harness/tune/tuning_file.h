// Tuning files: the schedules `nkbench tune` measured best on one host, per ISA
// level and shape class, with the host they were measured on, so that `run`
// uses them only there.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/isa.h"
#include "harness/host/cache_info.h"

namespace nkbench {

// What a tuning depends on: the CPU and the ISA flags it was measured with (a
// host class mask gives other flags), and the caches that bound the shape classes.
struct TuningHost {
  std::string cpu_model;
  std::vector<std::string> isa_flags;
  CacheSizes caches;
};

TuningHost thisTuningHost(const CpuFeatures& features, const CacheSizes& caches);

// One schedule measured for a shape class.
struct TuningMeasurement {
  std::string schedule;
  double gflops = 0.0;  // geometric mean of the class's cases; 0 when it did not pass
  std::string status;   // "passed", or why not (the first failing row's status and note)
};

// A class's schedule, and a measurement's, that stands for each case's own
// analytic route (mlir_backend::chooseRoute) rather than one schedule.
inline constexpr const char* kAnalyticSchedule = "analytic";

struct TunedClass {
  std::string isa;          // the run's cap it was tuned under, as toString(Isa) spells it
  std::string shape_class;  // shapeClassOf
  // The chosen schedule's name, or kAnalyticSchedule where nothing beat the
  // analytic routes: the class then keeps them, each case its own.
  std::string schedule;
  std::vector<std::string> analytic_schedules;  // each case's analytic route, as `cases`
  double gflops = 0.0;           // of `schedule`, in the confirming measurement
  double analytic_gflops = 0.0;  // of the analytic routes, same measurement
  std::string suite;
  std::vector<std::string> cases;
  std::vector<TuningMeasurement> measured;  // every candidate, in the order measured

  bool keepsAnalytic() const { return schedule == kAnalyticSchedule; }
};

struct Tuning {
  TuningHost host;
  std::string llvm_version;
  std::string nkbench_version;
  std::string created;  // ISO 8601, UTC, of the last tuning written into it
  std::vector<TunedClass> classes;

  const TunedClass* find(const std::string& isa, const std::string& shape_class) const;
  // Adds `tuned`, replacing the class of the same ISA and shape class.
  void put(TunedClass tuned);
};

// Throws nkbench::Error naming the file and the key on any unreadable or ill-typed content.
Tuning readTuningFile(const std::filesystem::path& path);
// The same for a file's text; `display_name` names it in errors.
Tuning parseTuning(const std::string& text, const std::string& display_name);
// The file's text, as writeTuningFile writes it.
std::string tuningText(const Tuning& tuning);
// Atomically (a reader sees the old file or the new one); creates the directory.
void writeTuningFile(const std::filesystem::path& path, const Tuning& tuning);

// Why a tuning does not hold for `here` (another CPU, other ISA flags or caches), or nullopt.
std::optional<std::string> tuningHostMismatch(const TuningHost& tuned, const TuningHost& here);

// The file $NKBENCH_TUNING names (set, and neither "none" nor "auto"), or nullopt.
std::optional<std::filesystem::path> environmentTuningPath();

// Whether $NKBENCH_TUNING is "none": tuning switched off.
bool environmentSwitchesTuningOff();

// environmentTuningPath(), else $XDG_CACHE_HOME/nkbench/tuning.json, else
// ~/.cache/nkbench/tuning.json.
std::filesystem::path defaultTuningPath();

}  // namespace nkbench
