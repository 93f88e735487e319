// Masked N edges as the nanokernels need them. The linalg vectorizer covers an
// edge narrower than a vector with masks: a vector.mask around each transfer of
// B and C and around the contraction. Masked transfers are neither hoisted out
// of the reduction loops nor matched by the x86vector nanokernel rewrites, so a
// pass between vectorization and those steps rewrites them:
//  - a masked transfer whose mask ends exactly where a static dimension of its
//    source ends becomes the same transfer, unmasked, out of bounds in that
//    dimension (lowered to a masked load or store: vmovups {k} on AVX-512,
//    vmaskmovps on AVX2);
//  - a masked contraction whose mask leaves only parallel lanes off becomes the
//    unmasked contraction. Those lanes are past N: they are computed on the
//    zero padding of the out-of-bounds loads and never stored;
//  - an out-of-bounds transfer of a slice that ends where its source ends
//    addresses the source (the rest of the slice is the source's own data);
//  - a read of a slice cut from zero padding (kZeroPaddedSlice: the dot
//    product's VNNI B) reads the padded source, in bounds;
// The transform script runs it as `transform.apply_registered_pass`, after
// vectorization.
#pragma once

namespace nkbench::mlir_backend {

inline constexpr const char* kEdgeMaskPass = "nkbench-edge-masks-out-of-bounds";

// Registers the pass under kEdgeMaskPass, once per process.
void registerEdgeMaskPass();

}  // namespace nkbench::mlir_backend
