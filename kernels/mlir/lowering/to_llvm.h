// A bufferized kernel lowered to the LLVM dialect: the pipeline, and its last
// pass, which converts vector (x86vector's intrinsics included), memref, arith,
// func, cf (cf.assert included), ub and math in one partial conversion, with
// patterns frozen when the pass initializes (the compiler keeps its pipelines).
// As the seven upstream passes (convert-vector-to-llvm's conversion,
// finalize-memref-to-llvm, convert-arith-to-llvm, ...), each walked the whole
// kernel and froze its patterns again. Functions take bare pointers
// (use-bare-ptr-memref-call-conv): a kernel is a C function of its operands'
// base addresses.
#pragma once

namespace nkbench::mlir_backend {

// The vector transfers unrolled to 1-D ones (no stack buffers), loops to
// branches, subviews to offsets and strides, affine maps to arithmetic, vector
// ops to those the conversion handles (vector_lowering.h), then the conversion
// of every dialect left, the kernel a C function of its operands' pointers.
inline constexpr const char* kToLlvmPipeline =
    "nkbench-vector-to-scf,convert-scf-to-cf,nkbench-expand-strided-metadata,lower-affine,nkbench-lower-vector-ops,"
    "nkbench-to-llvm,reconcile-unrealized-casts";

// The conversion, "nkbench-to-llvm", a module pass.
inline constexpr const char* kToLlvmPass = "nkbench-to-llvm";

// Registers nkbench's passes of the pipeline, once per process (its upstream
// passes are registered with mlir::registerAllPasses).
void registerToLlvmPasses();

}  // namespace nkbench::mlir_backend
