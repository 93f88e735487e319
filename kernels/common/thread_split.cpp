#include "kernels/common/thread_split.h"

#include <fmt/format.h>

#include <algorithm>

#include "operands/packing.h"

namespace nkbench {

std::vector<RowPanel> brgemmThreadPanels(std::int64_t m, int threads) {
  if (threads <= 1 || m < 1) return {{0, std::max<std::int64_t>(m, 0), 0}};
  constexpr std::int64_t unit = kThreadPanelRowUnit;
  if (m <= (threads - 1) * unit) return rowPanels(m, unit);  // too short: fewer panels than threads
  std::vector<RowPanel> panels;
  std::int64_t first = 0;
  for (int thread = 0; thread + 1 < threads; ++thread) {
    // The multiple nearest to an even share of the rows left (the lower on a
    // tie), leaving each later panel a unit and the last at least a row.
    const std::int64_t left = m - first, panels_left = threads - thread;
    const std::int64_t lower = std::max(unit, left / panels_left / unit * unit);
    std::int64_t rows = (left - lower * panels_left) * 2 > unit * panels_left ? lower + unit : lower;
    rows = std::min(rows, (left - 1 - (panels_left - 2) * unit) / unit * unit);
    panels.push_back({first, rows, thread});
    first += rows;
  }
  panels.push_back({first, m - first, threads - 1});
  return panels;
}

std::optional<std::string> brgemmThreadsUnsupported(const std::string& backend, const Problem& problem, int threads) {
  // Rows below 1 are the size checks' to name.
  if (problem.kind != OpKind::Brgemm || threads <= 1 || problem.m < 1) return std::nullopt;
  const std::size_t panels = brgemmThreadPanels(problem.m, threads).size();
  if (panels >= std::size_t(threads)) return std::nullopt;
  return fmt::format("{}: {} threads share out a BRGEMM's C rows in panels of whole multiples of {} rows (the last "
                     "the rest), and its {} row{} make{} {}",
                     backend, threads, kThreadPanelRowUnit, problem.m, problem.m == 1 ? "" : "s",
                     problem.m == 1 ? "s" : "", panels == 1 ? std::string("one") : fmt::format("only {}", panels));
}

bool sharesOutEvenly(const Problem& gemm, const GemmBlocking& blocking, int threads) {
  const std::int64_t blocks = blockCount(gemm.m, blocking.bm) * blockCount(gemm.n, blocking.bn);
  const std::int64_t turns = blockCount(blocks, threads) * threads;
  return 8 * (turns - blocks) <= turns;
}

GemmBlocking blockingForThreads(const Problem& gemm, GemmBlocking preferred, const GemmBlocking& least, int threads,
                                NarrowFirst first, const std::function<GemmBlocking(const GemmBlocking&)>& choose) {
  GemmBlocking blocking = choose(preferred);
  // Halved from the blocks chosen, not from a preferred block wider than the GEMM.
  preferred.bm = std::min(preferred.bm, blocking.bm);
  preferred.bn = std::min(preferred.bn, blocking.bn);
  const auto halve = [](std::int64_t& extent, std::int64_t multiple) {
    if (extent <= multiple) return false;
    extent = std::max(multiple, extent / 2 / multiple * multiple);
    return true;
  };
  while (!sharesOutEvenly(gemm, blocking, threads)) {
    const bool narrowed = first == NarrowFirst::Rows
                              ? halve(preferred.bm, least.bm) || halve(preferred.bn, least.bn)
                              : halve(preferred.bn, least.bn) || halve(preferred.bm, least.bm);
    if (!narrowed) break;
    blocking = choose(preferred);
  }
  return blocking;
}

}  // namespace nkbench
