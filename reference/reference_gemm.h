// Reference result of a problem, computed with Eigen in double precision.
#pragma once

#include <vector>

#include "harness/core/problem.h"

namespace nkbench {

struct ReferenceResult {
  std::vector<double> value;      // M x N: beta*C_init + sum_b A_b * B_b
  std::vector<double> magnitude;  // M x N: |beta*C_init| + sum_b |A_b| * |B_b|, for error bounds
  // An mlp's outputs: the scale of the difference that earlier layers'
  // roundings carry into each (rounding_model.h); empty for a GEMM.
  std::vector<double> carried;
};

ReferenceResult referenceGemm(const Problem& problem, const float* a, const float* b,
                              const float* c_init);

}  // namespace nkbench
