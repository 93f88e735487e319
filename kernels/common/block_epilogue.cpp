#include "kernels/common/block_epilogue.h"

#include <algorithm>

namespace nkbench {
namespace {

// One row: simple enough for the compiler to vectorize.
inline float epilogueOf(float value, float bias, bool relu) {
  const float biased = value + bias;
  return relu ? std::max(biased, 0.0f) : biased;
}

}  // namespace

void applyBlockEpilogue(float* block, std::int64_t rows, std::int64_t cols, const float* bias,
                        Activation activation) {
  const bool relu = activation == Activation::Relu;
  for (std::int64_t i = 0; i < rows; ++i) {
    float* row = block + i * cols;
    for (std::int64_t j = 0; j < cols; ++j) row[j] = epilogueOf(row[j], bias ? bias[j] : 0.0f, relu);
  }
}

void applyBlockEpilogue(BFloat16* block, std::int64_t rows, std::int64_t cols, const float* bias,
                        Activation activation) {
  const bool relu = activation == Activation::Relu;
  for (std::int64_t i = 0; i < rows; ++i) {
    BFloat16* row = block + i * cols;
    for (std::int64_t j = 0; j < cols; ++j)
      row[j] = toBFloat16(epilogueOf(toFloat(row[j]), bias ? bias[j] : 0.0f, relu));
  }
}

}  // namespace nkbench
