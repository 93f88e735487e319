// What a multi-threaded run shares out: a GEMM's C blocks (blocked_gemm.h).
// A BRGEMM case is one C block, which one call computes on one thread.
#pragma once

#include <optional>
#include <string>

#include "harness/core/problem.h"

namespace nkbench {

// Why `backend` skips `problem` on `threads` threads, or nullopt: a BRGEMM
// with more than one thread is skipped, never run on one thread unsaid.
std::optional<std::string> brgemmThreadsUnsupported(const std::string& backend, const Problem& problem, int threads);

}  // namespace nkbench
