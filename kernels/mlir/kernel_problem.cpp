#include "kernels/mlir/kernel_problem.h"

#include "reference/vnni_packing.h"

namespace nkbench::mlir_backend {

GemmBlocking gemmBlockingFor(const Problem& gemm, const Schedule& schedule) {
  if (schedule.nanokernel != NanokernelKind::Bf16Dot)
    return chooseGemmBlocking(gemm, schedule.gemm_block, schedule.block_m, schedule.vector_lanes);
  GemmBlocking blocking = chooseBf16GemmBlocking(gemm, schedule.gemm_block, schedule.block_m, schedule.vector_lanes);
  blocking.bn = dotPaddedN(blocking.bn);
  return blocking;
}

Problem kernelProblemFor(const Problem& problem, const Schedule& schedule) {
  if (problem.kind == OpKind::Gemm) return blockProblemOf(problem, gemmBlockingFor(problem, schedule));
  if (schedule.nanokernel != NanokernelKind::Bf16Dot) return problem;
  Problem pairs = problem;
  pairs.k = vnniPaddedK(problem.k);
  pairs.n = dotPaddedN(problem.n);
  return pairs;
}

}  // namespace nkbench::mlir_backend
