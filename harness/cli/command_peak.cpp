#include <fmt/format.h>

#include <iostream>
#include <string>
#include <string_view>

#include "harness/cli/commands.h"
#include "harness/core/isa.h"
#include "harness/host/clock.h"
#include "harness/host/peak.h"
#include "harness/host/pinning.h"

namespace nkbench::cli {
namespace {

std::string row(std::string_view isa, std::string_view kind, std::string_view gflops,
                std::string_view per_cycle) {
  return fmt::format("{:<12} {:<9} {:>12} {:>11}\n", isa, kind, gflops, per_cycle);
}

// The most FLOP per cycle an x86 core has done for each kind: two FMA (or dot
// product) ports, eight fp32 lanes a ymm, sixteen a zmm, a vdpbf16ps twice an
// FMA's; one AMX tile unit's 16x16x32 bf16 products per 16 cycles.
double mostFlopPerCycle(Isa isa) {
  switch (isa) {
    case Isa::Avx2: return 32;
    case Isa::Avx512: return 64;
    case Isa::Avx512Bf16: return 128;
    default: return 1024;
  }
}

// True where the figure is more than a core can do: the clock measured low.
bool printRow(Isa isa, std::string_view kind, const CpuFeatures& features, double ghz, double (*measure)(Isa)) {
  if (!features.has(isa)) {
    std::cout << row(toString(isa), kind, "not on host", "-");
    return false;
  }
  const double gflops = measure(isa);
  std::cout << row(toString(isa), kind, fmt::format("{:.1f}", gflops), fmt::format("{:.1f}", gflops / ghz));
  return gflops / ghz > 1.03 * mostFlopPerCycle(isa);
}

int peak() {
  std::string pin_error;
  pinCurrentThreadToCpu(currentCpu(), &pin_error);
  const CpuFeatures features = detectCpuFeatures();
  const double ghz = measureCoreClockGhz();
  std::cout << fmt::format("{}\nmeasured core clock: {:.2f} GHz (one core, pinned)\n", features.brand, ghz);
  std::cout << row("isa", "kind", "GFLOPS", "FLOP/cycle");
  // One fp32 FMA figure per vector width, AVX2 (ymm) and AVX-512 (zmm), then
  // the bf16 dot product (vdpbf16ps, zmm), which bf16 kernels are judged against,
  // and the AMX tiles (tdpbf16ps), which they are judged against under --isa amx.
  bool past_most = printRow(Isa::Avx2, "fp32 FMA", features, ghz, measureFp32PeakGflops);
  past_most |= printRow(Isa::Avx512, "fp32 FMA", features, ghz, measureFp32PeakGflops);
  past_most |= printRow(Isa::Avx512Bf16, "bf16 dot", features, ghz, [](Isa) { return measureBf16DotPeakGflops(); });
  past_most |= printRow(Isa::Amx, "bf16 tile", features, ghz, [](Isa) { return measureAmxBf16PeakGflops(); });
  if (past_most)
    std::cout << "note: FLOP/cycle above what a core can do (32 ymm, 64 zmm, 128 bf16 dot): the clock was measured "
                 "while the machine was busy or clocked down; rerun on a quiet machine\n";
  if (!features.has(Isa::Avx2)) std::cout << "this host has no AVX2+FMA: nkbench cannot run kernels here\n";
  return kExitOk;
}

}  // namespace

void addPeakCommand(CLI::App& app, Action& action) {
  CLI::App* cmd = app.add_subcommand(
      "peak", "Measure the per-core fp32 FMA, bf16 dot-product and AMX tile peaks for each ISA the host has");
  cmd->callback([&action] { action = peak; });
}

}  // namespace nkbench::cli
