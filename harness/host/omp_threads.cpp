#include "harness/host/omp_threads.h"

#include <omp.h>

#include <string>

#include "harness/core/error.h"
#include "harness/host/pinning.h"

namespace nkbench {

void placeOpenMpThreads(const std::vector<int>& cores) {
  if (cores.empty()) return;
  const int threads = static_cast<int>(cores.size());
  std::vector<std::string> errors(cores.size());
  omp_set_dynamic(0);
  omp_set_num_threads(threads);
#pragma omp parallel num_threads(threads)
  {
    const int me = omp_get_thread_num();
    pinCurrentThreadToCpu(cores[me], &errors[me]);
  }
  for (const std::string& error : errors)
    if (!error.empty()) throw Error("--threads: " + error);
}

}  // namespace nkbench
