// Which BRGEMM the mlir backend compiles for a case, shared by `run` (which also
// packs the operands to match) and `show` (which only prints the code).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/problem.h"
#include "harness/host/cache_info.h"
#include "kernels/common/blocked_gemm.h"
#include "kernels/common/blocked_mlp.h"
#include "kernels/common/row_panels.h"
#include "kernels/mlir/schedule/schedule.h"

namespace nkbench::mlir_backend {

// The blocks a GEMM is cut into, each one call of the schedule's block kernel.
// Vector routes: the schedule's preferred block fitted to L2 (fittedGemmBlock,
// vector/gemm_block_fit.h), balanced (chooseGemmBlocking), its columns widened
// where that pads N less (leastPaddedWidth) and the GEMM as a whole, once
// both are shared among the threads.
// The tile route (amxGemmBlocking): rows of the schedule's bm, K blocks of its
// bk, so that each block call keeps its C tiles for the whole reduction (batch
// = K blocks), and columns widened so that one B panel (K x bn) takes a quarter
// of L2 (at most N, at least the schedule's bn), whole tiles throughout.
// Where so few C blocks would leave more than an eighth of the `threads`
// threads' turns idle, the blocks are narrowed (blockingForThreads): on the
// vector routes rows first, down to a register block, then columns; on the
// tile route the widened panels first, then rows.
GemmBlocking gemmBlockingFor(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches,
                             int threads = 1);

// The order of a GEMM's block calls. The tile route runs N blocks outer: each B
// panel stays in L2 across all the M blocks while the A panels stream past it,
// so B, widened as above, is read from memory once and A N / bn times. The
// vector routes run M blocks outer (tuned on the AVX-512 hosts).
BlockOrder gemmBlockOrderFor(const Schedule& schedule);

// An mlp's blocks (kernels/common/blocked_mlp.h): the schedule's GEMM block
// rows, and columns of its register block's width that pad the widths least.
MlpBlocking mlpBlockingFor(const Problem& mlp, const Schedule& schedule);

// An mlp's kernel: its first layer's block, with the epilogue unless the
// schedule runs it as separate passes. A GEMM's first block kernel: a whole
// block's (whole AMX tiles on the tile route, whole vectors of columns on the
// bf16 dot-product route), or where none is whole, its first edge block's;
// a BRGEMM with K padded to whole tile
// steps on the tile route, or made even on the bf16 dot-product route;
// otherwise the problem itself. `threads`: those a GEMM's blocks, or a
// BRGEMM's row panels (the first of which is given), are shared among.
Problem kernelProblemFor(const Problem& problem, const Schedule& schedule, const CacheSizes& caches,
                         int threads = 1);

// Whether a kernel of `schedule` keeps the f32 sum of a BRGEMM's bf16 C on its
// stack (the dot-product and widening kernels; the tile kernels sum one block
// at a time), at most kMaxBf16CSumBytes.
bool sumsBf16COnTheStack(const Problem& problem, const Schedule& schedule);

// Rows of C whose f32 sum fits that stack; 0 when not one row does.
std::int64_t bf16CSumRows(const Problem& problem);

// Why such a kernel cannot be made for `problem`: not one row's sum fits.
std::optional<std::string> bf16CSumUnsupported(const Problem& problem, const Schedule& schedule);

// The row panels (kernels/common/row_panels.h) a BRGEMM runs as, one of all
// M where it runs whole: a panel per thread on `threads` threads
// (brgemmThreadPanels); where a bf16 C's f32 sum on the stack holds fewer
// rows than a panel, each panel cut into as few equal pieces as fit, in
// whole register blocks of rows where a block fits, on the panel's thread.
std::vector<RowPanel> brgemmPanels(const Problem& brgemm, const Schedule& schedule, int threads);

// Columns of the VNNI rows a kernel of `schedule` reads B from: N, padded with
// zero columns to whole vectors on the dot-product route (dotPackedColumns).
std::int64_t vnniBColumns(const Problem& kernel_problem, const Schedule& schedule);

// How a GEMM's edge blocks are packed for `schedule`'s block kernels: at their
// own extent (edge kernels, no zeros computed), but on the tile route, whose
// kernels take whole tiles, padded. And the multiple an edge block's VNNI B
// columns are rounded up to (vnniBColumns).
BlockEdges gemmBlockEdgesFor(const Schedule& schedule);
std::int64_t vnniBColumnMultiple(const Schedule& schedule);

}  // namespace nkbench::mlir_backend
