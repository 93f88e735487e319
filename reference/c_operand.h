// The C operand a kernel is bound to, stored in the problem's C type.
#pragma once

#include "harness/core/aligned_buffer.h"
#include "harness/core/problem.h"
#include "reference/bf16.h"
#include "reference/fill.h"

namespace nkbench {

class COperand {
 public:
  // C_init for beta 1; NaN for beta 0, so that an element a kernel leaves
  // unwritten can never pass verification.
  COperand(const Problem& problem, const ProblemData& data);

  void* data() { return bf16_.empty() ? static_cast<void*>(f32_.data()) : static_cast<void*>(bf16_.data()); }
  // The values as floats (exact for bf16), for verification.
  FloatBuffer asFloat() const;

 private:
  FloatBuffer f32_;
  BFloat16Buffer bf16_;
};

}  // namespace nkbench
