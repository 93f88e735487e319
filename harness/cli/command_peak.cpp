#include <fmt/format.h>

#include <iostream>

#include "harness/cli/commands.h"
#include "harness/core/isa.h"
#include "harness/host/clock.h"
#include "harness/host/peak.h"
#include "harness/host/pinning.h"

namespace nkbench::cli {
namespace {

int peak() {
  std::string pin_error;
  pinCurrentThreadToCpu(currentCpu(), &pin_error);
  const CpuFeatures features = detectCpuFeatures();
  const double ghz = measureCoreClockGhz();
  std::cout << fmt::format("{}\nmeasured core clock: {:.2f} GHz (one core, pinned)\n", features.brand, ghz);
  std::cout << fmt::format("{:<12} {:>14} {:>12}\n", "isa", "fp32 GFLOPS", "FLOP/cycle");
  bool any = false;
  // One fp32 FMA figure per vector width: AVX2 (ymm) and AVX-512 (zmm).
  for (Isa isa : {Isa::Avx2, Isa::Avx512}) {
    if (!features.has(isa)) {
      std::cout << fmt::format("{:<12} {:>14} {:>12}\n", toString(isa), "not on host", "-");
      continue;
    }
    const double gflops = measureFp32PeakGflops(isa);
    std::cout << fmt::format("{:<12} {:>14.1f} {:>12.1f}\n", toString(isa), gflops, gflops / ghz);
    any = true;
  }
  if (!any) std::cout << "this host has no AVX2+FMA: nkbench cannot run kernels here\n";
  return kExitOk;
}

}  // namespace

void addPeakCommand(CLI::App& app, Action& action) {
  CLI::App* cmd = app.add_subcommand("peak", "Measure the per-core fp32 FMA peak for each ISA the host has");
  cmd->callback([&action] { action = peak; });
}

}  // namespace nkbench::cli
