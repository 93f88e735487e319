// Which BRGEMM the mlir backend compiles for a case, shared by `run` (which also
// packs the operands to match) and `show` (which only prints the code).
#pragma once

#include <cstdint>

#include "harness/core/problem.h"
#include "kernels/common/blocked_gemm.h"
#include "kernels/mlir/schedule.h"

namespace nkbench::mlir_backend {

// vdpbf16ps comes in 4, 8 and 16 lanes: the dot-product kernels see N padded to 4.
inline std::int64_t dotPaddedN(std::int64_t n) { return (n + 3) / 4 * 4; }

// The blocks a GEMM is cut into, each one call of the schedule's block kernel.
GemmBlocking gemmBlockingFor(const Problem& gemm, const Schedule& schedule);

// A GEMM's block kernel (whole AMX tiles on the tile route); a BRGEMM with K
// padded to whole tile steps on the tile route, or with K made even and N padded
// to 4 on the bf16 dot-product route; otherwise the problem itself.
Problem kernelProblemFor(const Problem& problem, const Schedule& schedule);

}  // namespace nkbench::mlir_backend
