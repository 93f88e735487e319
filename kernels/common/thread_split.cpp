#include "kernels/common/thread_split.h"

#include <fmt/format.h>

namespace nkbench {

std::optional<std::string> brgemmThreadsUnsupported(const std::string& backend, const Problem& problem, int threads) {
  if (problem.kind != OpKind::Brgemm || threads <= 1) return std::nullopt;
  return fmt::format("{}: a BRGEMM is one C block, computed by one call on one thread; {} threads share out a "
                     "GEMM's C blocks",
                     backend, threads);
}

}  // namespace nkbench
