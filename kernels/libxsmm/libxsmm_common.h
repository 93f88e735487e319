// Small pieces the libxsmm routes (f32 GEMM/BRGEMM, bf16, mlp) share; only
// included where libxsmm is built in.
#pragma once

#include <libxsmm.h>

#include <cstdint>

#include "operands/bf16.h"
#include "operands/packing.h"

namespace nkbench::libxsmm {

// Our operands as the words libxsmm's kernels take.
static_assert(sizeof(BFloat16) == sizeof(libxsmm_bfloat16));
inline const libxsmm_bfloat16* words(const BFloat16* values) {
  return reinterpret_cast<const libxsmm_bfloat16*>(values);
}
inline libxsmm_bfloat16* words(BFloat16* values) { return reinterpret_cast<libxsmm_bfloat16*>(values); }
inline const float* words(const float* values) { return values; }
inline float* words(float* values) { return values; }

// A GEMM's blocks, f32 and bf16 alike, and how far too few of them for the
// threads narrow (blockingForThreads).
inline constexpr GemmBlocking kGemmBlock{64, 64, 64};
inline constexpr GemmBlocking kLeastGemmBlock{8, 16, 64};

// Row-major C (rows x cols) = sum_b A_b (rows x depth) * B_b (depth x cols) is
// libxsmm's column-major C^T = sum_b B_b^T * A_b^T: libxsmm's A is our B, its m
// our cols and its n our rows. Operands are dense; batch strides are in bytes.
struct RowMajorBrgemmShape {
  libxsmm_blasint m, n, k;
  libxsmm_blasint stride_a, stride_b;
  libxsmm_blasint lda, ldb, ldc;
};

inline RowMajorBrgemmShape rowMajorBrgemmShape(std::int64_t rows, std::int64_t cols, std::int64_t depth,
                                               std::int64_t element_bytes) {
  const auto m = static_cast<libxsmm_blasint>(cols);
  const auto n = static_cast<libxsmm_blasint>(rows);
  const auto k = static_cast<libxsmm_blasint>(depth);
  return {.m = m,
          .n = n,
          .k = k,
          .stride_a = static_cast<libxsmm_blasint>(depth * cols * element_bytes),
          .stride_b = static_cast<libxsmm_blasint>(rows * depth * element_bytes),
          .lda = m,
          .ldb = k,
          .ldc = m};
}

}  // namespace nkbench::libxsmm
