#include "kernels/mlir/vector/buffer_rewrites/fused_epilogue.h"

#include <fmt/format.h>

#include "harness/core/error.h"
#include "kernels/mlir/vector/buffer_rewrites/kernel_buffers.h"
#include "kernels/mlir/vector/buffer_rewrites/transfer_overlap.h"
#include "kernels/mlir/vector/payload_ir.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nkbench::mlir_backend {
namespace {

// Where the kernel's f32 sums are stored: C, or a bf16 C's f32 sum on the stack.
mlir::Value sumBuffer(mlir::func::FuncOp function) {
  if (mlir::memref::AllocaOp sum = cSumOf(function)) return sum.getResult();
  return function.getArgument(kCArgument);
}

// Subviews folded into the transfers that use them, so that a transfer's
// indices are its buffer's own. (A transfer that may be out of bounds on its
// subview keeps it.)
void foldSubviewsIntoTransfers(mlir::ModuleOp module) {
  mlir::RewritePatternSet patterns(module.getContext());
  mlir::memref::populateFoldMemRefAliasOpPatterns(patterns);
  if (mlir::failed(mlir::applyPatternsGreedily(module, std::move(patterns))))
    throw Error("mlir: folding C's subviews for the fused epilogue did not converge");
}

// The bias of the store's columns, as the stored vector's shape: one vector
// of its last dimension, read within the store's bounds (mask, or in_bounds).
mlir::Value biasFor(mlir::OpBuilder& builder, mlir::vector::TransferWriteOp store, mlir::Value bias) {
  const mlir::Location loc = store.getLoc();
  const mlir::VectorType type = store.getVectorType();
  const std::int64_t rank = type.getRank();
  if (!store.getPermutationMap().isMinorIdentity() || store.getPermutationMap().getNumResults() != rank)
    throw Error("mlir: the fused epilogue needs C's stores in C's own dimension order");
  const mlir::VectorType row = mlir::VectorType::get({type.getShape().back()}, type.getElementType());
  mlir::Value mask;
  if (mlir::Value store_mask = store.getMask()) {
    for (std::int64_t d = 0; d + 1 < rank; ++d)
      if (type.getDimSize(d) != 1)
        throw Error("mlir: the fused epilogue cannot read the bias for a masked store of several rows");
    llvm::SmallVector<std::int64_t> leading(std::size_t(rank - 1), 0);
    mask = rank == 1 ? store_mask : mlir::vector::ExtractOp::create(builder, loc, store_mask, leading).getResult();
  }
  const mlir::Value zero = mlir::arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(0.0f));
  const bool in_bounds = store.getInBoundsValues().back();
  auto read = mlir::vector::TransferReadOp::create(builder, loc, row, bias, mlir::ValueRange{store.getIndices().back()},
                                                   zero, llvm::ArrayRef<bool>{in_bounds});
  if (mask) read.getMaskMutable().assign(mask);
  return mlir::vector::BroadcastOp::create(builder, loc, type, read.getResult());
}

}  // namespace

std::string FusedEpilogue::summary() const {
  return fmt::format("epilogue {} fused into {} accumulator stores, {} reads of C after them", epilogue,
                     fused_stores, reads_after);
}

FusedEpilogue fuseEpilogue(mlir::ModuleOp module, const MlpLayers& epilogue) {
  FusedEpilogue fused;
  fused.epilogue = epilogue.epilogueText();
  if (fused.epilogue.empty()) return fused;
  // Subviews folded into the transfers: their indices are then C's own, which
  // the bias's column index needs.
  foldSubviewsIntoTransfers(module);
  module.walk([&](mlir::func::FuncOp function) {
    const mlir::Value sums = sumBuffer(function);
    // What the kernel writes: read again after the stores, it would be a second pass.
    const mlir::Value c = function.getArgument(kCArgument);
    if (epilogue.bias && function.getNumArguments() <= kBiasArgument)
      throw Error("mlir: a kernel with a bias epilogue has no bias argument");
    llvm::SmallVector<mlir::vector::TransferWriteOp> stores;
    function.walk([&](mlir::vector::TransferWriteOp store) {
      if (store.getBase() == sums && !mlir::matchPattern(store.getVector(), mlir::m_Constant())) stores.push_back(store);
    });
    for (mlir::vector::TransferWriteOp store : stores) {
      mlir::OpBuilder builder(store);
      const mlir::Location loc = store.getLoc();
      mlir::Value value = store.getVector();
      if (epilogue.bias)
        value = mlir::arith::AddFOp::create(builder, loc, value,
                                            biasFor(builder, store, function.getArgument(kBiasArgument)));
      if (epilogue.activation == Activation::Relu) {
        const mlir::Value zeros = mlir::arith::ConstantOp::create(
            builder, loc, mlir::DenseElementsAttr::get(store.getVectorType(), builder.getF32FloatAttr(0.0f)));
        value = mlir::arith::MaximumFOp::create(builder, loc, value, zeros);
      }
      store.getValueToStoreMutable().assign(value);
      ++fused.fused_stores;
      TransferSpan stored = spanOf(store);
      if (stored.buffer == sums) stored.buffer = c;  // a bf16 C's sum stands for C
      for (mlir::Operation* after = store->getNextNode(); after; after = after->getNextNode())
        after->walk([&](mlir::vector::TransferReadOp read) {
          const TransferSpan span = spanOf(read);
          if (span.buffer == c && mayOverlap(stored, span)) ++fused.reads_after;
        });
    }
  });
  if (fused.fused_stores == 0) throw Error("mlir: the kernel has no stores of C to fuse its epilogue into");
  return fused;
}

}  // namespace nkbench::mlir_backend
