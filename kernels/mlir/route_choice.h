// Which schedule a case runs: a named one, a tuned one for its shape class, or
// the analytic default, and under an AMX cap whether a bf16 case takes the tile
// kernels or the vector (dot-product) kernels where the tiles would mostly
// compute padding. One rule, kept here, so that `run`, `list` and `show` agree.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "harness/core/isa.h"
#include "harness/core/problem.h"
#include "harness/host/cache_info.h"
#include "kernels/mlir/schedule/schedule.h"

namespace nkbench::mlir_backend {

// Tile route when at least this share of the padded tile work is the case's own.
// Measured on a Sapphire Rapids-class VM (shared/notes/hosts.md, one core): at
// 2-6% useful work (7x33x6 b1, 5x100x2 b9, 7x36x5 b2) the tiles ran 15-24 GFLOPS
// against 53-99 on the dot-product route; at 50% (8x32x32 b32) 916 against at
// most the dot peak of 123. The threshold sits between, nearer the losses.
inline constexpr double kMinTileUtilisation = 0.25;

// M*N*K over the work of the tiles that cover it: M and N rounded up to whole
// 16-row and 16-column tiles, K to whole 32-deep tile steps.
double tileUtilisation(const Problem& problem);

// Schedules a tuning file chose for the run's ISA level, by shape class (shape_class.h).
struct TunedSchedules {
  std::string file;                            // where they were read from
  std::map<std::string, std::string> by_class;  // shape class -> schedule name
};

// Measured single-core peaks of this host (harness/host/peak.h); 0: not measured.
struct HostPeaks {
  double fp32_fma_gflops = 0.0;
  double bf16_dot_gflops = 0.0;
};

// Where vdpbf16ps does fewer FLOPs than f32 FMAs (a Sapphire Rapids-class VM:
// 123 against 247 GFLOPS, shared/notes/hosts.md), bf16 runs faster as f32 FMAs
// on A widened once when packed (Bf16F32AFma), bound by the FMA ports. Fewer
// by a quarter: the two peaks are measured, and a measurement that another
// process shared the core with must not flip the route (the Zen 5-class VM,
// whose dot peak is twice its FMA peak, measured it at 0.88x under load).
inline constexpr double kSlowDotFraction = 0.75;
bool bf16DotSlowerThanFma(const HostPeaks& peaks);

struct RouteRequest {
  std::string named_schedule;             // --schedule; empty: none
  const TunedSchedules* tuned = nullptr;  // nullptr: no tuning file
  CacheSizes caches;                      // the host's: they decide the shape class
  HostPeaks peaks;                        // decide the bf16 vector route (bf16DotSlowerThanFma)
};

struct RouteChoice {
  Schedule schedule;
  std::string reason;  // why the vector route was taken under an AMX cap; empty otherwise
  std::string source;  // "--schedule", "tuned: FILE" or "analytic"
};

// The schedule an mlp runs for the schedule `name`: the same, except that the
// f32-A route (bf16-f32a), which would widen every layer's activations again,
// gives way to the widening route (bf16-widen) of the same blocks and settings.
std::string scheduleAnMlpRuns(std::string name);

// Why `backend` skips `problem` under `schedule`, or nullopt: :epilogue=separate
// runs an mlp's bias add and activation as passes (the comparison for the
// fused epilogue); a case without them would run its usual kernel under a
// name that says otherwise. `run` and `show` ask it alike.
std::optional<std::string> separateEpilogueUnsupported(const std::string& backend, const Problem& problem,
                                                       const Schedule& schedule);

// The schedule for `problem` under cap `isa`: a named one as is (selectSchedule);
// else the tuned one of its shape class, where the tuning has one; else the
// cap's default, except that under amx or amx-emulated a bf16 case whose
// tileUtilisation is below kMinTileUtilisation takes the best vector schedule,
// and that the bf16 dot product gives way to the f32 FMAs on A widened when
// packed where bf16DotSlowerThanFma. An mlp takes the schedule tuned for its
// own shape class, else its first layer's route (never its tuned one), with its
// epilogue fused into the blocks (bf16 widened in registers, not A widened once
// when packed).
// Throws nkbench::Error as selectSchedule does.
RouteChoice chooseRoute(Isa isa, const Problem& problem, const RouteRequest& request);
RouteChoice chooseRoute(Isa isa, const Problem& problem, const std::string& named_schedule = "");

}  // namespace nkbench::mlir_backend
