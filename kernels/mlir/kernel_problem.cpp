#include "kernels/mlir/kernel_problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "kernels/common/thread_split.h"
#include "kernels/mlir/amx/amx_payload_ir.h"
#include "kernels/mlir/vector/gemm_block_fit.h"
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

}  // namespace

GemmBlocking gemmBlockingFor(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches, int threads) {
  if (schedule.nanokernel == NanokernelKind::AmxTile) return amxGemmBlocking(gemm, schedule, caches, threads);
  // Few C blocks: fewer rows first, so that each block keeps whole register blocks' width.
  const GemmBlocking least{schedule.block_m, schedule.block_n, schedule.gemm_block.bk};
  const bool dot = schedule.nanokernel == NanokernelKind::Bf16Dot;
  const auto balanced = [&](const GemmBlocking& block) {
    GemmBlocking blocking = dot ? chooseBf16GemmBlocking(gemm, block, schedule.block_m, schedule.vector_lanes)
                                : chooseGemmBlocking(gemm, block, schedule.block_m, schedule.vector_lanes);
    // Whole vectors: a whole block's VNNI B rows are its columns (vnniBColumns),
    // and an edge block's, rounded up to whole vectors, stay within them.
    if (dot) blocking.bn = roundUp(blocking.bn, schedule.vector_lanes);
    return blocking;
  };
  const GemmBlocking fitted = fittedGemmBlock(gemm, schedule, caches);
  const GemmBlocking narrow = blockingForThreads(gemm, fitted, least, threads, NarrowFirst::Rows, balanced);
  if (schedule.gemm_block_given) return narrow;  // a named block is used as given
  // Columns widened where that pads N less: the narrow blocks' edge block
  // would read its A panel again for a few columns (the edge kernels compute
  // no zeros, but a padded N is what such an edge costs). Wider blocks are
  // fewer, so rows narrow for the threads' share as far as they need. Taken
  // where that pads the GEMM less than the narrow blocks, and never narrower
  // than they are (f32 300x70x200 on 2 threads: 32x80 blocks, not 64x32).
  const auto widened = [&](const GemmBlocking& block) {
    GemmBlocking blocking = balanced(block);
    blocking.bn = leastPaddedWidth(gemm, schedule, caches, blocking.bm, blocking.bn);
    return blocking;
  };
  const GemmBlocking wide = blockingForThreads(gemm, fitted, least, threads, NarrowFirst::Rows, widened);
  const auto padded_area = [&](const GemmBlocking& b) {
    return blockCount(gemm.m, b.bm) * b.bm * blockCount(gemm.n, b.bn) * b.bn;
  };
  const bool pads_less = padded_area(wide) < padded_area(narrow) && wide.bn > narrow.bn;
  return pads_less && sharesOutEvenly(gemm, wide, threads) ? wide : narrow;
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
  if (problem.kind == OpKind::Gemm) {
    const GemmBlocking blocking = gemmBlockingFor(problem, schedule, caches, threads);
    const BlockEdges edges = gemmBlockEdgesFor(schedule);
    return blockProblemOf(problem, blocking, blockShapesOf(problem, blocking, edges).front(), edges);
  }
  Problem pairs = problem;
  if (problem.m >= 1) pairs.m = brgemmPanels(problem, schedule, threads).front().rows;  // the first panel's
  if (schedule.nanokernel == NanokernelKind::AmxTile) {
    pairs.k = roundUp(problem.k, kAmxTileK);
    return pairs;
  }
  if (schedule.nanokernel != NanokernelKind::Bf16Dot) return pairs;
  pairs.k = vnniPaddedK(problem.k);
  return pairs;
}

bool sumsBf16COnTheStack(const Problem& problem, const Schedule& schedule) {
  return problem.kind == OpKind::Brgemm && problem.c_dtype == DType::BF16 &&
         schedule.nanokernel != NanokernelKind::AmxTile;
}

std::int64_t bf16CSumRows(const Problem& problem) { return kMaxBf16CSumBytes / (problem.n * std::int64_t{sizeof(float)}); }

std::optional<std::string> bf16CSumUnsupported(const Problem& problem, const Schedule& schedule) {
  if (!sumsBf16COnTheStack(problem, schedule) || bf16CSumRows(problem) >= 1) return std::nullopt;
  return fmt::format("mlir: the f32 sum of a bf16 C is kept on the kernel's stack, at most {} KiB; one row of N = {} "
                     "needs more",
                     kMaxBf16CSumBytes / 1024, problem.n);
}

std::vector<RowPanel> brgemmPanels(const Problem& brgemm, const Schedule& schedule, int threads) {
  const std::vector<RowPanel> panels = brgemmThreadPanels(brgemm.m, threads);
  const std::int64_t fit = bf16CSumRows(brgemm);
  if (!sumsBf16COnTheStack(brgemm, schedule) || fit < 1) return panels;  // no row fits: the case is refused
  return cutRowPanels(panels, fit >= schedule.block_m ? fit / schedule.block_m * schedule.block_m : fit,
                      schedule.block_m);
}

std::int64_t vnniBColumns(const Problem& kernel_problem, const Schedule& schedule) {
  return dotPackedColumns(kernel_problem.n, vnniBColumnMultiple(schedule));
}

std::int64_t vnniBColumnMultiple(const Schedule& schedule) {
  return schedule.nanokernel == NanokernelKind::Bf16Dot ? schedule.vector_lanes : 1;
}

BlockEdges gemmBlockEdgesFor(const Schedule& schedule) {
  return schedule.nanokernel == NanokernelKind::AmxTile ? BlockEdges::Padded : BlockEdges::Exact;
}

}  // namespace nkbench::mlir_backend
