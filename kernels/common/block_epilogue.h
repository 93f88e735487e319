// An mlp layer's epilogue as a pass over one output block, y = act(y + bias),
// for kernels that leave it out (libxsmm 1.17's BRGEMM; mlir's
// `:epilogue=separate`, the comparison for the fused epilogue). Run right
// after the block's kernel call, while the block is in cache.
#pragma once

#include <cstdint>

#include "harness/core/problem.h"
#include "reference/bf16.h"

namespace nkbench {

// `block`: rows x cols, row-major; `bias`: cols values, or null for none.
void applyBlockEpilogue(float* block, std::int64_t rows, std::int64_t cols, const float* bias,
                        Activation activation);
// A bf16 block: widened, the epilogue applied in f32, rounded back once.
void applyBlockEpilogue(BFloat16* block, std::int64_t rows, std::int64_t cols, const float* bias,
                        Activation activation);

}  // namespace nkbench
