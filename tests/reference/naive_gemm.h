// fp32 brgemm computed the plain way, in a chosen reduction order: the stand-in
// for a kernel under test.
#pragma once

#include <cstdint>

#include "harness/core/memory/aligned_buffer.h"
#include "harness/core/problem.h"
#include "operands/fill.h"
#include "tests/support/test_problems.h"

namespace nkbench::test {

enum class ReductionOrder { Forward, Backward };

inline FloatBuffer naiveFp32Gemm(const Problem& p, const ProblemData& data,
                                        ReductionOrder order) {
  FloatBuffer c(data.c_init);
  const std::int64_t length = p.reductionLength();
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      float sum = c[i * p.n + j];
      for (std::int64_t step = 0; step < length; ++step) {
        const std::int64_t r = order == ReductionOrder::Forward ? step : length - 1 - step;
        const std::int64_t b = r / p.k, k = r % p.k;
        sum += data.a[(b * p.m + i) * p.k + k] * data.b[(b * p.k + k) * p.n + j];
      }
      c[i * p.n + j] = sum;
    }
  return c;
}

}  // namespace nkbench::test
