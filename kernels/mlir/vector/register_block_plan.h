// Tile-size heuristics, all in one place: how C is cut into statically shaped
// regions, each covered by one register block, so that shapes the schedule's
// block does not divide are computed by nanokernels too, never refused.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/core/problem.h"
#include "harness/host/cache_info.h"
#include "kernels/mlir/schedule/schedule.h"

namespace nkbench::mlir_backend {

// How the columns past the last whole vector are covered.
enum class EdgeForm {
  // By the last vector of a register block, a full-width one whose lanes past N
  // are masked off in its loads and stores of C (and of B, for f32; the bf16
  // dot product reads B's zero padding): every edge column costs a full-width
  // FMA or dot product that shares the block's broadcasts of A.
  MaskedVector,
  // By one panel of their own, one vector as wide as the rest (the widening
  // routes, whose conversions are fused per panel).
  NarrowPanel,
};

// Columns [offset, offset + size) of a row band. Either whole blocks of `cols`
// columns tile it (size a multiple of cols), or it is one edge block of `cols`
// register columns, narrower in C (size < cols), see EdgeForm. Nanokernels are
// `lanes` wide (lanes divides cols).
struct ColumnPanel {
  std::int64_t offset = 0;
  std::int64_t size = 0;
  std::int64_t cols = 0;
  std::int64_t lanes = 0;
  bool isEdgeBlock() const { return size < cols; }
  // Columns of one block in C: the block width, or the edge block's size.
  std::int64_t blockColumns() const { return isEdgeBlock() ? size : cols; }
};

// The whole vectors of a block, or its masked last vector: columns
// [offset, offset + width) of the block in `lanes`-wide vectors.
struct BlockPiece {
  std::int64_t offset = 0;
  std::int64_t width = 0;
  std::int64_t lanes = 0;
  bool masked = false;
  std::int64_t vectors() const { return (width + lanes - 1) / lanes; }
};

// Rows [offset, offset + size) of C, tiled by `rows`-high register blocks.
struct RowBand {
  std::int64_t offset = 0;
  std::int64_t size = 0;
  std::int64_t rows = 0;
  std::vector<ColumnPanel> panels;  // cover [0, N) left to right
};

// Splitting the reduction into `ways` partial sums, summed at the end: more
// independent FMA chains for blocks too small to hide FMA latency. Over the
// batch each sum takes a run of entries (s * batch/ways + i), over K
// interleaved steps (i * ways + s; payload_ir.cpp). It reassociates the sum,
// as libraries do for such shapes.
struct ReductionSplit {
  enum class Dim { None, Batch, K };
  Dim dim = Dim::None;
  std::int64_t ways = 1;
};

// On the widening routes the payload itself is cut into the plan's regions (see
// payload_ir.h); otherwise the schedule splits one op into them.
struct RegisterBlockPlan {
  std::vector<RowBand> bands;  // cover [0, M) top to bottom
  // Batch entries per pass over C; 0 = the whole batch in one pass. A register
  // block streams its A rows and B panel through the whole batch. Where B rows
  // are wider than the block, its B panel is strided and the hardware prefetcher
  // falls behind: chunks then keep A and B in half of L1 across the blocks,
  // as long as one entry's B fits that half. Otherwise (contiguous streams, or
  // an entry's B too wide to stay in L1 between row bands) chunks only keep
  // them in half of L2. (Measured on 32^3 and 64^3 blocks with batch 8 to 64:
  // each rule alone loses 5-15% on the other shape; N of 128 and 256 lost
  // 10-12% to libxsmm in single-entry chunks, 3-7% in L2 chunks.) One band of
  // one block row reads each entry's B once in any order: not chunked where the
  // batch's A stays in half of L2.
  std::int64_t batch_chunk = 0;
  // A chunk's A and B (the whole batch's where not chunked) fit half of L2:
  // the row bands after the first find them in cache.
  bool chunk_fits_l2 = false;
  ReductionSplit split;  // no chunks when split
  // Steps of the K loop: K, K / ways when split over K, K pairs on the dot product.
  std::int64_t k_steps = 1;
  // Copies of the K step in the K loop's body (1: not unrolled); a remainder of
  // the trip count runs after it as a loop of one copy.
  std::int64_t k_unroll = 1;
  // Copies of each nanokernel in the kernel: the K loop's body and its remainder.
  std::int64_t kStepCopies() const;
  // Batch entries ahead the kernel prefetches A and B from (batch_prefetch.h: which lines, on which passes); 0: none.
  std::int64_t prefetch_distance = 0;
  // Where one entry takes far longer than the prefetch's lead: B's lines as
  // many K steps ahead instead, across entries, as take a block this many
  // vector FMAs (or dot products); 0: `prefetch_distance` entries ahead.
  std::int64_t prefetch_ahead_fmas = 0;
  NanokernelKind nanokernel = NanokernelKind::Fma;  // the schedule's
  std::int64_t vector_lanes = 1;                    // the schedule's (for C conversions)
  EdgeForm edges = EdgeForm::MaskedVector;

  // The whole vectors of one block of `panel`, then its masked one if any.
  std::vector<BlockPiece> pieces(const ColumnPanel& panel) const;
  // Vector accumulators per row of one block of `panel`.
  std::int64_t blockVectors(const ColumnPanel& panel) const;
  // Whether a block of `panel` ends in a masked vector; any block of the plan.
  bool hasMaskedPiece(const ColumnPanel& panel) const;
  bool hasMaskedEdges() const;
};

// The edge form of a nanokernel: masked vectors for f32 FMAs and bf16 dot
// products, narrow panels on the widening routes.
EdgeForm edgeFormOf(NanokernelKind kind);

// Rows: bands of the schedule's block rows; the rows left over form one short
// band whose blocks widen to keep the schedule's accumulators, where N has the
// columns for them to keep the chains FMA latency needs (8 rows of AVX2's 6x16:
// 6 + 2 rows of 2x32 blocks). Otherwise M is cut into balanced bands of as many
// rows as the register file holds for the band's widest block (25 rows of 18
// columns on AVX-512: 13 + 12, not 8 + 8 + 8 + 1). The schedule may ask for
// either (Schedule::edge_rows). M below the block's rows is one short band.
// Columns: whole blocks, then the columns left over as one edge block, absorbed
// into the last whole block where the registers hold the wider block (34 columns
// of 8x32 on AVX-512: one 8x48 block whose third vector is masked to 2 lanes).
// The widening routes keep a narrow panel per edge and their rows as they were
// (full blocks, then one shorter band).
// Prefetch: the schedule's distance, or by default as many batch entries as
// take about 512 cycles of the widest block (1 to 4): far enough to hide a
// memory access, near enough to stay in cache (on the Zen 5 VM, cold gate
// suite: 32^3 b32 best at 2 entries of 256 cycles, 64^3 b16 at 1 of 512).
// Where one entry takes more than twice that, B's lines the same 512 cycles
// ahead in K steps, across entries (prefetch_ahead_fmas).
// A kernel with an epilogue (an mlp layer's block) is neither chunked nor split:
// its epilogue is fused into the one pass's stores of C (fused_epilogue.h).
// Batch chunks (see batch_chunk) only where no edge is masked: a chunk ends with
// C's masked stores, which the next chunk's masked loads cannot take forwarded
// (16x63x64 b16 on the Zen 5 VM: 0.65x libxsmm chunked, 1.02x not).
RegisterBlockPlan planRegisterBlocks(const Problem& problem, const Schedule& schedule,
                                     const CacheSizes& caches = CacheSizes{});

}  // namespace nkbench::mlir_backend
