// The payload: a BRGEMM problem as MLIR linalg on tensors, before any schedule.
#pragma once

#include <string>

#include "harness/core/problem.h"

namespace nkbench::mlir_backend {

// Name of the generated kernel function. It takes bare pointers (A, B, C) in
// the layout of problem.h and returns nothing.
inline constexpr const char* kKernelFunction = "nk_brgemm";

// `linalg.batch_reduce_matmul` over static shapes. The body stays on tensors
// (to_tensor ... restrict, materialize_in_destination) because hoisting of the
// C accumulators out of the reduction loops works on tensors. beta 0 is a
// `linalg.fill` of C that the schedule fuses into the register blocks.
std::string buildPayload(const Problem& brgemm);

}  // namespace nkbench::mlir_backend
