#include "kernels/mlir/kernel_problem.h"

#include "kernels/mlir/amx/amx_payload_ir.h"
#include "reference/vnni_packing.h"

namespace nkbench::mlir_backend {

namespace {
std::int64_t roundUp(std::int64_t value, std::int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }
}  // namespace

GemmBlocking gemmBlockingFor(const Problem& gemm, const Schedule& schedule) {
  if (schedule.nanokernel == NanokernelKind::AmxTile) {
    // Whole tiles: the blocked GEMM pads the edges with zeros.
    GemmBlocking blocking = chooseGemmBlocking(gemm, schedule.gemm_block, schedule.block_m, schedule.block_n);
    return {roundUp(blocking.bm, kAmxTileRows), roundUp(blocking.bn, kAmxTileCols), roundUp(blocking.bk, kAmxTileK)};
  }
  if (schedule.nanokernel != NanokernelKind::Bf16Dot)
    return chooseGemmBlocking(gemm, schedule.gemm_block, schedule.block_m, schedule.vector_lanes);
  GemmBlocking blocking = chooseBf16GemmBlocking(gemm, schedule.gemm_block, schedule.block_m, schedule.vector_lanes);
  blocking.bn = dotPaddedN(blocking.bn);
  return blocking;
}

Problem kernelProblemFor(const Problem& problem, const Schedule& schedule) {
  if (problem.kind == OpKind::Gemm) return blockProblemOf(problem, gemmBlockingFor(problem, schedule));
  Problem pairs = problem;
  if (schedule.nanokernel == NanokernelKind::AmxTile) {
    pairs.k = roundUp(problem.k, kAmxTileK);
    return pairs;
  }
  if (schedule.nanokernel != NanokernelKind::Bf16Dot) return problem;
  pairs.k = vnniPaddedK(problem.k);
  pairs.n = dotPaddedN(problem.n);
  return pairs;
}

}  // namespace nkbench::mlir_backend
