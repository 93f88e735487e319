#include "kernels/mlir/kernel_problem.h"

#include <algorithm>
#include <numeric>

#include "kernels/common/thread_split.h"
#include "kernels/mlir/amx/amx_payload_ir.h"
#include "kernels/mlir/vector/payload_ir.h"
#include "operands/vnni_packing.h"

namespace nkbench::mlir_backend {

namespace {
std::int64_t roundUp(std::int64_t value, std::int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

GemmBlocking amxGemmBlocking(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches, int threads) {
  constexpr std::int64_t kBf16Bytes = 2;
  GemmBlocking preferred = schedule.gemm_block;
  const std::int64_t panel_columns = caches.l2_bytes / 4 / (roundUp(gemm.k, kAmxTileK) * kBf16Bytes);
  preferred.bn = std::max(preferred.bn, panel_columns / schedule.block_n * schedule.block_n);
  // Few C blocks: narrower panels first, which each thread reads less of.
  const GemmBlocking least{schedule.block_m, schedule.gemm_block.bn, schedule.gemm_block.bk};
  return blockingForThreads(gemm, preferred, least, threads, NarrowFirst::Columns, [&](const GemmBlocking& block) {
    // Whole tiles: the blocked GEMM pads the edges with zeros.
    const GemmBlocking blocking = chooseGemmBlocking(gemm, block, schedule.block_m, schedule.block_n);
    return GemmBlocking{roundUp(blocking.bm, kAmxTileRows), roundUp(blocking.bn, kAmxTileCols),
                        roundUp(blocking.bk, kAmxTileK)};
  });
}

// The vector routes' preferred block with its rows halved, in whole register
// blocks and down to two of them, until the A and B panels that one block call
// reads over all of K fit three quarters of L2 together. Each register band of
// the call reads the whole B panel again, and the M blocks outer order reads
// the A panel again for every N block: where both stay in L2, neither is read
// from L3 more than once.
GemmBlocking vectorBlockFittedToL2(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches) {
  GemmBlocking block = schedule.gemm_block;
  if (schedule.gemm_block_given) return block;
  const bool a_bf16 = schedule.nanokernel == NanokernelKind::Bf16Dot ||
                      schedule.nanokernel == NanokernelKind::Bf16WidenFma;
  const std::int64_t a_bytes = a_bf16 ? 2 : 4;
  const std::int64_t b_bytes = gemm.dtype == DType::BF16 ? 2 : 4;
  const std::int64_t budget = caches.l2_bytes / 4 * 3;
  auto panels = [&](std::int64_t rows) { return (rows * a_bytes + block.bn * b_bytes) * gemm.k; };
  while (panels(block.bm) > budget && block.bm / 2 >= 2 * schedule.block_m &&
         block.bm / 2 % schedule.block_m == 0)
    block.bm /= 2;
  return block;
}
}  // namespace

GemmBlocking gemmBlockingFor(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches, int threads) {
  if (schedule.nanokernel == NanokernelKind::AmxTile) return amxGemmBlocking(gemm, schedule, caches, threads);
  // Few C blocks: fewer rows first, so that each block keeps whole register blocks' width.
  const GemmBlocking least{schedule.block_m, schedule.block_n, schedule.gemm_block.bk};
  const bool dot = schedule.nanokernel == NanokernelKind::Bf16Dot;
  return blockingForThreads(gemm, vectorBlockFittedToL2(gemm, schedule, caches), least, threads, NarrowFirst::Rows,
                            [&](const GemmBlocking& block) {
                              if (!dot) return chooseGemmBlocking(gemm, block, schedule.block_m, schedule.vector_lanes);
                              GemmBlocking blocking =
                                  chooseBf16GemmBlocking(gemm, block, schedule.block_m, schedule.vector_lanes);
                              // Whole vectors: the blocked GEMM pads B and C blocks with zeros, so its block
                              // kernel has no edge.
                              blocking.bn = roundUp(blocking.bn, schedule.vector_lanes);
                              return blocking;
                            });
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
