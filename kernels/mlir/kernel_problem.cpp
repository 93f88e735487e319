#include "kernels/mlir/kernel_problem.h"

#include <algorithm>
#include <numeric>

#include "kernels/mlir/amx/amx_payload_ir.h"
#include "kernels/mlir/vector/payload_ir.h"
#include "reference/packing.h"
#include "reference/vnni_packing.h"

namespace nkbench::mlir_backend {

namespace {
std::int64_t roundUp(std::int64_t value, std::int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// Whether `threads` threads, each taking a contiguous run of the C blocks,
// leave at most an eighth of their block calls' slots idle.
bool sharesOutEvenly(const Problem& gemm, const GemmBlocking& blocking, int threads) {
  const std::int64_t blocks = blockCount(gemm.m, blocking.bm) * blockCount(gemm.n, blocking.bn);
  const std::int64_t slots = blockCount(blocks, threads) * threads;
  return 8 * (slots - blocks) <= slots;
}

GemmBlocking amxGemmBlocking(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches, int threads) {
  constexpr std::int64_t kBf16Bytes = 2;
  const auto blocking_of = [&](std::int64_t bn) {
    GemmBlocking preferred = schedule.gemm_block;
    preferred.bn = bn;
    // Whole tiles: the blocked GEMM pads the edges with zeros.
    const GemmBlocking blocking = chooseGemmBlocking(gemm, preferred, schedule.block_m, schedule.block_n);
    return GemmBlocking{roundUp(blocking.bm, kAmxTileRows), roundUp(blocking.bn, kAmxTileCols),
                        roundUp(blocking.bk, kAmxTileK)};
  };
  const std::int64_t narrowest = schedule.gemm_block.bn;
  const std::int64_t panel_columns = caches.l2_bytes / 4 / (roundUp(gemm.k, kAmxTileK) * kBf16Bytes);
  std::int64_t bn = std::max(narrowest, panel_columns / schedule.block_n * schedule.block_n);
  // Wide panels make few C blocks: halve them until the threads share the blocks evenly.
  while (bn > narrowest && !sharesOutEvenly(gemm, blocking_of(bn), threads))
    bn = std::max(narrowest, bn / 2 / schedule.block_n * schedule.block_n);
  return blocking_of(bn);
}
}  // namespace

GemmBlocking gemmBlockingFor(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches, int threads) {
  if (schedule.nanokernel == NanokernelKind::AmxTile) return amxGemmBlocking(gemm, schedule, caches, threads);
  if (schedule.nanokernel != NanokernelKind::Bf16Dot)
    return chooseGemmBlocking(gemm, schedule.gemm_block, schedule.block_m, schedule.vector_lanes);
  GemmBlocking blocking = chooseBf16GemmBlocking(gemm, schedule.gemm_block, schedule.block_m, schedule.vector_lanes);
  // Whole vectors: the blocked GEMM pads B and C blocks with zeros, so its block kernel has no edge.
  blocking.bn = roundUp(blocking.bn, schedule.vector_lanes);
  return blocking;
}

BlockOrder gemmBlockOrderFor(const Schedule& schedule) {
  return schedule.nanokernel == NanokernelKind::AmxTile ? BlockOrder::NBlocksOuter : BlockOrder::MBlocksOuter;
}

MlpBlocking mlpBlockingFor(const Problem& mlp, const Schedule& schedule) {
  // A layer's K blocks are its input's column blocks: on tiles, whole tile steps.
  const std::int64_t c_multiple = schedule.nanokernel == NanokernelKind::AmxTile
                                      ? std::lcm(schedule.block_n, kAmxTileK)
                                      : schedule.block_n;
  return chooseMlpBlocking(mlp, {schedule.gemm_block.bm, schedule.gemm_block.bn}, schedule.block_m, c_multiple);
}

Problem kernelProblemFor(const Problem& problem, const Schedule& schedule, const CacheSizes& caches, int threads) {
  if (problem.kind == OpKind::Mlp) {
    Problem block = mlpBlockProblem(problem, mlpBlockingFor(problem, schedule), 0);
    if (!schedule.fused_epilogue) block.mlp = MlpLayers{};  // the epilogue runs as passes after the kernels
    return block;
  }
  if (problem.kind == OpKind::Gemm) return blockProblemOf(problem, gemmBlockingFor(problem, schedule, caches, threads));
  Problem pairs = problem;
  if (schedule.nanokernel == NanokernelKind::AmxTile) {
    pairs.k = roundUp(problem.k, kAmxTileK);
    return pairs;
  }
  if (schedule.nanokernel != NanokernelKind::Bf16Dot) return problem;
  pairs.k = vnniPaddedK(problem.k);
  return pairs;
}

std::int64_t vnniBColumns(const Problem& kernel_problem, const Schedule& schedule) {
  if (schedule.nanokernel != NanokernelKind::Bf16Dot) return kernel_problem.n;
  return dotPackedColumns(kernel_problem.n, schedule.vector_lanes);
}

}  // namespace nkbench::mlir_backend
