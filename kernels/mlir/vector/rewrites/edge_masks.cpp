#include "kernels/mlir/vector/rewrites/edge_masks.h"

#include "kernels/mlir/dialect_registry.h"
#include "kernels/mlir/vector/payload_ir.h"

#include <optional>

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nkbench::mlir_backend {
namespace {

using mlir::LogicalResult;
using mlir::PatternRewriter;
using mlir::vector::MaskOp;

// The sizes of a mask made of constants (vector.constant_mask, or
// vector.create_mask of constant bounds), or nullopt.
std::optional<llvm::SmallVector<std::int64_t>> constantMaskSizes(mlir::Value mask) {
  if (auto constant = mask.getDefiningOp<mlir::vector::ConstantMaskOp>())
    return llvm::SmallVector<std::int64_t>(constant.getMaskDimSizes());
  if (auto create = mask.getDefiningOp<mlir::vector::CreateMaskOp>()) {
    llvm::SmallVector<std::int64_t> sizes;
    for (mlir::Value bound : create.getOperands()) {
      const std::optional<std::int64_t> size = mlir::getConstantIntValue(bound);
      if (!size) return std::nullopt;
      sizes.push_back(*size);
    }
    return sizes;
  }
  return std::nullopt;
}

// The masked op, moved out of its vector.mask with `adjust` applied to it.
template <class Adjust>
void unwrap(MaskOp mask, PatternRewriter& rewriter, Adjust&& adjust) {
  rewriter.setInsertionPoint(mask);
  mlir::Operation* bare = rewriter.clone(*mask.getMaskableOp());
  adjust(bare);
  rewriter.replaceOp(mask, bare->getResults());
}

struct EdgeTransferOutOfBounds final : mlir::OpRewritePattern<MaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaskOp mask, PatternRewriter& rewriter) const override {
    auto transfer = llvm::dyn_cast_or_null<mlir::VectorTransferOpInterface>(mask.getMaskableOp());
    if (!transfer || mask.hasPassthru() || transfer.getMask()) return mlir::failure();
    if (!transfer.getPermutationMap().isMinorIdentity()) return mlir::failure();
    const auto sizes = constantMaskSizes(mask.getMask());
    const auto source = llvm::dyn_cast<mlir::ShapedType>(transfer.getBase().getType());
    const mlir::VectorType vector = transfer.getVectorType();
    if (!sizes || !source || !source.hasStaticShape() || sizes->size() != std::size_t(vector.getRank()))
      return mlir::failure();
    const std::int64_t leading = source.getRank() - vector.getRank();
    llvm::SmallVector<bool> in_bounds = transfer.getInBoundsValues();
    for (std::int64_t d = 0; d < vector.getRank(); ++d) {
      if ((*sizes)[d] == vector.getDimSize(d)) continue;
      // Off lanes only where the source ends: out of bounds there reads the
      // padding and writes nothing, as the mask did.
      const std::optional<std::int64_t> index = mlir::getConstantIntValue(transfer.getIndices()[leading + d]);
      if (!index || *index + (*sizes)[d] != source.getDimSize(leading + d)) return mlir::failure();
      in_bounds[d] = false;
    }
    unwrap(mask, rewriter, [&](mlir::Operation* bare) {
      bare->setAttr(transfer.getInBoundsAttrName(), rewriter.getBoolArrayAttr(in_bounds));
    });
    return mlir::success();
  }
};

struct EdgeContractionUnmasked final : mlir::OpRewritePattern<MaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaskOp mask, PatternRewriter& rewriter) const override {
    auto contraction = llvm::dyn_cast_or_null<mlir::vector::ContractionOp>(mask.getMaskableOp());
    if (!contraction || mask.hasPassthru()) return mlir::failure();
    const auto sizes = constantMaskSizes(mask.getMask());
    llvm::SmallVector<std::int64_t> bounds;
    contraction.getIterationBounds(bounds);
    if (!sizes || sizes->size() != bounds.size()) return mlir::failure();
    const mlir::ArrayAttr iterators = contraction.getIteratorTypes();
    for (std::size_t d = 0; d < bounds.size(); ++d)
      if ((*sizes)[d] != bounds[d] && !mlir::vector::isParallelIterator(iterators[d])) return mlir::failure();
    unwrap(mask, rewriter, [](mlir::Operation*) {});
    return mlir::success();
  }
};

// A slice that ends where its source ends in every dimension in which
// `transfer` is out of bounds: reading or writing past the slice is then past
// the source, and the transfer may address the source instead. Unit strides,
// no rank reduction; static offsets and sizes where the transfer is out of bounds.
bool slicedAtTheEnd(mlir::tensor::ExtractSliceOp slice, mlir::VectorTransferOpInterface transfer) {
  const mlir::RankedTensorType source = slice.getSourceType();
  if (!source.hasStaticShape() || slice.getResultType().getRank() != source.getRank() || !slice.hasUnitStride() ||
      !transfer.getPermutationMap().isMinorIdentity() || transfer.getMask())
    return false;
  const std::int64_t leading = source.getRank() - transfer.getVectorType().getRank();
  const llvm::SmallVector<bool> in_bounds = transfer.getInBoundsValues();
  for (std::size_t d = 0; d < in_bounds.size(); ++d) {
    if (in_bounds[d]) continue;
    const std::int64_t dim = leading + std::int64_t(d);
    const std::int64_t offset = slice.getStaticOffsets()[dim], size = slice.getStaticSizes()[dim];
    if (mlir::ShapedType::isDynamic(offset) || mlir::ShapedType::isDynamic(size) ||
        offset + size != source.getDimSize(dim))
      return false;
  }
  return true;
}

// The transfer's indices into the slice, moved by the slice's offsets.
llvm::SmallVector<mlir::Value> sourceIndices(PatternRewriter& rewriter, mlir::Location loc,
                                             mlir::tensor::ExtractSliceOp slice, mlir::ValueRange indices) {
  llvm::SmallVector<mlir::Value> moved;
  for (auto [index, offset] : llvm::zip(indices, slice.getMixedOffsets())) {
    if (mlir::isConstantIntValue(offset, 0)) {
      moved.push_back(index);
      continue;
    }
    const mlir::Value by = mlir::getValueOrCreateConstantIndexOp(rewriter, loc, offset);
    moved.push_back(mlir::arith::AddIOp::create(rewriter, loc, index, by).getResult());
  }
  return moved;
}

struct EdgeReadOfSlice final : mlir::OpRewritePattern<mlir::vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(mlir::vector::TransferReadOp read, PatternRewriter& rewriter) const override {
    auto slice = read.getBase().getDefiningOp<mlir::tensor::ExtractSliceOp>();
    if (!slice || !read.hasOutOfBoundsDim() || !slicedAtTheEnd(slice, read)) return mlir::failure();
    const auto indices = sourceIndices(rewriter, read.getLoc(), slice, read.getIndices());
    rewriter.modifyOpInPlace(read, [&] {
      read.getBaseMutable().assign(slice.getSource());
      read.getIndicesMutable().assign(indices);
    });
    return mlir::success();
  }
};

// A read of a slice the payload marks as cut from zero padding (the dot
// product's B, payload_ir.h): it may read the padded source instead, in bounds
// where it stays within the source. Only where the read pads with zeros (or
// poison): the source's padding then holds what the read would have made up.
struct EdgeReadOfZeroPaddedSlice final : mlir::OpRewritePattern<mlir::vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(mlir::vector::TransferReadOp read, PatternRewriter& rewriter) const override {
    auto slice = read.getBase().getDefiningOp<mlir::tensor::ExtractSliceOp>();
    if (!slice || !slice->hasAttr(kZeroPaddedSlice) || read.getMask() || !read.getPermutationMap().isMinorIdentity())
      return mlir::failure();
    const mlir::Value padding = read.getPadding();
    if (!mlir::matchPattern(padding, mlir::m_AnyZeroFloat()) && !mlir::matchPattern(padding, mlir::m_Zero()) &&
        !padding.getDefiningOp<mlir::ub::PoisonOp>())
      return mlir::failure();
    const mlir::RankedTensorType source = slice.getSourceType();
    if (!source.hasStaticShape() || slice.getResultType().getRank() != source.getRank() ||
        !llvm::all_of(slice.getStaticOffsets(), [](std::int64_t offset) { return offset == 0; }))
      return mlir::failure();
    const mlir::VectorType vector = read.getVectorType();
    const std::int64_t leading = source.getRank() - vector.getRank();
    llvm::SmallVector<bool> in_bounds = read.getInBoundsValues();
    for (std::int64_t d = 0; d < vector.getRank(); ++d) {
      if (in_bounds[d]) continue;
      const std::optional<std::int64_t> index = mlir::getConstantIntValue(read.getIndices()[leading + d]);
      if (!index || *index + vector.getDimSize(d) > source.getDimSize(leading + d)) return mlir::failure();
      in_bounds[d] = true;
    }
    rewriter.modifyOpInPlace(read, [&] {
      read.getBaseMutable().assign(slice.getSource());
      read->setAttr(read.getInBoundsAttrName(), rewriter.getBoolArrayAttr(in_bounds));
    });
    return mlir::success();
  }
};

// insert_slice(transfer_write(v, extract_slice(T, S)), T, S): the write lands
// in T itself, where the rest of the slice is T's own data.
struct EdgeWriteIntoSlice final : mlir::OpRewritePattern<mlir::tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(mlir::tensor::InsertSliceOp insert, PatternRewriter& rewriter) const override {
    auto write = insert.getSource().getDefiningOp<mlir::vector::TransferWriteOp>();
    if (!write || !write->hasOneUse() || !write.hasOutOfBoundsDim()) return mlir::failure();
    auto slice = write.getBase().getDefiningOp<mlir::tensor::ExtractSliceOp>();
    if (!slice || slice.getSource() != insert.getDest() || !slicedAtTheEnd(slice, write) ||
        slice.getStaticOffsets() != insert.getStaticOffsets() || slice.getStaticSizes() != insert.getStaticSizes() ||
        !insert.hasUnitStride())
      return mlir::failure();
    const auto indices = sourceIndices(rewriter, write.getLoc(), slice, write.getIndices());
    rewriter.replaceOpWithNewOp<mlir::vector::TransferWriteOp>(insert, write.getVector(), insert.getDest(), indices,
                                                                write.getPermutationMapAttr(), write.getInBoundsAttr());
    return mlir::success();
  }
};

class EdgeMaskPass final : public mlir::PassWrapper<EdgeMaskPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(EdgeMaskPass)
  llvm::StringRef getArgument() const override { return kEdgeMaskPass; }
  llvm::StringRef getDescription() const override {
    return "Masked transfers and contractions of vector edges as out-of-bounds transfers and unmasked contractions";
  }
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<EdgeTransferOutOfBounds, EdgeContractionUnmasked, EdgeReadOfSlice, EdgeReadOfZeroPaddedSlice,
                 EdgeWriteIntoSlice>(&getContext());
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
  }
};

}  // namespace

void registerEdgeMaskPass() { registerPassOnce<EdgeMaskPass>(); }

}  // namespace nkbench::mlir_backend
