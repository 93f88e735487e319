// The bf16 twin of BlockedGemm: GEMM as BRGEMM calls over blocked operands, with
// A -> [Mb][Kb][bm][bk] bf16, B -> [Nb][Kb][bk/2][bn][2] bf16 (VNNI pairs, as the
// dot-product instructions read them) and C -> [Mb][Nb][bm][bn] f32. Padding makes
// every block full; bk is even, so K blocks never split a VNNI pair.
#pragma once

#include <cstdint>

#include "harness/core/aligned_buffer.h"
#include "harness/core/problem.h"
#include "reference/bf16.h"
#include "reference/packing.h"

namespace nkbench {

// chooseGemmBlocking's blocks with bk rounded up to even (an odd K pads one zero).
GemmBlocking chooseBf16GemmBlocking(const Problem& problem, const GemmBlocking& preferred,
                                    std::int64_t m_multiple = 1, std::int64_t n_multiple = 1);

// The bf16 BRGEMM each block call of `gemm` solves (K = bk, batch = K blocks).
Problem bf16BlockProblem(const Problem& gemm, const GemmBlocking& blocking);

class Bf16BlockedGemm {
 public:
  // Throws Error unless problem is a bf16 gemm with batch 1, beta 0, and bk is even.
  Bf16BlockedGemm(const Problem& problem, const GemmBlocking& blocking);

  void pack(const BFloat16* a, const BFloat16* b);
  void unpack(float* c) const;

  // Calls block_kernel(a_blocks, b_blocks, c_block) once per C block; the kernel
  // computes c_block = sum over kBlocks() of A block * B block (beta 0).
  template <class BlockKernel>
  void compute(BlockKernel&& block_kernel) {
    const std::int64_t a_panel = kb_ * blocking_.bm * blocking_.bk;
    const std::int64_t b_panel = kb_ * blocking_.bk * blocking_.bn;
    const std::int64_t c_block = blocking_.bm * blocking_.bn;
    for (std::int64_t i = 0; i < mb_; ++i)
      for (std::int64_t j = 0; j < nb_; ++j)
        block_kernel(packed_a_.data() + i * a_panel, packed_b_.data() + j * b_panel,
                     blocked_c_.data() + (i * nb_ + j) * c_block);
  }

  const GemmBlocking& blocking() const { return blocking_; }
  std::int64_t kBlocks() const { return kb_; }
  Problem blockProblem() const { return bf16BlockProblem(problem_, blocking_); }

 private:
  Problem problem_;
  GemmBlocking blocking_;
  std::int64_t mb_, nb_, kb_;
  BFloat16Buffer packed_a_, packed_b_;
  FloatBuffer blocked_c_;
};

}  // namespace nkbench
