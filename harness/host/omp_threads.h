// The threads of a multi-threaded run: the OpenMP threads that the GEMM
// driver, oneDNN and Eigen all run on (one libgomp pool serves them), one per
// core. Only the process that runs the cases (the worker, or the runner under
// --no-isolate) may start them: GNU OpenMP's pool does not survive a fork.
#pragma once

#include <vector>

namespace nkbench {

// OpenMP's thread count becomes cores.size(); the calling thread (OpenMP's
// thread 0) is pinned to cores[0], the team's thread i to cores[i]. Throws
// nkbench::Error naming the core a thread could not be pinned to.
void placeOpenMpThreads(const std::vector<int>& cores);

}  // namespace nkbench
