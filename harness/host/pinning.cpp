#include "harness/host/pinning.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/error.h"

namespace nkbench {
namespace {

// CPUs this process may run on (it may be confined by a cgroup or taskset),
// or an empty list when the OS will not say.
std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

}  // namespace

bool pinCurrentThreadToCpu(int cpu, std::string* error) {
  const auto fail = [&](const std::string& why) {
    if (error) *error = fmt::format("cannot pin to CPU {}: {}", cpu, why);
    return false;
  };
  if (cpu < 0 || cpu >= CPU_SETSIZE) return fail("no such CPU number");
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int status = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (status == 0) return true;
  if (status == EINVAL) {
    const std::vector<int> allowed = allowedCpus();
    if (!allowed.empty())
      return fail(fmt::format("not one of this process's CPUs ({})", fmt::join(allowed, ", ")));
  }
  return fail(std::strerror(status));
}

int currentCpu() { return sched_getcpu(); }

const std::vector<int>& usableCores() {
  static const std::vector<int> cores = [] {
    std::vector<int> allowed = allowedCpus();
    const int first = currentCpu();
    auto it = std::find(allowed.begin(), allowed.end(), first);
    if (it != allowed.end()) std::rotate(allowed.begin(), it, it + 1);
    if (allowed.empty()) allowed.push_back(std::max(0, first));
    return allowed;
  }();
  return cores;
}

std::vector<int> coresForThreads(int threads) {
  const std::vector<int>& cores = usableCores();
  if (threads < 1) throw Error(fmt::format("--threads {}: a run needs at least one thread", threads));
  if (std::size_t(threads) > cores.size())
    throw Error(fmt::format("--threads {}: this process may use {} core{} ({}); one thread per core", threads,
                            cores.size(), cores.size() == 1 ? "" : "s", fmt::join(cores, ", ")));
  return {cores.begin(), cores.begin() + threads};
}

}  // namespace nkbench
