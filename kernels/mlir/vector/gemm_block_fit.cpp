#include "kernels/mlir/vector/gemm_block_fit.h"

#include <algorithm>

namespace nkbench::mlir_backend {

namespace {
constexpr std::int64_t kWidestColumnBlock = 4;

// Bytes of the A and B panels one block call reads over all of K, and their budget.
std::int64_t panelBytes(const Problem& gemm, const Schedule& schedule, std::int64_t rows, std::int64_t columns) {
  const std::int64_t a_bytes = readsAInF32(gemm.dtype, schedule.nanokernel) ? 4 : 2;
  const std::int64_t b_bytes = gemm.dtype == DType::BF16 ? 2 : 4;
  return (std::min(rows, gemm.m) * a_bytes + std::min(columns, gemm.n) * b_bytes) * gemm.k;
}
std::int64_t panelBudget(const CacheSizes& caches) { return caches.l2_bytes / 4 * 3; }
}  // namespace

GemmBlocking fittedGemmBlock(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches) {
  GemmBlocking block = schedule.gemm_block;
  if (schedule.gemm_block_given || schedule.nanokernel == NanokernelKind::AmxTile) return block;
  const std::int64_t least_rows = 2 * schedule.block_m;
  while (panelBytes(gemm, schedule, block.bm, block.bn) > panelBudget(caches) && block.bm > least_rows)
    block.bm = std::max(least_rows, block.bm / 2 / schedule.block_m * schedule.block_m);
  return block;
}

std::int64_t leastPaddedWidth(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches,
                              std::int64_t rows, std::int64_t width) {
  const auto padded = [&](std::int64_t w) { return blockCount(gemm.n, w) * w; };
  const auto fits = [&](std::int64_t w) { return panelBytes(gemm, schedule, rows, w) <= panelBudget(caches); };
  const std::int64_t widest = kWidestColumnBlock * width;
  std::int64_t best = width;
  for (std::int64_t w = (width / schedule.block_n + 1) * schedule.block_n; w <= widest; w += schedule.block_n)
    if (padded(w) < padded(best) && fits(w)) best = w;
  const std::int64_t whole = padded(schedule.vector_lanes);
  return whole <= widest && whole < padded(best) && fits(whole) ? whole : best;
}

}  // namespace nkbench::mlir_backend
