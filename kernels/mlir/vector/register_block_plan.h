// Tile-size heuristics, all in one place: how C is cut into statically shaped
// regions, each covered by one register block, so that shapes the schedule's
// block does not divide are computed by smaller blocks, never refused.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/core/problem.h"
#include "harness/host/cache_info.h"
#include "kernels/mlir/schedule.h"

namespace nkbench::mlir_backend {

// Columns [offset, offset + size) of a row band, tiled by `cols`-wide register
// blocks made of `lanes`-wide vectors (cols divides size, lanes divides cols).
struct ColumnPanel {
  std::int64_t offset = 0;
  std::int64_t size = 0;
  std::int64_t cols = 0;
  std::int64_t lanes = 0;
};

// Rows [offset, offset + size) of C, tiled by `rows`-high register blocks.
struct RowBand {
  std::int64_t offset = 0;
  std::int64_t size = 0;
  std::int64_t rows = 0;
  std::vector<ColumnPanel> panels;  // cover [0, N) left to right
};

// Splitting the reduction into `ways` interleaved partial sums (index = i*ways + s),
// summed at the end: more independent FMA chains for blocks too small to hide
// FMA latency. It reassociates the sum, as libraries do for such shapes.
struct ReductionSplit {
  enum class Dim { None, Batch, K };
  Dim dim = Dim::None;
  std::int64_t ways = 1;
};

// On the widening route the payload itself is cut into the plan's regions (see
// payload_ir.h); otherwise the schedule splits one op into them.
struct RegisterBlockPlan {
  std::vector<RowBand> bands;  // cover [0, M) top to bottom
  // Batch entries per pass over C; 0 = the whole batch in one pass. A register
  // block streams its A rows and B panel through the whole batch. Where B rows
  // are wider than the block, its B panel is strided and the hardware prefetcher
  // falls behind: chunks then keep A and B in half of L1 across the blocks.
  // Otherwise the streams are contiguous and chunks only keep them in half of L2.
  // (Measured on 32^3 and 64^3 blocks with batch 8 to 64: each rule alone loses
  // 5-15% on the other shape.)
  std::int64_t batch_chunk = 0;
  ReductionSplit split;  // no chunks when split
  NanokernelKind nanokernel = NanokernelKind::Fma;  // the schedule's
  std::int64_t vector_lanes = 1;                    // the schedule's (for C conversions)
};

// Full register blocks first; the last rows form one shorter band; in each band
// the columns left over form a lane-multiple panel and then a narrow tail panel.
// Short bands widen their blocks to keep the accumulator count of the schedule.
RegisterBlockPlan planRegisterBlocks(const Problem& problem, const Schedule& schedule,
                                     const CacheSizes& caches = CacheSizes{});

}  // namespace nkbench::mlir_backend
