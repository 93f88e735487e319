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

void printRow(Isa isa, std::string_view kind, const CpuFeatures& features, double ghz,
              double (*measure)(Isa)) {
  if (!features.has(isa)) {
    std::cout << row(toString(isa), kind, "not on host", "-");
    return;
  }
  const double gflops = measure(isa);
  std::cout << row(toString(isa), kind, fmt::format("{:.1f}", gflops),
                   fmt::format("{:.1f}", gflops / ghz));
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
  printRow(Isa::Avx2, "fp32 FMA", features, ghz, measureFp32PeakGflops);
  printRow(Isa::Avx512, "fp32 FMA", features, ghz, measureFp32PeakGflops);
  printRow(Isa::Avx512Bf16, "bf16 dot", features, ghz,
           [](Isa) { return measureBf16DotPeakGflops(); });
  printRow(Isa::Amx, "bf16 tile", features, ghz, [](Isa) { return measureAmxBf16PeakGflops(); });
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
