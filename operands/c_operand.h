// The C operand a kernel is bound to, stored in the problem's C type, in
// guarded memory (guarded_buffer.h).
#pragma once

#include <optional>
#include <string>

#include "harness/core/memory/aligned_buffer.h"
#include "harness/core/memory/guarded_buffer.h"
#include "harness/core/problem.h"
#include "operands/bf16.h"
#include "operands/fill.h"

namespace nkbench {

class COperand {
 public:
  // C_init for beta 1; NaN for beta 0, so that an element a kernel leaves
  // unwritten can never pass verification.
  // `operand_set` names it in out-of-bounds reports (-1: the case's only set).
  COperand(const Problem& problem, const ProblemData& data, int operand_set = -1);

  void* data() { return bf16_.empty() ? static_cast<void*>(f32_.data()) : static_cast<void*>(bf16_.data()); }
  // The values as floats (exact for bf16), for verification.
  FloatBuffer asFloat() const;
  // One line when a kernel wrote into C's canary slack (see GuardedRegion).
  std::optional<std::string> canaryDamage() const;

 private:
  GuardedBuffer<float> f32_;
  GuardedBuffer<BFloat16> bf16_;
};

}  // namespace nkbench
