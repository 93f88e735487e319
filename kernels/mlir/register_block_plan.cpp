#include "kernels/mlir/register_block_plan.h"

#include <algorithm>

namespace nkbench::mlir_backend {
namespace {

std::vector<ColumnPanel> planPanels(std::int64_t n, std::int64_t block_cols, std::int64_t lanes) {
  std::vector<ColumnPanel> panels;
  const std::int64_t full = n / block_cols * block_cols;
  if (full > 0) panels.push_back({0, full, block_cols, lanes});
  const std::int64_t vector_part = (n - full) / lanes * lanes;
  if (vector_part > 0) panels.push_back({full, vector_part, vector_part, lanes});
  const std::int64_t tail = n - full - vector_part;
  if (tail > 0) panels.push_back({full + vector_part, tail, tail, tail});
  return panels;
}

}  // namespace

RegisterBlockPlan planRegisterBlocks(const Problem& problem, const Schedule& schedule, const CacheSizes& caches) {
  RegisterBlockPlan plan;
  const std::int64_t bytes_per_batch = (problem.m * problem.k + problem.k * problem.n) * std::int64_t(sizeof(float));
  const std::int64_t budget = problem.n > schedule.block_n ? caches.l1d_bytes / 2 : caches.l2_bytes / 2;
  if (problem.batch > 1 && bytes_per_batch * problem.batch > budget) {
    const std::int64_t chunk = std::max<std::int64_t>(1, budget / bytes_per_batch);
    if (chunk < problem.batch) plan.batch_chunk = chunk;
  }
  const std::int64_t full_rows = problem.m / schedule.block_m * schedule.block_m;
  if (full_rows > 0)
    plan.bands.push_back({0, full_rows, schedule.block_m,
                          planPanels(problem.n, schedule.block_n, schedule.vector_lanes)});
  const std::int64_t rest = problem.m - full_rows;
  if (rest > 0) {
    // Fewer rows per block: spend the unused accumulators on more columns.
    const std::int64_t vectors_per_row = std::max<std::int64_t>(1, schedule.accumulators() / rest);
    const std::int64_t block_cols = vectors_per_row * schedule.vector_lanes;
    plan.bands.push_back({full_rows, rest, rest, planPanels(problem.n, block_cols, schedule.vector_lanes)});
  }
  return plan;
}

}  // namespace nkbench::mlir_backend
