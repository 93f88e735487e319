#include "kernels/mlir/nanokernel_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace nkbench::mlir_backend {
namespace {
std::int64_t count(const OpCounts& counts, const std::string& op) {
  auto it = counts.find(op);
  return it == counts.end() ? 0 : it->second;
}
}  // namespace

NanokernelExpectation expectedNanokernels(const RegisterBlockPlan& plan) {
  NanokernelExpectation expected;
  for (const RowBand& band : plan.bands)
    for (const ColumnPanel& panel : band.panels) {
      if (panel.lanes > 1)
        expected.fma += plan.split.ways * band.rows * (panel.cols / panel.lanes);
      else
        expected.scalar_tail += plan.split.ways * band.rows;
    }
  return expected;
}

NanokernelEvidence checkNanokernels(Lowering lowering, const RegisterBlockPlan& plan, const OpCounts& scheduled,
                                    const OpCounts& lowered) {
  const NanokernelExpectation expected = expectedNanokernels(plan);
  const std::int64_t fma = count(scheduled, "vector.fma");
  const std::int64_t contracts = count(scheduled, "vector.contract");
  // vector.fma lowers to llvm.intr.fmuladd, which the backend fuses into one FMA instruction.
  const std::int64_t llvm_fma = count(lowered, "llvm.intr.fma") + count(lowered, "llvm.intr.fmuladd");
  NanokernelEvidence evidence;
  if (lowering == Lowering::Nanokernel) {
    evidence.composed = fma == expected.fma && contracts == expected.scalar_tail && llvm_fma >= fma;
    evidence.summary = fmt::format("{}: {} vector.fma (expected {}), {} llvm fma, {} generic contract(s)",
                                   evidence.composed ? "fma-nanokernel" : "NOT-composed", fma, expected.fma,
                                   llvm_fma, contracts);
  } else {
    evidence.composed = false;
    evidence.summary = fmt::format("generic: {} vector.contract lowered upstream, {} vector.fma", contracts, fma);
  }
  return evidence;
}

std::string describeRegisterBlocks(const RegisterBlockPlan& plan) {
  std::vector<std::string> blocks;
  for (const RowBand& band : plan.bands)
    for (const ColumnPanel& panel : band.panels) {
      std::string block = fmt::format("{}x{}", band.rows, panel.cols);
      if (std::find(blocks.begin(), blocks.end(), block) == blocks.end()) blocks.push_back(block);
    }
  return fmt::format("{}", fmt::join(blocks, "+"));
}

}  // namespace nkbench::mlir_backend
