// Thread placement: measurements run on one known core.
#pragma once

#include <string>

namespace nkbench {

// Restricts the calling thread to `cpu`. On failure returns false and, when
// `error` is given, sets a one-line reason.
bool pinCurrentThreadToCpu(int cpu, std::string* error);

// The CPU the calling thread runs on now, or -1 when the OS cannot tell.
int currentCpu();

}  // namespace nkbench
