// Eigen 3.4: the portable fp32 baseline (single-threaded GEMM on row-major Maps);
// bf16 operands are widened to f32 in pack().
#pragma once

#include <memory>

#include "kernels/backend.h"

namespace nkbench {

std::unique_ptr<Backend> makeEigenBackend(const BackendConfig& config);

}  // namespace nkbench
