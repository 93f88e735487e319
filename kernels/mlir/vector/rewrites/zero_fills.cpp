#include "kernels/mlir/vector/rewrites/zero_fills.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/mlir/dialect_registry.h"
#include "kernels/mlir/vector/rewrites/tensor_boxes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nkbench::mlir_backend {
namespace {

using mlir::LogicalResult;
using mlir::PatternRewriter;

// The value a linalg.fill put into every element of `box` of `tensor`, past
// the inserts that miss the box; or null.
mlir::Value filledWith(mlir::Value tensor, const Box& box) {
  while (true) {
    if (auto fill = tensor.getDefiningOp<mlir::linalg::FillOp>()) return fill.getInputs()[0];
    auto insert = tensor.getDefiningOp<mlir::tensor::InsertSliceOp>();
    if (!insert) return {};
    const std::optional<Box> written = sliceBox(insert);
    if (!written || !disjoint(box, *written)) return {};
    tensor = insert.getDest();
  }
}

// Below: whether no op reads the elements of `tensor` that `covered` leaves out.
bool unobserved(mlir::Value tensor, CoverageGrid covered, int depth = 0);

// A slice that only filled elements: fill(v, slice), so that a piece whose
// destination it is finds a fill to fuse. The slice stays the fill's
// destination: the pieces still write into one another's results in turn, as
// bufferization needs to keep them in place in C.
struct RefillSliceOfFill final : mlir::OpRewritePattern<mlir::tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(mlir::tensor::ExtractSliceOp slice, PatternRewriter& rewriter) const override {
    if (llvm::all_of(slice->getUsers(), [](mlir::Operation* user) { return llvm::isa<mlir::linalg::FillOp>(user); }))
      return mlir::failure();
    // A slice no op reads needs no fill (FillNoOpReads would take it away again).
    if (const CoverageGrid none(slice.getResultType().getShape()); !none.usable() || unobserved(slice.getResult(), none))
      return mlir::failure();
    const std::optional<Box> box = sliceBox(slice);
    const mlir::Value value = box ? filledWith(slice.getSource(), *box) : mlir::Value();
    if (!value) return mlir::failure();
    rewriter.setInsertionPointAfter(slice);
    auto fill = mlir::linalg::FillOp::create(rewriter, slice.getLoc(), mlir::ValueRange{value},
                                             mlir::ValueRange{slice.getResult()});
    rewriter.replaceAllUsesExcept(slice.getResult(), fill.getResult(0), fill);
    return mlir::success();
  }
};

// Whether no op reads the elements of `tensor` that `covered` leaves out:
// they reach only fills' destinations (which a fill does not read), slices no
// op reads in turn, and one chain of insert destinations, whose inserts cover
// elements as they go.
bool unobserved(mlir::Value tensor, CoverageGrid covered, int depth) {
  constexpr int kMaxDepth = 8;
  if (depth > kMaxDepth) return false;
  while (!covered.full()) {
    mlir::Value next;
    for (mlir::OpOperand& use : tensor.getUses()) {
      mlir::Operation* user = use.getOwner();
      if (auto fill = llvm::dyn_cast<mlir::linalg::FillOp>(user); fill && &use == fill.getDpsInitOperand(0)) continue;
      if (auto slice = llvm::dyn_cast<mlir::tensor::ExtractSliceOp>(user)) {
        const CoverageGrid none(slice.getResultType().getShape());
        if (none.usable() && unobserved(slice.getResult(), none, depth + 1)) continue;
        return false;
      }
      auto insert = llvm::dyn_cast<mlir::tensor::InsertSliceOp>(user);
      const std::optional<Box> box = insert && !next && &use == &insert.getDestMutable() ? sliceBox(insert) : std::nullopt;
      if (!box) return false;
      covered.mark(*box);
      next = insert.getResult();
    }
    if (!next) return true;
    tensor = next;
  }
  return true;
}

// A fill of C whose every element the split pieces overwrite, each piece
// having a fill of its own: C itself (no memset of C before the pieces).
struct FillNoOpReads final : mlir::OpRewritePattern<mlir::linalg::FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(mlir::linalg::FillOp fill, PatternRewriter& rewriter) const override {
    if (fill->getNumResults() != 1) return mlir::failure();  // a fill of a buffer
    const auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(fill.getResult(0).getType());
    if (!tensor || fill.getResult(0).use_empty()) return mlir::failure();
    const CoverageGrid none(tensor.getShape());
    if (!none.usable() || !unobserved(fill.getResult(0), none)) return mlir::failure();
    rewriter.replaceOp(fill, fill.getOutputs()[0]);
    return mlir::success();
  }
};

// The value of a transfer_write of a splat constant over the whole of a
// statically shaped tensor (a vectorized fill), or null.
mlir::Attribute splatOverWholeTensor(mlir::vector::TransferWriteOp write) {
  const auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(write.getBase().getType());
  mlir::DenseElementsAttr splat;
  if (!tensor || !tensor.hasStaticShape() || write.getMask() || !write.getPermutationMap().isMinorIdentity() ||
      write.getVectorType().getShape() != tensor.getShape() ||
      !llvm::all_of(write.getIndices(), [](mlir::Value index) { return mlir::isConstantIntValue(index, 0); }) ||
      !mlir::matchPattern(write.getVector(), mlir::m_Constant(&splat)) || !splat.isSplat())
    return {};
  return splat.getSplatValue<mlir::Attribute>();
}

// The write whose elements `read` may see first, going back through writes
// of its tensor that it provably misses (unrolled blocks write C row by row,
// each next read reading the tensor the last write made), or null.
// (Upstream's disjointness compares indices as of minor identity maps: both
// transfers must have one.)
mlir::vector::TransferWriteOp writeSeenBy(mlir::vector::TransferReadOp read) {
  auto write = read.getBase().getDefiningOp<mlir::vector::TransferWriteOp>();
  if (!read.getPermutationMap().isMinorIdentity()) return write;
  while (write && !splatOverWholeTensor(write) && write.getPermutationMap().isMinorIdentity() &&
         mlir::vector::isDisjointTransferIndices(
             llvm::cast<mlir::VectorTransferOpInterface>(write.getOperation()),
             llvm::cast<mlir::VectorTransferOpInterface>(read.getOperation())))
    write = write.getBase().getDefiningOp<mlir::vector::TransferWriteOp>();
  return write;
}

// A read of a tensor that a splat write covers whole, where the read's padding
// is the splat's value (the zero fill of C under beta 0), directly or past
// writes it misses: the splat itself, so that accumulators, masked ones too,
// start in registers, not by loads that wait for the fill's stores (or the
// rows written since) to reach the cache.
struct ReadOfSplatFill final : mlir::OpRewritePattern<mlir::vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(mlir::vector::TransferReadOp read, PatternRewriter& rewriter) const override {
    auto fill = writeSeenBy(read);
    const mlir::Attribute value = fill ? splatOverWholeTensor(fill) : mlir::Attribute();
    mlir::Attribute padding;
    if (!value || read.getMask() || !mlir::matchPattern(read.getPadding(), mlir::m_Constant(&padding)) ||
        value != padding)
      return mlir::failure();
    rewriter.replaceOpWithNewOp<mlir::arith::ConstantOp>(read, mlir::DenseElementsAttr::get(read.getVectorType(), value));
    return mlir::success();
  }
};

// The result of a loop that carries `use`'s tensor through its iterations
// untouched, through loops nested in it too (hoisting leaves C's tile so), or null.
mlir::Value carriedUnchanged(mlir::OpOperand& use) {
  auto loop = llvm::dyn_cast<mlir::LoopLikeOpInterface>(use.getOwner());
  if (!loop) return {};
  const mlir::BlockArgument carried = loop.getTiedLoopRegionIterArg(&use);
  if (!carried) return {};
  const mlir::OpOperand* yielded = loop.getTiedLoopYieldedValue(carried);
  mlir::Value inside = carried;
  while (inside.hasOneUse()) {
    mlir::OpOperand& next = *inside.getUses().begin();
    if (&next == yielded) return loop.getTiedLoopResult(&use);
    inside = carriedUnchanged(next);
    if (!inside) return {};
  }
  return {};
}

// A transfer_write of a splat over a whole tensor, whose result then only
// passes through writes and inserts at constant places that cover the tensor,
// and through loops that leave it untouched (no read sees it): the tensor under it.
struct CoveredSplatWrite final : mlir::OpRewritePattern<mlir::vector::TransferWriteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(mlir::vector::TransferWriteOp fill, PatternRewriter& rewriter) const override {
    if (!splatOverWholeTensor(fill)) return mlir::failure();
    const auto tensor = llvm::cast<mlir::RankedTensorType>(fill.getBase().getType());
    CoverageGrid grid(tensor.getShape());
    if (!grid.usable()) return mlir::failure();
    mlir::Value current = fill.getResult();
    while (current.hasOneUse() && !grid.full()) {
      mlir::Operation* user = *current.getUsers().begin();
      std::optional<Box> box;
      if (auto write = llvm::dyn_cast<mlir::vector::TransferWriteOp>(user); write && write.getBase() == current)
        box = writeBox(write, tensor);
      else if (auto insert = llvm::dyn_cast<mlir::tensor::InsertSliceOp>(user); insert && insert.getDest() == current)
        box = sliceBox(insert);
      if (mlir::Value through = carriedUnchanged(*current.getUses().begin()); !box && through) {
        current = through;
        continue;
      }
      if (!box) break;
      grid.mark(*box);
      current = user->getResult(0);
    }
    if (!grid.full()) return mlir::failure();
    rewriter.replaceOp(fill, fill.getBase());
    return mlir::success();
  }
};

class ZeroFillsPass final : public mlir::PassWrapper<ZeroFillsPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ZeroFillsPass)
  llvm::StringRef getArgument() const override { return kZeroFillsPass; }
  llvm::StringRef getDescription() const override {
    return "Zero fills of C as fills of each piece of a split C, and covered splat writes removed";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::linalg::LinalgDialect, mlir::tensor::TensorDialect>();
  }
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<RefillSliceOfFill, FillNoOpReads, ReadOfSplatFill, CoveredSplatWrite>(&getContext());
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
  }
};

}  // namespace

void registerZeroFillsPass() { registerPassOnce<ZeroFillsPass>(); }

}  // namespace nkbench::mlir_backend
