#include "kernels/common/bf16_blocked_gemm.h"

#include <algorithm>

#include "harness/core/error.h"
#include "kernels/common/blocked_gemm.h"
#include "reference/vnni_packing.h"

namespace nkbench {
namespace {

// A (M x K row-major) -> [Mb][Kb][bm][bk], zero-padded; every element is written.
void packABlockedBf16(const BFloat16* a, std::int64_t m, std::int64_t k,
                      const GemmBlocking& blocking, BFloat16Buffer& packed) {
  const std::int64_t bm = blocking.bm, bk = blocking.bk;
  const std::int64_t mb = blockCount(m, bm), kb = blockCount(k, bk), tile = bm * bk;
  packed.resize(static_cast<std::size_t>(mb * kb * tile));
  for (std::int64_t i = 0; i < mb; ++i)
    for (std::int64_t l = 0; l < kb; ++l) {
      BFloat16* block = packed.data() + (i * kb + l) * tile;
      const std::int64_t rows = std::clamp<std::int64_t>(m - i * bm, 0, bm);
      const std::int64_t cols = std::clamp<std::int64_t>(k - l * bk, 0, bk);
      for (std::int64_t r = 0; r < rows; ++r) {
        const BFloat16* source = a + (i * bm + r) * k + l * bk;
        std::copy(source, source + cols, block + r * bk);
        std::fill(block + r * bk + cols, block + (r + 1) * bk, BFloat16{});
      }
      std::fill(block + rows * bk, block + tile, BFloat16{});
    }
}

}  // namespace

GemmBlocking chooseBf16GemmBlocking(const Problem& problem, const GemmBlocking& preferred,
                                    std::int64_t m_multiple, std::int64_t n_multiple) {
  GemmBlocking blocking = chooseGemmBlocking(problem, preferred, m_multiple, n_multiple);
  blocking.bk = vnniPaddedK(blocking.bk);
  return blocking;
}

Bf16BlockedGemm::Bf16BlockedGemm(const Problem& problem, const GemmBlocking& blocking)
    : problem_(problem),
      blocking_(blocking),
      mb_(blockCount(problem.m, blocking.bm)),
      nb_(blockCount(problem.n, blocking.bn)),
      kb_(blockCount(problem.k, blocking.bk)) {
  if (problem.dtype != DType::BF16 || problem.kind != OpKind::Gemm || problem.batch != 1 ||
      problem.accumulate)
    throw Error("bf16 blocked GEMM needs a bf16 gemm problem with batch 1 and beta 0: " +
                problem.describe());
  if (blocking.bk % kVnniPairBf16 != 0)
    throw Error("bf16 blocked GEMM needs an even K block, not " + std::to_string(blocking.bk));
  blocked_c_.assign(static_cast<std::size_t>(mb_ * nb_ * blocking.bm * blocking.bn), 0.0f);
}

void Bf16BlockedGemm::pack(const BFloat16* a, const BFloat16* b) {
  packABlockedBf16(a, problem_.m, problem_.k, blocking_, packed_a_);
  packBBlockedVnni(b, problem_.k, problem_.n, blocking_, packed_b_);
}

void Bf16BlockedGemm::unpack(float* c) const {
  unpackCBlocked(blocked_c_, problem_.m, problem_.n, blocking_, c);
}

Problem bf16BlockProblem(const Problem& gemm, const GemmBlocking& blocking) {
  Problem block;
  block.kind = OpKind::Brgemm;
  block.dtype = DType::BF16;
  block.m = blocking.bm;
  block.n = blocking.bn;
  block.k = blocking.bk;
  block.batch = blockCount(gemm.k, blocking.bk);
  block.accumulate = false;
  return block;
}

}  // namespace nkbench
