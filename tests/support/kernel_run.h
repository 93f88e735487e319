// What tests that run a backend's kernel the way the runner does share: bf16
// copies of exact operands, and what a run gives back.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>

#include "harness/core/aligned_buffer.h"
#include "kernels/backend.h"
#include "reference/bf16.h"
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

}  // namespace nkbench::test
