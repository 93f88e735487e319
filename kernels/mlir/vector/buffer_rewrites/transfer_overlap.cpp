#include "kernels/mlir/vector/buffer_rewrites/transfer_overlap.h"

#include "harness/core/error.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nkbench::mlir_backend {

void foldSubviewsIntoTransfers(mlir::Operation* root) {
  mlir::RewritePatternSet patterns(root->getContext());
  mlir::memref::populateFoldMemRefAliasOpPatterns(patterns);
  if (mlir::failed(mlir::applyPatternsGreedily(root, std::move(patterns))))
    throw Error("mlir: folding subviews into their transfers did not converge");
}

namespace {

// An affine expression's range over its operands' ranges: sums, and products and
// floor divisions by positive constants (folded subviews give d0 + d1 and s0 + c).
std::optional<IndexRange> rangeOfExpr(mlir::AffineExpr expr, llvm::ArrayRef<IndexRange> operands,
                                      unsigned num_dims) {
  if (auto constant = llvm::dyn_cast<mlir::AffineConstantExpr>(expr))
    return IndexRange{constant.getValue(), constant.getValue()};
  if (auto dim = llvm::dyn_cast<mlir::AffineDimExpr>(expr)) return operands[dim.getPosition()];
  if (auto symbol = llvm::dyn_cast<mlir::AffineSymbolExpr>(expr)) return operands[num_dims + symbol.getPosition()];
  auto binary = llvm::dyn_cast<mlir::AffineBinaryOpExpr>(expr);
  if (!binary) return std::nullopt;
  const std::optional<IndexRange> lhs = rangeOfExpr(binary.getLHS(), operands, num_dims);
  const std::optional<IndexRange> rhs = rangeOfExpr(binary.getRHS(), operands, num_dims);
  if (!lhs || !rhs) return std::nullopt;
  const bool positive_constant = rhs->lo == rhs->hi && rhs->lo > 0;
  switch (binary.getKind()) {
    case mlir::AffineExprKind::Add:
      return IndexRange{lhs->lo + rhs->lo, lhs->hi + rhs->hi};
    case mlir::AffineExprKind::Mul:
      if (positive_constant) return IndexRange{lhs->lo * rhs->lo, lhs->hi * rhs->lo};
      return std::nullopt;
    case mlir::AffineExprKind::FloorDiv:
      if (positive_constant && lhs->lo >= 0) return IndexRange{lhs->lo / rhs->lo, lhs->hi / rhs->lo};
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<IndexRange> rangeOf(mlir::Value index) {
  if (const std::optional<std::int64_t> constant = mlir::getConstantIntValue(index)) return IndexRange{*constant, *constant};
  if (auto loop = mlir::scf::getForInductionVarOwner(index)) {
    const std::optional<std::int64_t> lb = mlir::getConstantIntValue(loop.getLowerBound());
    const std::optional<std::int64_t> ub = mlir::getConstantIntValue(loop.getUpperBound());
    const std::optional<std::int64_t> step = mlir::getConstantIntValue(loop.getStep());
    if (!lb || !ub || !step || *step <= 0 || *ub <= *lb) return std::nullopt;
    return IndexRange{*lb, *lb + (*ub - *lb - 1) / *step * *step};
  }
  if (auto apply = index.getDefiningOp<mlir::affine::AffineApplyOp>()) {
    llvm::SmallVector<IndexRange, 4> operands;
    for (mlir::Value operand : apply.getMapOperands()) {
      const std::optional<IndexRange> range = rangeOf(operand);
      if (!range) return std::nullopt;
      operands.push_back(*range);
    }
    return rangeOfExpr(apply.getAffineMap().getResult(0), operands, apply.getAffineMap().getNumDims());
  }
  if (auto sum = index.getDefiningOp<mlir::arith::AddIOp>()) {
    const std::optional<IndexRange> a = rangeOf(sum.getLhs()), b = rangeOf(sum.getRhs());
    if (a && b) return IndexRange{a->lo + b->lo, a->hi + b->hi};
  }
  return std::nullopt;
}

namespace {

std::optional<IndexRange> rangeOfOffset(mlir::OpFoldResult index) {
  if (auto value = llvm::dyn_cast<mlir::Value>(index)) return rangeOf(value);
  const std::optional<std::int64_t> constant = mlir::getConstantIntValue(index);
  if (!constant) return std::nullopt;
  return IndexRange{*constant, *constant};
}

}  // namespace

TransferSpan spanOf(mlir::VectorTransferOpInterface transfer) {
  TransferSpan span;
  span.buffer = transfer.getBase();
  const auto rank = static_cast<std::int64_t>(transfer.getIndices().size());
  const mlir::VectorType type = transfer.getVectorType();
  for (std::int64_t d = 0; d < rank; ++d) {
    span.first.push_back(rangeOf(transfer.getIndices()[d]));
    const std::int64_t vector_dim = d - (rank - type.getRank());
    span.extent.push_back(vector_dim < 0 ? 1 : type.getDimSize(vector_dim));
  }
  while (auto subview = span.buffer.getDefiningOp<mlir::memref::SubViewOp>()) {
    if (!subview.hasUnitStride() || subview.getSourceType().getRank() != rank) break;
    for (auto [first, offset] : llvm::zip_equal(span.first, subview.getMixedOffsets())) {
      const std::optional<IndexRange> at = rangeOfOffset(offset);
      first = first && at ? std::optional(IndexRange{first->lo + at->lo, first->hi + at->hi}) : std::nullopt;
    }
    span.buffer = subview.getSource();
  }
  return span;
}

bool mayOverlap(const TransferSpan& a, const TransferSpan& b) {
  if (a.buffer != b.buffer || a.first.size() != b.first.size()) return true;
  for (std::size_t d = 0; d < a.first.size(); ++d) {
    if (!a.first[d] || !b.first[d]) continue;
    if (b.first[d]->hi + b.extent[d] <= a.first[d]->lo || a.first[d]->hi + a.extent[d] <= b.first[d]->lo) return false;
  }
  return true;
}

}  // namespace nkbench::mlir_backend
