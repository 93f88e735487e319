// What a multi-threaded run shares out: a GEMM's C blocks (blocked_gemm.h),
// and a BRGEMM's C rows, as panels that are BRGEMMs of their own (row_panels.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/problem.h"
#include "kernels/common/row_panels.h"
#include "operands/packing.h"

namespace nkbench {

// A BRGEMM's C rows are independent: on `threads` threads each takes a panel
// of them, a BRGEMM over its rows of every A_b and the whole of B, with no
// reduction across threads. Panels are whole multiples of this many rows
// (an AVX-512 register block's), the last the rest, so that a split adds
// at most one row edge to kernels of such blocks.
inline constexpr std::int64_t kThreadPanelRowUnit = 8;

// One panel per thread of an M-row BRGEMM, in order: threads - 1 of whole
// multiples of the unit, each the multiple nearest an even share of the rows
// left, the last the rest (17 rows on 2 threads: 8 and 9; 65: 32 and 33; 47
// on 4: 8, 16, 8 and 15); fewer than `threads` panels where M is too short
// for that (8 rows on 2). M in one panel on one thread.
std::vector<RowPanel> brgemmThreadPanels(std::int64_t m, int threads);

// Why `backend` skips `problem` on `threads` threads, or nullopt: a BRGEMM
// whose rows make fewer panels than threads is skipped, never run on fewer
// threads than its row says.
std::optional<std::string> brgemmThreadsUnsupported(const std::string& backend, const Problem& problem, int threads);

// Whether `threads` threads, each taking a contiguous run of a GEMM's C blocks
// (BlockedGemmOf::compute), leave at most an eighth of their turns idle.
bool sharesOutEvenly(const Problem& gemm, const GemmBlocking& blocking, int threads);

// Which dimension of a GEMM's blocks is narrowed first when they are too few.
enum class NarrowFirst { Rows, Columns };

// choose(preferred), with the preferred block narrowed by halves (its rows or
// columns first, as `first` says; in whole multiples of `least`, never below
// it) while its C blocks would not share out evenly among `threads`: a small
// GEMM in one block would otherwise run on one thread, the others idle.
GemmBlocking blockingForThreads(const Problem& gemm, GemmBlocking preferred, const GemmBlocking& least, int threads,
                                NarrowFirst first, const std::function<GemmBlocking(const GemmBlocking&)>& choose);

}  // namespace nkbench
