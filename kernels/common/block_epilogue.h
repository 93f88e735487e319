// An mlp layer's epilogue as a pass over one output block, y = act(y + bias),
// for kernels that leave it out: libxsmm 1.17's BRGEMM, right after the
// block's kernel call while the block is in cache; mlir's `:epilogue=separate`
// (the comparison for the fused epilogue), once for the bias and once for the
// activation over each block of a layer's whole output.
#pragma once

#include <cstdint>

#include "harness/core/problem.h"
#include "operands/bf16.h"

namespace nkbench {

// `block`: rows x cols, row-major; `bias`: cols values, or null for none.
void applyBlockEpilogue(float* block, std::int64_t rows, std::int64_t cols, const float* bias,
                        Activation activation);
// A bf16 block: widened, the epilogue applied in f32, rounded back once.
void applyBlockEpilogue(BFloat16* block, std::int64_t rows, std::int64_t cols, const float* bias,
                        Activation activation);

}  // namespace nkbench
