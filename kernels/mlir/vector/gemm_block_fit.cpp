#include "kernels/mlir/vector/gemm_block_fit.h"

#include <algorithm>

namespace nkbench::mlir_backend {

GemmBlocking fittedGemmBlock(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches) {
  GemmBlocking block = schedule.gemm_block;
  if (schedule.gemm_block_given || schedule.nanokernel == NanokernelKind::AmxTile) return block;
  const std::int64_t a_bytes = readsAInF32(gemm.dtype, schedule.nanokernel) ? 4 : 2;
  const std::int64_t b_bytes = gemm.dtype == DType::BF16 ? 2 : 4;
  const std::int64_t budget = caches.l2_bytes / 4 * 3;
  const auto panels = [&](std::int64_t rows) {
    return (std::min(rows, gemm.m) * a_bytes + std::min(block.bn, gemm.n) * b_bytes) * gemm.k;
  };
  const std::int64_t least_rows = 2 * schedule.block_m;
  while (panels(block.bm) > budget && block.bm > least_rows)
    block.bm = std::max(least_rows, block.bm / 2 / schedule.block_m * schedule.block_m);
  return block;
}

}  // namespace nkbench::mlir_backend
