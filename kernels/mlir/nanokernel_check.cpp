#include "kernels/mlir/nanokernel_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "kernels/mlir/amx/amx_payload_ir.h"

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
    for (const ColumnPanel& panel : band.panels)
      for (const BlockPiece& piece : plan.pieces(panel)) {
        const std::int64_t per_row = plan.split.ways * band.rows;
        if (piece.lanes == 1) {
          expected.scalar_tail += per_row * piece.width * plan.kStepCopies();
          continue;
        }
        expected.fma += per_row * piece.vectors() * plan.kStepCopies();
        if (piece.masked) expected.masked += per_row;
      }
  return expected;
}

NanokernelEvidence checkNanokernels(Lowering lowering, const RegisterBlockPlan& plan, const OpCounts& scheduled,
                                    const OpCounts& lowered) {
  const NanokernelExpectation expected = expectedNanokernels(plan);
  const bool bf16 = plan.nanokernel == NanokernelKind::Bf16Dot;
  const char* nanokernel_op = bf16 ? "x86vector.avx512.dot" : "vector.fma";
  const std::int64_t nanokernels = count(scheduled, nanokernel_op);
  const std::int64_t contracts = count(scheduled, "vector.contract");
  // vector.fma lowers to llvm.intr.fmuladd, which the backend fuses into one FMA
  // instruction; the bf16 dot product to the vdpbf16ps intrinsic.
  const std::int64_t lowered_ops =
      bf16 ? count(lowered, "llvm.call_intrinsic:llvm.x86.avx512bf16.dpbf16ps.512") +
                 count(lowered, "llvm.call_intrinsic:llvm.x86.avx512bf16.dpbf16ps.256") +
                 count(lowered, "llvm.call_intrinsic:llvm.x86.avx512bf16.dpbf16ps.128")
           : count(lowered, "llvm.intr.fma") + count(lowered, "llvm.intr.fmuladd");
  // Masked edges: each masked accumulator is stored once, masked.
  const bool masked_edges_lowered =
      expected.masked == 0 || count(lowered, "llvm.intr.masked.store") >= expected.masked;
  const std::string masked =
      expected.masked > 0 ? fmt::format(", {} on masked edges", expected.masked) : std::string();
  NanokernelEvidence evidence;
  if (lowering == Lowering::Nanokernel) {
    evidence.composed = nanokernels == expected.fma && contracts == expected.scalar_tail &&
                        lowered_ops >= nanokernels && masked_edges_lowered;
    evidence.summary = fmt::format("{}: {} {} (expected {}{}), {} lowered, {} generic contract(s)",
                                   !evidence.composed ? "NOT-composed"
                                   : bf16 ? "dot-nanokernel"
                                   : plan.nanokernel == NanokernelKind::Bf16WidenFma ? "widen-fma-nanokernel"
                                   : plan.nanokernel == NanokernelKind::Bf16F32AFma  ? "widen-b-fma-nanokernel"
                                                                                     : "fma-nanokernel",
                                   nanokernels, nanokernel_op, expected.fma, masked, lowered_ops, contracts);
  } else {
    evidence.composed = false;
    evidence.summary = fmt::format("generic: {} vector.contract lowered upstream, {} {}", contracts, nanokernels,
                                   nanokernel_op);
  }
  return evidence;
}

NanokernelEvidence checkAmxTiles(std::int64_t expected_tile_products, const OpCounts& payload,
                                 const OpCounts& lowered) {
  const std::string product = "llvm.call_intrinsic:llvm.x86.tdpbf16ps";
  const std::int64_t products = count(payload, product), lowered_ops = count(lowered, product);
  // Intrinsics LLVM would allocate tiles for, and so configure and release per call.
  std::int64_t managed = 0;
  for (const auto& [name, occurrences] : lowered)
    if (name.starts_with("llvm.call_intrinsic:llvm.x86.t") && name.ends_with(".internal")) managed += occurrences;
  NanokernelEvidence evidence;
  evidence.composed = products == expected_tile_products && lowered_ops == products && managed == 0;
  evidence.summary = fmt::format("{}: {} tdpbf16ps (expected {}), {} lowered, {} on registers LLVM allocates",
                                 evidence.composed ? "amx-tile-nanokernel" : "NOT-composed", products,
                                 expected_tile_products, lowered_ops, managed);
  return evidence;
}

NanokernelEvidence checkEmulatedAmxTiles(std::int64_t expected_tile_products, const OpCounts& payload,
                                         const OpCounts& lowered) {
  const std::string callee = std::string(kAmxEmulatorPrefix) + "tdpbf16ps";
  const std::int64_t products = count(payload, "func.call:@" + callee), calls = count(lowered, "llvm.call:@" + callee);
  std::int64_t amx_intrinsics = 0;
  for (const auto& [name, occurrences] : lowered)
    if (name.starts_with("llvm.call_intrinsic:llvm.x86.t")) amx_intrinsics += occurrences;
  NanokernelEvidence evidence;
  evidence.composed = products == expected_tile_products && calls == products && amx_intrinsics == 0;
  evidence.summary = fmt::format("{}: {} tdpbf16ps (expected {}), {} emulated, {} AMX intrinsics left",
                                 evidence.composed ? "amx-tile-nanokernel" : "NOT-composed", products,
                                 expected_tile_products, calls, amx_intrinsics);
  return evidence;
}

NanokernelEvidence checkAmxEpilogue(const MlpLayers& epilogue, std::int64_t regions, const OpCounts& payload) {
  const std::int64_t bias_adds = count(payload, "arith.addf"), maxima = count(payload, "arith.maximumf");
  const std::int64_t expected_adds = epilogue.bias ? regions : 0;
  const std::int64_t expected_maxima = epilogue.activation == Activation::Relu ? regions : 0;
  NanokernelEvidence evidence;
  evidence.composed = bias_adds == expected_adds && maxima == expected_maxima;
  evidence.summary = fmt::format(
      "epilogue {} {} into {} tile regions' f32 rows after their tile stores: {} bias adds, {} maxima (expected {}, {})",
      epilogue.epilogueText(), evidence.composed ? "fused" : "NOT fused", regions, bias_adds, maxima, expected_adds,
      expected_maxima);
  return evidence;
}

std::string describeRegisterBlocks(const RegisterBlockPlan& plan) {
  std::vector<std::string> blocks;
  for (const RowBand& band : plan.bands)
    for (const ColumnPanel& panel : band.panels) {
      std::string block = fmt::format("{}x{}", band.rows, panel.blockColumns());
      if (std::find(blocks.begin(), blocks.end(), block) == blocks.end()) blocks.push_back(block);
    }
  return fmt::format("{}", fmt::join(blocks, "+"));
}

}  // namespace nkbench::mlir_backend
