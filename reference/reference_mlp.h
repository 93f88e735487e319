// Reference outputs of an mlp (problem.h), layer by layer in double precision.
#pragma once

#include "harness/core/problem.h"
#include "reference/fill.h"
#include "reference/reference_gemm.h"

namespace nkbench {

// value: every layer's output before any rounding to a bf16 C, computed from the
// previous layer's output as the kernels read it (rounded to bf16 for a bf16
// mlp). magnitude: the bound error analysis propagates, |X| |W_1| + |b_1| for
// the first layer and magnitude_{l-1} |W_l| + |b_l| after it (an activation
// such as ReLU does not grow an error), so that an error carried in from an
// earlier layer stays within a tolerance proportional to it.
ReferenceResult referenceMlp(const Problem& problem, const ProblemData& data);

}  // namespace nkbench
