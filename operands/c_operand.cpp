#include "operands/c_operand.h"

#include <limits>

namespace nkbench {

COperand::COperand(const Problem& problem, const ProblemData& data, int operand_set) {
  const FloatBuffer initial =
      problem.accumulate ? data.c_init : FloatBuffer(data.c_init.size(), std::numeric_limits<float>::quiet_NaN());
  const BufferName name{"C", operand_set};
  if (problem.c_dtype == DType::BF16) {
    bf16_ = GuardedBuffer<BFloat16>(initial.size(), name);
    toBFloat16(initial.data(), initial.size(), bf16_.data());
  } else {
    f32_ = GuardedBuffer<float>(std::span<const float>(initial), name);
  }
}

std::optional<std::string> COperand::canaryDamage() const {
  return bf16_.empty() ? f32_.canaryDamage() : bf16_.canaryDamage();
}

FloatBuffer COperand::asFloat() const {
  if (bf16_.empty()) return FloatBuffer(f32_.begin(), f32_.end());
  FloatBuffer values(bf16_.size());
  toFloat(bf16_.data(), bf16_.size(), values.data());
  return values;
}

}  // namespace nkbench
