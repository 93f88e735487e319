#include "kernels/mlir/vector/buffer_rewrites/transfer_overlap.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace nkbench::mlir_backend {
namespace {

LinearIndex sum(const LinearIndex& a, const LinearIndex& b) {
  return {a.per_iv + b.per_iv, {a.rest.lo + b.rest.lo, a.rest.hi + b.rest.hi}};
}

LinearIndex constantIndex(std::int64_t value) { return {0, {value, value}}; }

// The loop's constant bounds and step; nullopt where not constant or empty.
struct LoopBounds {
  std::int64_t lb, last, step;
};
std::optional<LoopBounds> boundsOf(mlir::scf::ForOp loop) {
  const std::optional<std::int64_t> lb = mlir::getConstantIntValue(loop.getLowerBound());
  const std::optional<std::int64_t> ub = mlir::getConstantIntValue(loop.getUpperBound());
  const std::optional<std::int64_t> step = mlir::getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *step <= 0 || *ub <= *lb) return std::nullopt;
  return LoopBounds{*lb, *lb + (*ub - *lb - 1) / *step * *step, *step};
}

// An affine expression over its operands' linear forms: sums, and products and
// floor divisions by positive constants (a floor division only of a `rest`).
std::optional<LinearIndex> linearOfExpr(mlir::AffineExpr expr, llvm::ArrayRef<LinearIndex> operands,
                                        unsigned num_dims) {
  if (auto constant = llvm::dyn_cast<mlir::AffineConstantExpr>(expr)) return constantIndex(constant.getValue());
  if (auto dim = llvm::dyn_cast<mlir::AffineDimExpr>(expr)) return operands[dim.getPosition()];
  if (auto symbol = llvm::dyn_cast<mlir::AffineSymbolExpr>(expr)) return operands[num_dims + symbol.getPosition()];
  auto binary = llvm::dyn_cast<mlir::AffineBinaryOpExpr>(expr);
  if (!binary) return std::nullopt;
  const std::optional<LinearIndex> lhs = linearOfExpr(binary.getLHS(), operands, num_dims);
  const std::optional<LinearIndex> rhs = linearOfExpr(binary.getRHS(), operands, num_dims);
  if (!lhs || !rhs) return std::nullopt;
  const bool positive_constant = rhs->per_iv == 0 && rhs->rest.lo == rhs->rest.hi && rhs->rest.lo > 0;
  const std::int64_t factor = rhs->rest.lo;
  switch (binary.getKind()) {
    case mlir::AffineExprKind::Add:
      return sum(*lhs, *rhs);
    case mlir::AffineExprKind::Mul:
      if (!positive_constant) return std::nullopt;
      return LinearIndex{lhs->per_iv * factor, {lhs->rest.lo * factor, lhs->rest.hi * factor}};
    case mlir::AffineExprKind::FloorDiv:
      if (!positive_constant || lhs->per_iv != 0 || lhs->rest.lo < 0) return std::nullopt;
      return LinearIndex{0, {lhs->rest.lo / factor, lhs->rest.hi / factor}};
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<LinearIndex> linearIndexOf(mlir::Value index, mlir::scf::ForOp loop) {
  if (const std::optional<std::int64_t> constant = mlir::getConstantIntValue(index)) return constantIndex(*constant);
  if (auto owner = mlir::scf::getForInductionVarOwner(index)) {
    if (owner == loop) return LinearIndex{1, {0, 0}};
    const std::optional<LoopBounds> bounds = boundsOf(owner);
    if (!bounds) return std::nullopt;
    return LinearIndex{0, {bounds->lb, bounds->last}};
  }
  if (auto apply = index.getDefiningOp<mlir::affine::AffineApplyOp>()) {
    llvm::SmallVector<LinearIndex, 4> operands;
    for (mlir::Value operand : apply.getMapOperands()) {
      const std::optional<LinearIndex> linear = linearIndexOf(operand, loop);
      if (!linear) return std::nullopt;
      operands.push_back(*linear);
    }
    return linearOfExpr(apply.getAffineMap().getResult(0), operands, apply.getAffineMap().getNumDims());
  }
  if (auto add = index.getDefiningOp<mlir::arith::AddIOp>()) {
    const std::optional<LinearIndex> a = linearIndexOf(add.getLhs(), loop), b = linearIndexOf(add.getRhs(), loop);
    if (a && b) return sum(*a, *b);
  }
  return std::nullopt;
}

TransferSpan spanOf(mlir::VectorTransferOpInterface transfer, mlir::scf::ForOp loop) {
  TransferSpan span;
  span.buffer = transfer.getBase();
  const auto rank = static_cast<std::int64_t>(transfer.getIndices().size());
  const mlir::VectorType type = transfer.getVectorType();
  const bool minor_identity = transfer.getPermutationMap().isMinorIdentity();
  for (std::int64_t d = 0; d < rank; ++d) {
    span.first.push_back(minor_identity ? linearIndexOf(transfer.getIndices()[d], loop) : std::nullopt);
    const std::int64_t vector_dim = d - (rank - type.getRank());
    span.extent.push_back(vector_dim < 0 ? 1 : type.getDimSize(vector_dim));
  }
  while (auto subview = span.buffer.getDefiningOp<mlir::memref::SubViewOp>()) {
    if (!subview.hasUnitStride() || subview.getSourceType().getRank() != rank) break;
    for (auto [first, offset] : llvm::zip_equal(span.first, subview.getMixedOffsets())) {
      std::optional<LinearIndex> at;
      if (auto value = llvm::dyn_cast<mlir::Value>(offset))
        at = linearIndexOf(value, loop);
      else if (const std::optional<std::int64_t> constant = mlir::getConstantIntValue(offset))
        at = constantIndex(*constant);
      first = first && at ? std::optional(sum(*first, *at)) : std::nullopt;
    }
    span.buffer = subview.getSource();
  }
  return span;
}

bool mayOverlap(const TransferSpan& a, const TransferSpan& b) {
  if (a.buffer != b.buffer || a.first.size() != b.first.size()) return true;
  for (std::size_t d = 0; d < a.first.size(); ++d) {
    if (!a.first[d] || !b.first[d] || a.first[d]->per_iv != 0 || b.first[d]->per_iv != 0) continue;
    const IndexRange& x = a.first[d]->rest;
    const IndexRange& y = b.first[d]->rest;
    if (y.hi + b.extent[d] <= x.lo || x.hi + a.extent[d] <= y.lo) return false;
  }
  return true;
}

bool mayOverlapAcrossIterations(const TransferSpan& earlier, const TransferSpan& later, mlir::scf::ForOp loop) {
  const std::optional<LoopBounds> bounds = boundsOf(loop);
  if (!bounds || earlier.buffer != later.buffer || earlier.first.size() != later.first.size()) return true;
  for (std::size_t d = 0; d < earlier.first.size(); ++d) {
    const std::optional<LinearIndex>& e = earlier.first[d];
    const std::optional<LinearIndex>& l = later.first[d];
    if (!e || !l || e->per_iv != l->per_iv || e->per_iv <= 0) continue;
    // `later` at least one step on: its lowest element past `earlier`'s highest.
    if (l->rest.lo + e->per_iv * bounds->step >= e->rest.hi + earlier.extent[d]) return false;
  }
  return true;
}

}  // namespace nkbench::mlir_backend
