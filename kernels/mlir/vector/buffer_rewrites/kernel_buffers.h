// The kernel function's buffers as the payload binds them (payload_ir.h): its
// arguments A, B, C (and an mlp block's bias), and a bf16 C's f32 sum on the stack.
#pragma once

#include "kernels/mlir/vector/payload_ir.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace nkbench::mlir_backend {

inline constexpr unsigned kCArgument = 2, kBiasArgument = 3;

// The memref.alloca tagged kCSumBuffer under `root`, or null.
inline mlir::memref::AllocaOp cSumOf(mlir::Operation* root) {
  mlir::memref::AllocaOp sum;
  root->walk([&](mlir::memref::AllocaOp alloca) {
    if (alloca->hasAttr(kCSumBuffer)) sum = alloca;
  });
  return sum;
}

}  // namespace nkbench::mlir_backend
