#include "kernels/mlir/vector/register_block_plan.h"

#include <algorithm>

namespace nkbench::mlir_backend {
namespace {

// `native_tails`: the tail is cut into halves of the vector width down to 4 lanes
// (the widths the bf16 dot product exists in) instead of one odd-width panel.
std::vector<ColumnPanel> planPanels(std::int64_t n, std::int64_t block_cols, std::int64_t lanes, bool native_tails) {
  std::vector<ColumnPanel> panels;
  const std::int64_t full = n / block_cols * block_cols;
  if (full > 0) panels.push_back({0, full, block_cols, lanes});
  std::int64_t offset = full;
  const std::int64_t vector_part = (n - full) / lanes * lanes;
  if (vector_part > 0) panels.push_back({offset, vector_part, vector_part, lanes});
  offset += vector_part;
  if (native_tails)
    for (std::int64_t width = lanes / 2; width >= 4; width /= 2)
      if (n - offset >= width) {
        panels.push_back({offset, width, width, width});
        offset += width;
      }
  const std::int64_t tail = n - offset;
  if (tail > 0) panels.push_back({offset, tail, tail, tail});
  return panels;
}

// Partial sums enough to give the largest block `min_accumulators` chains, over a
// reduction dimension they divide; none when no dimension allows it.
ReductionSplit planReductionSplit(const Problem& problem, const RegisterBlockPlan& plan, const Schedule& schedule) {
  std::int64_t accumulators = 0;
  for (const RowBand& band : plan.bands)
    for (const ColumnPanel& panel : band.panels)
      accumulators = std::max(accumulators, band.rows * (panel.cols / panel.lanes));
  if (accumulators == 0 || accumulators >= schedule.min_accumulators) return {};
  const std::int64_t wanted = (schedule.min_accumulators + accumulators - 1) / accumulators;
  for (std::int64_t ways = wanted; ways > 1; --ways) {
    if (problem.batch % ways == 0) return {ReductionSplit::Dim::Batch, ways};
    if (problem.k % ways == 0) return {ReductionSplit::Dim::K, ways};
  }
  return {};
}

}  // namespace

RegisterBlockPlan planRegisterBlocks(const Problem& problem, const Schedule& schedule, const CacheSizes& caches) {
  RegisterBlockPlan plan;
  const std::int64_t element_bytes = problem.dtype == DType::BF16 ? 2 : 4;
  const std::int64_t bytes_per_batch = (problem.m * problem.k + problem.k * problem.n) * element_bytes;
  const std::int64_t budget = problem.n > schedule.block_n ? caches.l1d_bytes / 2 : caches.l2_bytes / 2;
  plan.nanokernel = schedule.nanokernel;
  plan.vector_lanes = schedule.vector_lanes;
  // The widening route fuses its bf16 -> f32 conversions into the register loops;
  // chunk loops would need them fused there too: not chunked for now.
  const bool chunkable = !widensInRegisters(schedule.nanokernel);
  if (chunkable && problem.batch > 1 && bytes_per_batch * problem.batch > budget) {
    const std::int64_t chunk = std::max<std::int64_t>(1, budget / bytes_per_batch);
    if (chunk < problem.batch) plan.batch_chunk = chunk;
  }
  const bool native_tails = schedule.nanokernel == NanokernelKind::Bf16Dot;
  const std::int64_t full_rows = problem.m / schedule.block_m * schedule.block_m;
  if (full_rows > 0)
    plan.bands.push_back({0, full_rows, schedule.block_m,
                          planPanels(problem.n, schedule.block_n, schedule.vector_lanes, native_tails)});
  const std::int64_t rest = problem.m - full_rows;
  if (rest > 0) {
    // Fewer rows per block: spend the unused accumulators on more columns.
    const std::int64_t vectors_per_row = std::max<std::int64_t>(1, schedule.accumulators() / rest);
    const std::int64_t block_cols = vectors_per_row * schedule.vector_lanes;
    plan.bands.push_back({full_rows, rest, rest, planPanels(problem.n, block_cols, schedule.vector_lanes, native_tails)});
  }
  // The bf16 routes have no partial-sum form yet: their blocks are not split.
  if (schedule.nanokernel == NanokernelKind::Fma) plan.split = planReductionSplit(problem, plan, schedule);
  if (plan.split.ways > 1) plan.batch_chunk = 0;
  return plan;
}

}  // namespace nkbench::mlir_backend
