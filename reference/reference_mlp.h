// Reference outputs of an mlp (problem.h), layer by layer in double precision.
#pragma once

#include "harness/core/problem.h"
#include "operands/fill.h"
#include "reference/reference_gemm.h"

namespace nkbench {

// value: every layer's output before any rounding to a bf16 C, computed from the
// previous layer's output as the kernels read it (rounded to bf16 for a bf16
// mlp). magnitude: the layer's own sum of |terms|, |Y_{l-1}| |W_l| + |b_l|.
// carried: the scale of what the kernel's Y_{l-1} may differ by, its sum's
// rounding and its own rounding to f32 or bf16 (itself carrying the layers
// before), weighted by W_l as independent errors combine: sqrt(d^2 W_l^2).
// An activation such as ReLU does not grow a difference.
ReferenceResult referenceMlp(const Problem& problem, const ProblemData& data);

}  // namespace nkbench
