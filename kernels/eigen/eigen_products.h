// Eigen's fp32 products over row-major operands, in their own file so that only
// these (and no other inline code) are compiled for AVX2+FMA.
#pragma once

#include <cstdint>

namespace nkbench::eigen {

// C (m x n) = beta*C + sum over batch of A_b (m x k) * B_b (k x n), dense row-major,
// batch strides m*k and k*n; beta is 0 or 1. With beta 0, C is never read.
// Each product on `threads` threads (Eigen's own OpenMP split of a product).
void batchedProduct(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
                    std::int64_t k, std::int64_t batch, bool accumulate, int threads);

// One mlp layer: Y (m x n) = X (m x k) * W (k x n), then + bias (n, broadcast
// over the rows; null for none) and max(Y, 0) where `relu`, as passes over Y.
void denseLayer(const float* x, const float* w, const float* bias, float* y, std::int64_t m, std::int64_t n,
                std::int64_t k, bool relu, int threads);

// The vector ISA Eigen's kernels were compiled for, e.g. "avx2+fma".
const char* compiledIsa();

// compiledIsa() as an nkbench level ("avx2", "avx512"); empty below AVX2+FMA. Eigen
// has no runtime dispatch, so this is what runs under every cap (the least is avx2).
const char* compiledLevel();

}  // namespace nkbench::eigen
