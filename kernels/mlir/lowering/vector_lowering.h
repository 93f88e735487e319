// The lowering's rewrite steps before the conversion to the LLVM dialect, as
// pattern-stage passes (pattern_stages.h). Each applies the pattern sets that
// the upstream pass it stands for applies in MLIR 22, with that pass's options
// as the kernels use them:
//  - nkbench-vector-to-scf: convert-vector-to-scf{full-unroll=true}, n-D
//    transfers unrolled into 1-D ones (no stack buffers);
//  - nkbench-expand-strided-metadata: expand-strided-metadata, subviews as
//    offsets and strides of their base buffer;
//  - nkbench-lower-vector-ops: the rewrites convert-vector-to-llvm applies before
//    its conversion (contractions, broadcasts, shape casts, masks, transposes
//    and transfers lowered to what the conversion handles); the conversion is
//    in to_llvm.h.
#pragma once

namespace nkbench::mlir_backend {

inline constexpr const char* kVectorToScfPass = "nkbench-vector-to-scf";
inline constexpr const char* kExpandStridedMetadataPass = "nkbench-expand-strided-metadata";
inline constexpr const char* kLowerVectorOpsPass = "nkbench-lower-vector-ops";

void registerVectorLoweringPasses();

}  // namespace nkbench::mlir_backend
