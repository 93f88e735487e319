// The last conversion to the LLVM dialect, after the vector dialect's: memref,
// arith, func, cf (with cf.assert), ub and math in one partial conversion, the
// patterns frozen when the pass initializes (the compiler keeps its pipelines:
// once, and again only after a dialect loads). Run as the six upstream passes,
// each walked the whole kernel and froze its patterns again: about a quarter
// of the lowering's time. Functions take bare pointers
// (use-bare-ptr-memref-call-conv): a kernel is a C function of its operands'
// base addresses.
#pragma once

namespace nkbench::mlir_backend {

// "nkbench-scalar-to-llvm", a module pass.
inline constexpr const char* kScalarToLlvmPass = "nkbench-scalar-to-llvm";

void registerScalarToLlvmPass();

}  // namespace nkbench::mlir_backend
