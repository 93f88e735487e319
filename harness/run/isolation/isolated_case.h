// Cases run in a worker process (`run --isolate`, the default), as test
// runners and fuzzers run what may crash: a kernel that dies of a signal
// (SIGSEGV, SIGILL, SIGBUS, SIGFPE, abort) or runs past the case's time limit
// costs its own row, an error naming what happened and at which stage, and
// the case is run again without it, so that every other row is as it would
// have been. The worker is a fork of the runner: pinning, the AMX permission
// and the backends come with it; it runs case after case, each asked for over
// a pipe and answered with its rows as JSON, so that what it has warmed (the
// MLIR compiler, the JIT, the kernels of earlier cases) serves the cases after.
// A worker that died or hung is replaced by a fresh fork for the next case.
#pragma once

#include <sys/types.h>

#include <string>

#include <vector>

#include "harness/run/case_runner.h"

namespace nkbench {

struct IsolationSettings {
  double case_timeout_s = 0.0;  // per attempt of a case; 0: no limit
};

class IsolatedCases {
 public:
  // `backends` and `settings` must outlive this object.
  IsolatedCases(const std::vector<Backend*>& backends, const CaseSettings& settings, IsolationSettings isolation);
  ~IsolatedCases();  // ends the worker
  IsolatedCases(const IsolatedCases&) = delete;
  IsolatedCases& operator=(const IsolatedCases&) = delete;

  // The rows of `c` on every backend, in the backends' order.
  std::vector<ResultRow> run(const SuiteCase& c, const StageObserver& observe);

 private:
  struct Worker {
    pid_t pid = 0;
    int requests = -1;  // the worker reads case requests from it
    int reports = -1;   // and writes stages, faults and rows to it
    bool fresh = false;  // has not said it is ready (warmed up) yet
  };
  void start();
  int stop(bool kill_it);  // the worker's wait status (0 without a worker)
  bool send(const std::string& request);  // false: the worker is gone
  struct Report;
  Report attempt(const SuiteCase& c, const std::vector<std::size_t>& indices, const StageObserver& observe);

  std::vector<Backend*> backends_;
  const CaseSettings& settings_;
  IsolationSettings isolation_;
  Worker worker_;
};

}  // namespace nkbench
