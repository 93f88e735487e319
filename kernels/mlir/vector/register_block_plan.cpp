#include "kernels/mlir/vector/register_block_plan.h"

#include <algorithm>
#include <limits>

namespace nkbench::mlir_backend {
namespace {

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

constexpr std::int64_t kFullyUnrolledKSteps = 8;
constexpr std::int64_t kPrefetchLeadCycles = 512;
constexpr std::int64_t kMaxPrefetchDistance = 4;
constexpr std::int64_t kVectorOpsPerCycle = 2;  // FMA or dot-product pipes

// Vector registers a block of `rows` x `vectors` needs: its accumulators, one
// step's B vectors and the broadcast of A.
std::int64_t registersFor(std::int64_t rows, std::int64_t vectors) { return rows * vectors + vectors + 1; }

// Whole blocks of `cols`, then the rest as a lane-multiple panel and one
// narrow panel of one vector.
std::vector<ColumnPanel> narrowPanels(std::int64_t n, std::int64_t cols, std::int64_t lanes) {
  std::vector<ColumnPanel> panels;
  const std::int64_t full = n / cols * cols;
  if (full > 0) panels.push_back({0, full, cols, lanes});
  const std::int64_t vector_part = (n - full) / lanes * lanes;
  if (vector_part > 0) panels.push_back({full, vector_part, vector_part, lanes});
  const std::int64_t tail = n - full - vector_part;
  if (tail > 0) panels.push_back({full + vector_part, tail, tail, tail});
  return panels;
}

// Whole blocks of `vectors` vectors, then the rest as one edge block, which
// takes the last whole block along where `rows` x (both) still fits the registers.
std::vector<ColumnPanel> edgeBlockPanels(const RegisterBlockPlan& plan, std::int64_t n, std::int64_t rows,
                                         std::int64_t vectors, std::int64_t registers) {
  const std::int64_t lanes = plan.vector_lanes;
  const std::int64_t cols = vectors * lanes;
  const std::int64_t whole_blocks = n / cols;
  const std::int64_t rest = n - whole_blocks * cols;
  if (rest == 0) return {{0, n, cols, lanes}};
  auto edge = [&](std::int64_t offset, std::int64_t size) {
    return ColumnPanel{offset, size, ceilDiv(size, lanes) * lanes, lanes};
  };
  std::vector<ColumnPanel> panels;
  const ColumnPanel alone = edge(whole_blocks * cols, rest);
  const ColumnPanel absorbed = edge((whole_blocks - 1) * cols, cols + rest);
  if (whole_blocks > 0 && registersFor(rows, plan.blockVectors(absorbed)) <= registers) {
    if (whole_blocks > 1) panels.push_back({0, (whole_blocks - 1) * cols, cols, lanes});
    panels.push_back(absorbed);
  } else {
    if (whole_blocks > 0) panels.push_back({0, whole_blocks * cols, cols, lanes});
    panels.push_back(alone);
  }
  return panels;
}

// Partial sums enough to give the largest block `min_accumulators` chains, over a
// reduction dimension they divide; none when no dimension allows it.
ReductionSplit planReductionSplit(const Problem& problem, const RegisterBlockPlan& plan, const Schedule& schedule) {
  std::int64_t accumulators = 0;
  for (const RowBand& band : plan.bands)
    for (const ColumnPanel& panel : band.panels)
      accumulators = std::max(accumulators, band.rows * plan.blockVectors(panel));
  if (accumulators == 0 || accumulators >= schedule.min_accumulators) return {};
  const std::int64_t wanted = (schedule.min_accumulators + accumulators - 1) / accumulators;
  for (std::int64_t ways = wanted; ways > 1; --ways) {
    if (problem.batch % ways == 0) return {ReductionSplit::Dim::Batch, ways};
    if (problem.k % ways == 0) return {ReductionSplit::Dim::K, ways};
  }
  return {};
}

// Bands of `rows` over [offset, offset + size), where rows divides size.
RowBand band(std::int64_t offset, std::int64_t size, std::int64_t rows, const std::vector<ColumnPanel>& panels) {
  return {offset, size, rows, panels};
}

// The widening routes: full blocks, then the last rows as one shorter band whose
// blocks widen to keep the schedule's accumulator count; narrow edge panels.
void planNarrowPanelRows(const Problem& problem, const Schedule& schedule, RegisterBlockPlan& plan) {
  const std::int64_t full_rows = problem.m / schedule.block_m * schedule.block_m;
  if (full_rows > 0)
    plan.bands.push_back(
        band(0, full_rows, schedule.block_m, narrowPanels(problem.n, schedule.block_n, schedule.vector_lanes)));
  const std::int64_t rest = problem.m - full_rows;
  if (rest > 0) {
    const std::int64_t vectors_per_row = std::max<std::int64_t>(1, schedule.accumulators() / rest);
    plan.bands.push_back(band(full_rows, rest, rest,
                              narrowPanels(problem.n, vectors_per_row * schedule.vector_lanes, schedule.vector_lanes)));
  }
}

// Vectors per row of the widest of `panels`' blocks (at least 1).
std::int64_t widestBlockVectors(const std::vector<ColumnPanel>& panels, const RegisterBlockPlan& plan) {
  std::int64_t widest = 1;
  for (const ColumnPanel& panel : panels) widest = std::max(widest, plan.blockVectors(panel));
  return widest;
}

// As many rows as the register file holds for the widest of `panels`' blocks
// (at least the schedule's). Where f32 FMA blocks are two vectors or more and
// one is a masked edge, two registers stay spare: at the register file's limit
// LLVM's allocation sent every accumulator to the stack at each K step of
// one-entry BRGEMMs (on the Zen 5 VM, mlir / libxsmm: f32 14x20x32 b1 0.53x in
// 14x20 blocks, 1.05-1.07x in 8x20 + 6x20; 55x20x32 b1, a GEMM's corner
// block, 0.62 -> 1.05x; 17x41x8 b1 0.48 -> 1.10x; bands of 8-9 rows of 3
// vectors that kept their registers lost 0-4%). One-vector blocks kept theirs
// (30x10 b1: 1.03x in one band of 30, 0.95-0.97x in two of 15), and so did the
// bf16 dot product's (55x20x64 b1 in 14 + 13 rows: 1.03-1.04x; bf16 50x70x40
// b8 with the spare: 1.09 -> 1.06x).
std::int64_t balancedBandRows(std::int64_t block_m, std::int64_t registers, const std::vector<ColumnPanel>& panels,
                              const RegisterBlockPlan& plan) {
  const std::int64_t widest = widestBlockVectors(panels, plan);
  const bool masked = std::any_of(panels.begin(), panels.end(),
                                  [&](const ColumnPanel& panel) { return plan.hasMaskedPiece(panel); });
  const std::int64_t spare = plan.nanokernel == NanokernelKind::Fma && masked && widest > 1 ? 2 : 0;
  return std::max(block_m, (registers - widest - 1 - spare) / widest);
}

// Bands of at most `max_rows` rows, as even as they come (25 rows: 13 + 12).
void planBalancedBands(std::int64_t m, std::int64_t max_rows, const std::vector<ColumnPanel>& panels,
                       RegisterBlockPlan& plan) {
  const std::int64_t bands = ceilDiv(m, max_rows);
  const std::int64_t rows = m / bands;
  const std::int64_t taller = m % bands;  // bands of rows + 1
  if (taller > 0) plan.bands.push_back(band(0, taller * (rows + 1), rows + 1, panels));
  plan.bands.push_back(band(taller * (rows + 1), (bands - taller) * rows, rows, panels));
}

// Rows short of a block: their blocks widen to keep the schedule's
// accumulators, as far as N has columns for them. Where the narrowest block
// (an edge, or the last whole one) would then have fewer, they widen further,
// up to what the register file holds, to the width whose narrowest block has
// the most FMA chains, then the fewest blocks (6 rows of 128: 6x64 blocks, not
// 6x32: 0.86x -> 0.98x libxsmm on the Zen 5-class VM; 5 rows of 96 stay two
// 5x48 blocks, not 5x80 and 5x16).
std::vector<ColumnPanel> shortBandPanels(const Problem& problem, const Schedule& schedule, std::int64_t rows,
                                         const RegisterBlockPlan& plan) {
  const std::int64_t registers = vectorRegisters(schedule.isa);
  const std::int64_t least = std::max<std::int64_t>(1, schedule.accumulators() / rows);
  const std::int64_t most = std::max(least, (registers - 1) / (rows + 1));
  std::vector<ColumnPanel> best;
  std::int64_t best_narrowest = 0, best_blocks = 0;
  for (std::int64_t vectors = least; vectors <= most; ++vectors) {
    std::vector<ColumnPanel> panels = edgeBlockPanels(plan, problem.n, rows, vectors, registers);
    std::int64_t narrowest = std::numeric_limits<std::int64_t>::max(), blocks = 0;
    for (const ColumnPanel& panel : panels) {
      narrowest = std::min(narrowest, plan.blockVectors(panel));
      blocks += ceilDiv(panel.size, panel.cols);
    }
    if (best.empty() || narrowest > best_narrowest || (narrowest == best_narrowest && blocks < best_blocks)) {
      best = std::move(panels);
      best_narrowest = narrowest;
      best_blocks = blocks;
    }
    if (rows * best_narrowest >= schedule.accumulators()) break;  // chains enough: no wider
  }
  return best;
}

void planRowsWithEdges(const Problem& problem, const Schedule& schedule, RegisterBlockPlan& plan) {
  const std::int64_t registers = vectorRegisters(schedule.isa);
  const std::int64_t m = problem.m;
  if (m <= schedule.block_m) {
    plan.bands.push_back(band(0, m, m, shortBandPanels(problem, schedule, m, plan)));
    return;
  }
  const std::int64_t vectors = schedule.block_n / schedule.vector_lanes;
  const std::vector<ColumnPanel> panels = edgeBlockPanels(plan, problem.n, schedule.block_m, vectors, registers);
  const std::int64_t full_rows = m / schedule.block_m * schedule.block_m;
  const std::int64_t rest = m - full_rows;
  const std::int64_t max_rows = balancedBandRows(schedule.block_m, registers, panels, plan);
  // Blocks narrower than the schedule's (N short of its width) leave registers
  // for more rows: taller balanced bands, each a pass over B with more chains
  // (bf16 64x16x64 b16: 0.68x libxsmm in 8-row bands, 0.96x in 22 + 21 + 21
  // rows; f32: 0.85x, 0.97x).
  if (schedule.edge_rows != EdgeRows::ShortBand && widestBlockVectors(panels, plan) < vectors &&
      max_rows > schedule.block_m) {
    planBalancedBands(m, max_rows, panels, plan);
    return;
  }
  if (rest == 0) {
    plan.bands.push_back(band(0, m, schedule.block_m, panels));
    return;
  }
  // The rest as a short band where its widened blocks still have the chains
  // FMA latency needs and balanced bands would not be fewer (8 rows on AVX2's
  // 6x16: 6 + 2 rows of 2x32 blocks); otherwise balanced bands (25 rows of 18
  // columns: 13 + 12, not 8 + 8 + 8 + 1; 31 rows of 63: 11 + 10 + 10, each
  // band a pass over B, not 8 + 8 + 8 + 7).
  const std::vector<ColumnPanel> rest_panels = shortBandPanels(problem, schedule, rest, plan);
  std::int64_t rest_accumulators = 0;
  for (const ColumnPanel& panel : rest_panels)
    rest_accumulators = std::max(rest_accumulators, rest * plan.blockVectors(panel));
  const bool fewer_balanced = ceilDiv(m, max_rows) < full_rows / schedule.block_m + 1;
  const bool short_band =
      schedule.edge_rows == EdgeRows::ShortBand ||
      (schedule.edge_rows == EdgeRows::Auto && rest_accumulators >= schedule.min_accumulators && !fewer_balanced);
  if (short_band) {
    plan.bands.push_back(band(0, full_rows, schedule.block_m, panels));
    plan.bands.push_back(band(full_rows, rest, rest, rest_panels));
    return;
  }
  planBalancedBands(m, max_rows, panels, plan);
}

// Whether a register block's B panel is narrower than B's rows (strided).
bool stridedBPanels(const RegisterBlockPlan& plan, std::int64_t n) {
  for (const RowBand& row_band : plan.bands)
    for (const ColumnPanel& panel : row_band.panels)
      if (panel.blockColumns() < n) return true;
  return false;
}

// Whether A's broadcasts of a K loop unrolled whole stay within the registers
// a block leaves. Unrolled whole, they no longer vary in a loop over a band's
// blocks along N where no batch entry loop lies between (one entry, or
// single-entry chunks outside the bands), and LLVM hoists them out of it:
// past the registers, they go to the stack and come back at every block. That
// holds for the blocks of a band's panels together, which read the same
// broadcasts (one entry on the Zen 5 VM, mlir / libxsmm: bf16 19x49x16 in
// blocks of 32 and 17 columns 0.33-0.44x unrolled whole, 1.08-1.14x by 2;
// f32 19x49x8 0.53-0.67 -> 1.55x, 12x70x6 0.45-0.68 -> 1.16-1.44x).
bool wholeKBroadcastsFit(const Problem& problem, const RegisterBlockPlan& plan, std::int64_t registers) {
  const bool entries_inside_blocks = problem.batch > 1 && plan.batch_chunk != 1;
  if (entries_inside_blocks) return true;
  for (const RowBand& band : plan.bands) {
    std::int64_t blocks = 0;  // along N, in all of the band's panels: they share A's broadcasts
    for (const ColumnPanel& panel : band.panels) blocks += ceilDiv(panel.size, panel.blockColumns());
    if (blocks < 2) continue;
    for (const ColumnPanel& panel : band.panels)
      if (registersFor(band.rows, plan.blockVectors(panel)) + band.rows * plan.k_steps > registers) return false;
  }
  return true;
}

// Cycles of one batch entry (the K loop) of the widest block, at least 1.
std::int64_t widestEntryCycles(const RegisterBlockPlan& plan) {
  std::int64_t widest = 1;
  for (const RowBand& row_band : plan.bands)
    widest = std::max(widest, row_band.rows * widestBlockVectors(row_band.panels, plan) * plan.split.ways);
  return std::max<std::int64_t>(1, plan.k_steps * ceilDiv(widest, kVectorOpsPerCycle));
}

// Batch entries that take the widest block about kPrefetchLeadCycles; none
// without a batch to look ahead in.
std::int64_t autoPrefetchDistance(const Problem& problem, const RegisterBlockPlan& plan) {
  if (problem.batch < 2) return 0;
  return std::clamp<std::int64_t>(ceilDiv(kPrefetchLeadCycles, widestEntryCycles(plan)), 1, kMaxPrefetchDistance);
}

// Where one entry takes the widest block more than twice the lead, a whole
// entry ahead is too far for B: its lines came in long before their reads,
// past what the cache kept of them (120x85x215 b16 beta 1: 0.79x libxsmm in
// cache, 18x260x225 b32 0.84x). B's prefetch then looks as many K steps
// ahead, across entries, as take each block the lead: this many vector FMAs
// (0.92x and 1.00x; from memory 1.10x and 1.14x, against 0.98x and 1.0x an
// entry ahead).
std::int64_t autoPrefetchAheadFmas(const RegisterBlockPlan& plan) {
  if (plan.prefetch_distance == 0) return 0;
  if (widestEntryCycles(plan) <= 2 * kPrefetchLeadCycles) return 0;
  return kPrefetchLeadCycles * kVectorOpsPerCycle;
}

}  // namespace

EdgeForm edgeFormOf(NanokernelKind kind) {
  switch (kind) {
    case NanokernelKind::Fma:
    case NanokernelKind::Bf16Dot: return EdgeForm::MaskedVector;
    default: return EdgeForm::NarrowPanel;
  }
}

std::vector<BlockPiece> RegisterBlockPlan::pieces(const ColumnPanel& panel) const {
  const std::int64_t columns = panel.blockColumns();
  const std::int64_t whole = columns / panel.lanes * panel.lanes;
  std::vector<BlockPiece> result;
  if (whole > 0) result.push_back({0, whole, panel.lanes, false});
  if (whole < columns) result.push_back({whole, columns - whole, panel.lanes, true});
  return result;
}

std::int64_t RegisterBlockPlan::blockVectors(const ColumnPanel& panel) const {
  std::int64_t vectors = 0;
  for (const BlockPiece& piece : pieces(panel)) vectors += piece.vectors();
  return vectors;
}

std::int64_t RegisterBlockPlan::kStepCopies() const {
  const std::int64_t factor = std::min(k_unroll, k_steps);
  if (factor < 2) return 1;
  return factor + (k_steps % factor != 0 ? 1 : 0);  // the remainder stays a loop of one copy
}

bool RegisterBlockPlan::hasMaskedPiece(const ColumnPanel& panel) const {
  const std::vector<BlockPiece> panel_pieces = pieces(panel);
  return std::any_of(panel_pieces.begin(), panel_pieces.end(), [](const BlockPiece& piece) { return piece.masked; });
}

bool RegisterBlockPlan::hasMaskedEdges() const {
  for (const RowBand& row_band : bands)
    for (const ColumnPanel& panel : row_band.panels)
      if (hasMaskedPiece(panel)) return true;
  return false;
}

RegisterBlockPlan planRegisterBlocks(const Problem& problem, const Schedule& schedule, const CacheSizes& caches) {
  RegisterBlockPlan plan;
  plan.nanokernel = schedule.nanokernel;
  plan.vector_lanes = schedule.vector_lanes;
  plan.edges = edgeFormOf(schedule.nanokernel);
  if (plan.edges == EdgeForm::NarrowPanel)
    planNarrowPanelRows(problem, schedule, plan);
  else
    planRowsWithEdges(problem, schedule, plan);
  const std::int64_t element_bytes = problem.dtype == DType::BF16 ? 2 : 4;
  const std::int64_t bytes_per_batch = (problem.m * problem.k + problem.k * problem.n) * element_bytes;
  // Strided B panels are read again by every row band: an entry's B that fits
  // half of L1 stays there across the bands, and chunks keep the batch's A and
  // B in half of L1. A wider B spills either way, and single-entry chunks would
  // only send C through L2 at every entry: chunks keep A and B in half of L2.
  const std::int64_t entry_b_bytes = problem.k * problem.n * element_bytes;
  const bool b_stays_in_l1 = stridedBPanels(plan, problem.n) && entry_b_bytes <= caches.l1d_bytes / 2;
  const std::int64_t budget = b_stays_in_l1 ? caches.l1d_bytes / 2 : caches.l2_bytes / 2;
  // The widening route fuses its bf16 -> f32 conversions into the register loops;
  // chunk loops would need them fused there too: not chunked for now.
  const bool chunkable = !widensInRegisters(schedule.nanokernel) && !plan.hasMaskedEdges();
  // One band of one block row reads each entry's B once in any order: where
  // the batch's A, read again for every column block, stays in half of L2,
  // chunks would only send C through L1 at every entry (bf16 7x160x48 b8 from
  // memory: 0.74 -> 0.94x libxsmm, 8x96x64 b16 1.08 -> 1.26x on the Zen 5 VM).
  const bool b_read_once = plan.bands.size() == 1 && plan.bands.front().size == plan.bands.front().rows &&
                           problem.m * problem.k * element_bytes * problem.batch <= caches.l2_bytes / 2;
  if (chunkable && !b_read_once && problem.batch > 1 && bytes_per_batch * problem.batch > budget) {
    const std::int64_t chunk = std::max<std::int64_t>(1, budget / bytes_per_batch);
    if (chunk < problem.batch) plan.batch_chunk = chunk;
  }
  // The bf16 routes have no partial-sum form yet: their blocks are not split.
  if (schedule.nanokernel == NanokernelKind::Fma && !problem.hasEpilogue())
    plan.split = planReductionSplit(problem, plan, schedule);
  // An epilogue is fused into the last stores of C: the whole batch in one pass.
  if (plan.split.ways > 1 || problem.hasEpilogue()) plan.batch_chunk = 0;
  const std::int64_t chunk_entries = plan.batch_chunk > 0 ? plan.batch_chunk : problem.batch;
  plan.chunk_fits_l2 = bytes_per_batch * chunk_entries <= caches.l2_bytes / 2;
  plan.k_steps = schedule.nanokernel == NanokernelKind::Bf16Dot  ? ceilDiv(problem.k, 2)
                 : plan.split.dim == ReductionSplit::Dim::K ? problem.k / plan.split.ways
                                                              : problem.k;
  // A short K loop is unrolled whole: its exit branch and loop overhead weigh on
  // tiny reductions (bf16 5x35x6: 112 -> 144 GFLOPS on the Zen 5 VM). Longer
  // ones by 2, which halves the loop's own instructions per FMA: level with
  // one step where the core is the kernel's alone, 1-3% ahead of it in the
  // VM's slow spells (gate suite, 20 interleaved runs); by 4 to 16 the body
  // grows and gained nothing. Nor is it unrolled whole where A's broadcasts
  // would spill (wholeKBroadcastsFit; bf16 13x187x16 b1: 0.70 -> 0.99-1.09x
  // libxsmm, f32 8x256x8 b1 0.76-1.01 -> 1.17-1.58x).
  const bool short_k = plan.k_steps <= kFullyUnrolledKSteps;
  if (short_k && wholeKBroadcastsFit(problem, plan, vectorRegisters(schedule.isa)))
    plan.k_unroll = plan.k_steps;
  else if (short_k && plan.k_steps < 4)
    plan.k_unroll = 1;  // by 2, a loop of 2 or 3 steps would leave no loop at all
  else
    plan.k_unroll = 2;
  if (schedule.prefetch_distance == kAutoPrefetch) {
    plan.prefetch_distance = autoPrefetchDistance(problem, plan);
    plan.prefetch_ahead_fmas = autoPrefetchAheadFmas(plan);
  } else {
    plan.prefetch_distance = schedule.prefetch_distance;
  }
  return plan;
}

}  // namespace nkbench::mlir_backend
