// What a multi-threaded run shares out: a GEMM's C blocks (blocked_gemm.h).
// A BRGEMM case is one C block, which one call computes on one thread.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "harness/core/problem.h"
#include "operands/packing.h"

namespace nkbench {

// Why `backend` skips `problem` on `threads` threads, or nullopt: a BRGEMM
// with more than one thread is skipped, never run on one thread unsaid.
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
