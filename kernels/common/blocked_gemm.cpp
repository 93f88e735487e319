#include "kernels/common/blocked_gemm.h"

#include <algorithm>

#include "harness/core/error.h"

namespace nkbench {
namespace {
std::int64_t roundUp(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
}  // namespace

GemmBlocking chooseGemmBlocking(const Problem& problem, const GemmBlocking& preferred,
                                std::int64_t m_multiple, std::int64_t n_multiple) {
  GemmBlocking blocking;
  blocking.bm = std::min(preferred.bm, roundUp(problem.m, m_multiple));
  blocking.bn = std::min(preferred.bn, roundUp(problem.n, n_multiple));
  blocking.bk = std::min(preferred.bk, problem.k);
  return blocking;
}

BlockedGemm::BlockedGemm(const Problem& problem, const GemmBlocking& blocking)
    : problem_(problem),
      blocking_(blocking),
      mb_(blockCount(problem.m, blocking.bm)),
      nb_(blockCount(problem.n, blocking.bn)),
      kb_(blockCount(problem.k, blocking.bk)) {
  if (problem.kind != OpKind::Gemm || problem.batch != 1 || problem.accumulate)
    throw Error("blocked GEMM needs a gemm problem with batch 1 and beta 0: " + problem.describe());
  blocked_c_.assign(static_cast<std::size_t>(mb_ * nb_ * blocking.bm * blocking.bn), 0.0f);
}

void BlockedGemm::pack(const float* a, const float* b) {
  packABlocked(a, problem_.m, problem_.k, blocking_, packed_a_);
  packBBlocked(b, problem_.k, problem_.n, blocking_, packed_b_);
}

void BlockedGemm::unpack(float* c) const {
  unpackCBlocked(blocked_c_, problem_.m, problem_.n, blocking_, c);
}

Problem BlockedGemm::blockProblem() const {
  Problem block;
  block.kind = OpKind::Brgemm;
  block.dtype = problem_.dtype;
  block.m = blocking_.bm;
  block.n = blocking_.bn;
  block.k = blocking_.bk;
  block.batch = kb_;
  block.accumulate = false;
  return block;
}

}  // namespace nkbench
