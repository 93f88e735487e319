#include "kernels/common/blocked_gemm.h"

#include <algorithm>

#include "harness/core/error.h"

namespace nkbench {
namespace {

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Splits `extent` into as few blocks as `preferred` allows, of balanced size
// rounded up to `multiple`; a dimension that fits one block is taken whole, so
// small and odd shapes are not padded at all (the block kernel takes any size).
// When rounding to `multiple` would pad more than a quarter of a dimension of at
// most two blocks, it is taken whole instead: the block kernel handles the edge.
std::int64_t balancedBlock(std::int64_t extent, std::int64_t preferred, std::int64_t multiple) {
  const std::int64_t blocks = ceilDiv(extent, preferred);
  if (blocks == 1) return extent;
  const std::int64_t block = std::min(preferred, ceilDiv(ceilDiv(extent, blocks), multiple) * multiple);
  const std::int64_t padding = ceilDiv(extent, block) * block - extent;
  if (4 * padding > extent && extent <= 2 * preferred) return extent;
  return block;
}

}  // namespace

GemmBlocking chooseGemmBlocking(const Problem& problem, const GemmBlocking& preferred,
                                std::int64_t m_multiple, std::int64_t n_multiple) {
  return {balancedBlock(problem.m, preferred.bm, m_multiple), balancedBlock(problem.n, preferred.bn, n_multiple),
          balancedBlock(problem.k, preferred.bk, 1)};
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
