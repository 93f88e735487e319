// What tests that run a backend's kernel the way the runner does share: bf16
// copies of exact operands, inputs in guarded memory, and what a run gives back.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "harness/core/memory/aligned_buffer.h"
#include "harness/core/memory/guarded_buffer.h"
#include "harness/core/problem.h"
#include "kernels/backend.h"
#include "operands/bf16.h"
#include "reference/compare.h"

namespace nkbench::test {

struct RunOutcome {
  Verification verification;
  KernelInfo info;
};

// bf16 copies of exact-integer operands. The fill's small integers are bf16
// values, so the kernels see exactly what the reference sees; checked here.
inline BFloat16Buffer exactBf16(const FloatBuffer& values) {
  BFloat16Buffer out(values.size());
  toBFloat16(values.data(), values.size(), out.data());
  for (std::size_t i = 0; i < values.size(); ++i)
    if (toFloat(out[i]) != values[i]) {
      ADD_FAILURE() << "operand value " << values[i] << " is not a bfloat16";
      break;
    }
  return out;
}

// One input operand in guarded memory, as the runner places it: the f32
// values, or their exact bf16 copies for a bf16 operand.
class GuardedInput {
 public:
  GuardedInput() = default;
  GuardedInput(DType dtype, const FloatBuffer& values, const char* name) {
    if (dtype == DType::BF16)
      bf16_ = GuardedBuffer<BFloat16>(std::span<const BFloat16>(exactBf16(values)), {name});
    else
      f32_ = GuardedBuffer<float>(std::span<const float>(values), {name});
  }
  const void* data() const {
    return f32_.empty() ? static_cast<const void*>(bf16_.data()) : static_cast<const void*>(f32_.data());
  }
  std::optional<std::string> canaryDamage() const {
    std::optional<std::string> damage = f32_.canaryDamage();
    return damage ? damage : bf16_.canaryDamage();
  }

 private:
  GuardedBuffer<float> f32_;
  GuardedBuffer<BFloat16> bf16_;
};

}  // namespace nkbench::test
