// Blocked layouts used to run GEMM as a sequence of BRGEMM calls.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/core/memory/aligned_buffer.h"

namespace nkbench {

struct GemmBlocking {
  std::int64_t bm = 64;
  std::int64_t bn = 64;
  std::int64_t bk = 64;
};

// Number of blocks along a dimension (the last one zero-padded).
inline std::int64_t blockCount(std::int64_t extent, std::int64_t block) {
  return (extent + block - 1) / block;
}

// A (M x K row-major) -> [Mb][Kb][bm][bk], zero-padded. T: float or BFloat16.
template <class T>
void packABlocked(const T* a, std::int64_t m, std::int64_t k, const GemmBlocking& blocking,
                  AlignedBuffer<T>& packed);
// B (K x N row-major) -> [Nb][Kb][bk][bn], zero-padded. T: float or BFloat16.
template <class T>
void packBBlocked(const T* b, std::int64_t k, std::int64_t n, const GemmBlocking& blocking,
                  AlignedBuffer<T>& packed);
// C blocked [Mb][Nb][bm][bn] -> C (M x N row-major), dropping the padding.
// T: float or BFloat16.
template <class T>
void unpackCBlocked(const AlignedBuffer<T>& blocked, std::int64_t m, std::int64_t n,
                    const GemmBlocking& blocking, T* c);

}  // namespace nkbench
