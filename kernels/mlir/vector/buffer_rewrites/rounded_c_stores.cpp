#include "kernels/mlir/vector/buffer_rewrites/rounded_c_stores.h"

#include <fmt/format.h>

#include "kernels/mlir/vector/buffer_rewrites/kernel_buffers.h"
#include "kernels/mlir/vector/buffer_rewrites/transfer_overlap.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

namespace nkbench::mlir_backend {
namespace {

// The sum's transfers, by what they do, and its subviews.
struct SumTransfers {
  llvm::SmallVector<mlir::vector::TransferWriteOp> prologue;      // sum = extf(C)
  llvm::SmallVector<mlir::vector::TransferWriteOp> rounding;      // C = truncf(sum), the epilogue's stores into C
  llvm::SmallVector<mlir::vector::TransferWriteOp> accumulators;  // every other store of the sum
  llvm::SmallVector<mlir::vector::TransferReadOp> reads;          // every read of the sum outside the epilogue
  llvm::SmallVector<mlir::memref::SubViewOp> subviews;            // each after the view it is cut from
};

bool readsFromC(mlir::Value value, mlir::Value c) {
  auto read = value.getDefiningOp<mlir::vector::TransferReadOp>();
  return read && spanOf(read).buffer == c;
}

// The epilogue reads the sum only to round it into C.
bool onlyRoundedIntoC(mlir::vector::TransferReadOp read, mlir::Value c) {
  return llvm::all_of(read->getUsers(), [&](mlir::Operation* user) {
    auto truncf = llvm::dyn_cast<mlir::arith::TruncFOp>(user);
    return truncf && llvm::all_of(truncf->getUsers(), [&](mlir::Operation* store) {
             auto write = llvm::dyn_cast<mlir::vector::TransferWriteOp>(store);
             return write && spanOf(write).buffer == c && write.getVector() == truncf.getResult();
           });
  });
}

// False where the sum, or a view of it, is used otherwise than by transfers
// and subviews that keep its rank.
bool classify(mlir::Value view, mlir::Value c, SumTransfers& transfers) {
  for (mlir::Operation* user : view.getUsers()) {
    if (auto subview = llvm::dyn_cast<mlir::memref::SubViewOp>(user)) {
      if (subview.getSource() != view || subview.getType().getRank() != subview.getSourceType().getRank()) return false;
      transfers.subviews.push_back(subview);
      if (!classify(subview.getResult(), c, transfers)) return false;
    } else if (auto write = llvm::dyn_cast<mlir::vector::TransferWriteOp>(user)) {
      if (write.getBase() != view) return false;
      auto extf = write.getVector().getDefiningOp<mlir::arith::ExtFOp>();
      if (extf && readsFromC(extf.getIn(), c))
        transfers.prologue.push_back(write);
      else
        transfers.accumulators.push_back(write);
    } else if (auto read = llvm::dyn_cast<mlir::vector::TransferReadOp>(user)) {
      if (!onlyRoundedIntoC(read, c)) {
        transfers.reads.push_back(read);
        continue;
      }
      for (mlir::Operation* truncf : read->getUsers())
        for (mlir::Operation* store : truncf->getUsers())
          transfers.rounding.push_back(llvm::cast<mlir::vector::TransferWriteOp>(store));
    } else {
      return false;
    }
  }
  return true;
}

// Whether some read of the sum, or of C (which the stores will write), may see
// one of the sum's stores: after it in one iteration of the loops around both,
// or in a later iteration of one of them.
bool readAfterStore(mlir::func::FuncOp function, mlir::Value sum, mlir::Value c, const SumTransfers& transfers) {
  llvm::SmallPtrSet<mlir::Operation*, 32> stores, sum_reads;
  for (mlir::vector::TransferWriteOp store : transfers.accumulators) stores.insert(store);
  for (mlir::vector::TransferReadOp read : transfers.reads) sum_reads.insert(read);
  // Spans with `loop`'s induction variable kept apart (null: none), in the sum.
  auto span = [&](mlir::Operation* op, mlir::scf::ForOp loop) {
    TransferSpan in_sum = spanOf(llvm::cast<mlir::VectorTransferOpInterface>(op), loop);
    if (in_sum.buffer == c) in_sum.buffer = sum;
    return in_sum;
  };
  llvm::SmallVector<TransferSpan> stored;  // of the stores met so far, no loop kept apart
  bool seen = false;
  // Transfers have no regions: the walk meets them in program order.
  function.walk([&](mlir::Operation* op) {
    if (stores.contains(op)) stored.push_back(span(op, {}));
    auto read = llvm::dyn_cast<mlir::vector::TransferReadOp>(op);
    if (!read) return mlir::WalkResult::advance();
    // The sum's reads outside the epilogue, and every read of C.
    TransferSpan read_span = spanOf(read);
    if (!sum_reads.contains(op) && read_span.buffer != c) return mlir::WalkResult::advance();
    if (read_span.buffer == c) read_span.buffer = sum;
    seen = llvm::any_of(stored, [&](const TransferSpan& store) { return mayOverlap(store, read_span); });
    for (auto loop = op->getParentOfType<mlir::scf::ForOp>(); loop && !seen;
         loop = loop->getParentOfType<mlir::scf::ForOp>()) {
      read_span = span(op, loop);
      seen = llvm::any_of(stores, [&](mlir::Operation* store) {
        return loop->isProperAncestor(store) && mayOverlapAcrossIterations(span(store, loop), read_span, loop);
      });
    }
    return seen ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
  });
  return seen;
}

// A read of the sum becomes a read of C where its padding, poison or a zero,
// has a bf16 equal.
bool paddingCarriesOver(mlir::vector::TransferReadOp read) {
  llvm::APFloat value(0.0f);
  return read.getPadding().getDefiningOp<mlir::ub::PoisonOp>() ||
         (mlir::matchPattern(read.getPadding(), mlir::m_ConstantFloat(&value)) && value.isZero());
}

mlir::Value bf16Padding(mlir::OpBuilder& builder, mlir::vector::TransferReadOp read) {
  if (read.getPadding().getDefiningOp<mlir::ub::PoisonOp>())
    return mlir::ub::PoisonOp::create(builder, read.getLoc(), builder.getBF16Type());
  llvm::APFloat value(0.0f);
  (void)mlir::matchPattern(read.getPadding(), mlir::m_ConstantFloat(&value));
  return mlir::arith::ConstantOp::create(builder, read.getLoc(),
                                         builder.getFloatAttr(builder.getBF16Type(), value.isNegative() ? -0.0 : 0.0));
}

mlir::VectorType asBf16(mlir::VectorType type) { return type.clone(mlir::BFloat16Type::get(type.getContext())); }

RoundedCStores roundFunction(mlir::func::FuncOp function, mlir::memref::AllocaOp sum) {
  RoundedCStores result;
  result.bf16_c = true;
  const mlir::Value c = function.getArgument(kCArgument);
  SumTransfers transfers;
  if (!classify(sum.getResult(), c, transfers)) {
    result.kept_because = "it has other users than transfers and subviews";
    return result;
  }
  if (transfers.accumulators.empty()) {
    result.kept_because = "no block stores into it";
    return result;
  }
  if (!llvm::all_of(transfers.reads, paddingCarriesOver)) {
    result.kept_because = "a read of it pads with a value other than zero";
    return result;
  }
  if (readAfterStore(function, sum.getResult(), c, transfers)) {
    result.kept_because = "a read of it may see one of its stores";
    return result;
  }
  // C's views in place of the sum's: the same offsets, sizes and strides (C has the sum's shape).
  llvm::DenseMap<mlir::Value, mlir::Value> c_view{{sum.getResult(), c}};
  for (mlir::memref::SubViewOp subview : transfers.subviews) {
    mlir::OpBuilder builder(subview);
    const auto type = llvm::cast<mlir::MemRefType>(subview.getType().clone(builder.getBF16Type()));
    c_view[subview.getResult()] = mlir::memref::SubViewOp::create(
        builder, subview.getLoc(), type, c_view.at(subview.getSource()), subview.getMixedOffsets(),
        subview.getMixedSizes(), subview.getMixedStrides());
  }
  for (mlir::vector::TransferReadOp read : transfers.reads) {
    mlir::OpBuilder builder(read);
    const mlir::Value padding = bf16Padding(builder, read);
    auto from_c = mlir::vector::TransferReadOp::create(builder, read.getLoc(), asBf16(read.getVectorType()),
                                                       c_view.at(read.getBase()), read.getIndices(),
                                                       read.getPermutationMapAttr(), padding, read.getMask(),
                                                       read.getInBoundsAttr());
    read.replaceAllUsesWith(
        mlir::arith::ExtFOp::create(builder, read.getLoc(), read.getVectorType(), from_c.getResult()).getResult());
    read->erase();
  }
  for (mlir::vector::TransferWriteOp store : transfers.accumulators) {
    mlir::OpBuilder builder(store);
    const mlir::Value rounded =
        mlir::arith::TruncFOp::create(builder, store.getLoc(), asBf16(store.getVectorType()), store.getVector());
    mlir::vector::TransferWriteOp::create(builder, store.getLoc(), rounded, c_view.at(store.getBase()),
                                          store.getIndices(), store.getPermutationMapAttr(), store.getMask(),
                                          store.getInBoundsAttr());
    store->erase();
  }
  result.applied = true;
  result.rounded_stores = static_cast<std::int64_t>(transfers.accumulators.size());
  result.widened_reads = static_cast<std::int64_t>(transfers.reads.size());
  // The passes that filled the sum and rounded it, then what only they used:
  // their loops, the sum's subviews, the sum.
  for (mlir::vector::TransferWriteOp store : transfers.rounding) store->erase();
  for (mlir::vector::TransferWriteOp store : transfers.prologue) store->erase();
  mlir::IRRewriter rewriter(function.getContext());
  (void)mlir::runRegionDCE(rewriter, function->getRegions());
  return result;
}

}  // namespace

std::string RoundedCStores::summary() const {
  if (!bf16_c) return "";
  if (!applied) return "bf16 C rounded from its f32 sum on the stack (" + kept_because + ")";
  return fmt::format("bf16 C rounded at {} accumulator stores, widened at {} accumulator reads", rounded_stores,
                     widened_reads);
}

RoundedCStores roundCAtItsStores(mlir::ModuleOp module, const RoundingRoute& route) {
  RoundedCStores result;
  // A kernel module holds one function, with at most one sum.
  const mlir::memref::AllocaOp sum = cSumOf(module);
  if (!sum) return result;
  result.bf16_c = true;
  if (!route.one_pass) {
    result.kept_because = "the batch runs in chunks";
    return result;
  }
  if (!route.native_rounding) {
    result.kept_because = "the rounding is integer arithmetic here, kept in one loop";
    return result;
  }
  return roundFunction(sum->getParentOfType<mlir::func::FuncOp>(), sum);
}

}  // namespace nkbench::mlir_backend
