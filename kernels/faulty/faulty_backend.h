// A test backend whose kernel goes wrong on purpose, to check that the runner
// contains it (isolated_case.h): it crashes, hangs, or reads or writes outside
// its operands at a chosen stage, on the cases chosen, and elsewhere computes
// correct results (a plain loop) so that its rows verify. Not in the default
// backends: name it with --backends. What goes wrong comes from the
// environment, NKBENCH_FAULTY=KIND@STAGE[:REGEX]:
//   KIND   segv | ill | fpe | bus | abort | hang | oob-write | oob-read
//          (oob-write: one byte past C's end; oob-read: a page past B's end)
//   STAGE  compile | verify | time
//   REGEX  matched against the case's problem ("brgemm f32 8x32x32 b4 beta=0");
//          every case when absent.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "kernels/backend.h"

namespace nkbench {

struct FaultPlan {
  enum class Kind { Segv, Ill, Fpe, Bus, Abort, Hang, OobWrite, OobRead };
  enum class Stage { Compile, Verify, Time };
  Kind kind = Kind::Segv;
  Stage stage = Stage::Verify;
  std::string problem_regex;  // empty: every problem
};

// Throws nkbench::Error naming what is wrong with `spec`.
FaultPlan parseFaultPlan(const std::string& spec);

// The plan from NKBENCH_FAULTY, or no fault at all when it is unset.
std::unique_ptr<Backend> makeFaultyBackend(const BackendConfig& config);

}  // namespace nkbench
