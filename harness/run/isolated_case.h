// A case run in a child process (`run --isolate`, the default), as test
// runners and fuzzers run what may crash: a kernel that dies of a signal
// (SIGSEGV, SIGILL, SIGBUS, SIGFPE, abort) or runs past the case's time limit
// costs its own row, an error naming what happened and at which stage, and
// the case is run again without it, so that every other row is as it would
// have been. The child is a fork of the runner: pinning, the AMX permission
// and the backends come with it; its rows come back as JSON over a pipe.
#pragma once

#include <vector>

#include "harness/run/case_runner.h"

namespace nkbench {

struct IsolationSettings {
  double case_timeout_s = 0.0;  // per attempt of a case; 0: no limit
};

std::vector<ResultRow> runCaseIsolated(const SuiteCase& c, const std::vector<Backend*>& backends,
                                       const CaseSettings& settings, const IsolationSettings& isolation,
                                       const StageObserver& observe);

}  // namespace nkbench
