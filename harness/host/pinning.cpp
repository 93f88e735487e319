#include "harness/host/pinning.h"

#include <pthread.h>
#include <sched.h>

#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

}  // namespace nkbench
