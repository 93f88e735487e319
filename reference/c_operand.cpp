#include "reference/c_operand.h"

#include <limits>

namespace nkbench {

COperand::COperand(const Problem& problem, const ProblemData& data) {
  const FloatBuffer initial =
      problem.accumulate ? data.c_init : FloatBuffer(data.c_init.size(), std::numeric_limits<float>::quiet_NaN());
  if (problem.c_dtype == DType::BF16) {
    bf16_.resize(initial.size());
    toBFloat16(initial.data(), initial.size(), bf16_.data());
  } else {
    f32_ = initial;
  }
}

FloatBuffer COperand::asFloat() const {
  if (bf16_.empty()) return f32_;
  FloatBuffer values(bf16_.size());
  toFloat(bf16_.data(), bf16_.size(), values.data());
  return values;
}

}  // namespace nkbench
