// The payload: a BRGEMM problem as MLIR linalg on tensors, before any schedule.
#pragma once

#include <cstdint>
#include <string>

#include "harness/core/problem.h"
#include "kernels/mlir/vector/register_block_plan.h"

namespace nkbench::mlir_backend {

// Name of the generated kernel function. It takes bare pointers (A, B, C) in
// the layout of problem.h and returns nothing; an mlp layer's block kernel with
// a bias takes a fourth, its f32 bias of N columns (%Bias), which the fused
// epilogue reads (fused_epilogue.h).
inline constexpr const char* kKernelFunction = "nk_brgemm";

// A bf16 C is computed as an f32 C in an M x N buffer on the kernel's stack,
// between two elementwise linalg.generic ops tagged with these unit attributes for
// the schedule: under beta 1 a prologue that widens C into the buffer (arith.extf),
// and an epilogue that rounds the sum into C (arith.truncf), so that the kernel
// itself rounds, once.
inline constexpr const char* kCPrologue = "nkbench.c_prologue";
inline constexpr const char* kCEpilogue = "nkbench.c_epilogue";
// The f32 sum of a bf16 C on the stack (its memref.alloca), found by the fused epilogue.
inline constexpr const char* kCSumBuffer = "nkbench.c_sum";
// A tensor.extract_slice whose source holds zeros past the slice, which the
// kernel may read (edge_masks.h).
inline constexpr const char* kZeroPaddedSlice = "nkbench.zero_padded";
// Columns of B's VNNI rows on the dot-product route: N padded to whole vectors.
inline std::int64_t dotPackedColumns(std::int64_t n, std::int64_t lanes) { return (n + lanes - 1) / lanes * lanes; }
// The largest such buffer (512 x 512), far within any thread's stack.
inline constexpr std::int64_t kMaxBf16CSumBytes = std::int64_t{1} << 20;

// `linalg.batch_reduce_matmul` over static shapes. The body stays on tensors
// (to_tensor ... restrict, materialize_in_destination) because hoisting of the
// C accumulators out of the reduction loops works on tensors. beta 0 is a
// `linalg.fill` of C that the schedule fuses into the register blocks.
// With a reduction split, A and B are reshaped (no copy) to expose the split
// index s, a `linalg.contract` over (b, s, m, n, k) writes partial sums P[s],
// and a `linalg.reduce` adds them into C.
std::string buildPayload(const Problem& brgemm, const RegisterBlockPlan& plan);

// bf16 problems on dot-product nanokernels (even K) take A as [batch][M][K/2][2]
// and B in VNNI pairs [batch][K/2][Np][2], its rows padded with zero columns to
// Np = dotPackedColumns(N, lanes) so that an N edge's masked vector reads B in
// bounds; the payload slices B's N columns off it (tagged kZeroPaddedSlice) and
// a `linalg.contract` over (b, m, n, k, v) accumulates in f32. On the widening route they take row-major bf16 A and B;
// each region of the plan gets its own slices, widened to f32 by elementwise ops
// in front of its f32 batch_reduce_matmul (tagged `nkbench.region = i`). With A
// widened when packed (Bf16F32AFma) A is f32 and only B's slices are widened.
//
// The linalg op the schedule tiles, and the position of its M and N iteration dims.
struct PayloadOp {
  const char* name;
  int m_dim;
  int n_dim;
};
PayloadOp payloadOp(const RegisterBlockPlan& plan);

}  // namespace nkbench::mlir_backend
