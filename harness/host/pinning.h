// Thread placement: measurements run on one known core.
#pragma once

#include <string>
#include <vector>

namespace nkbench {

// Restricts the calling thread to `cpu`. On failure returns false and, when
// `error` is given, sets a one-line reason.
bool pinCurrentThreadToCpu(int cpu, std::string* error);

// The CPU the calling thread runs on now, or -1 when the OS cannot tell.
int currentCpu();

// The cores a run may spread its threads over: the CPUs of the process's
// affinity (a cgroup or taskset may confine it) as they were on the first
// call, the calling thread's own first. Calls after the first return the same:
// the runner pins itself to one core, which narrows the affinity it would read.
const std::vector<int>& usableCores();

// Threads that a run of `threads` threads spreads over: the first `threads`
// of usableCores(). Throws nkbench::Error naming the count when there are
// fewer cores: an oversubscribed run would time the scheduler, not the kernels.
std::vector<int> coresForThreads(int threads);

}  // namespace nkbench
