#include "kernels/mlir/vector/rewrites/transfer_subsets.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/Interfaces/SubsetOpInterface.h"

namespace nkbench::mlir_backend {
namespace {

// An offset as `base + constant`; a null base for a constant offset.
struct Offset {
  mlir::Value base;
  std::int64_t constant = 0;
};

// The one operand of `apply` and the constant its map adds to it, when the map is `x + c` or `x`.
std::optional<Offset> operandPlusConstant(mlir::affine::AffineApplyOp apply) {
  const mlir::AffineMap map = apply.getAffineMap();
  if (map.getNumResults() != 1 || apply->getNumOperands() != 1) return std::nullopt;
  mlir::AffineExpr expr = map.getResult(0);
  std::int64_t constant = 0;
  if (auto sum = llvm::dyn_cast<mlir::AffineBinaryOpExpr>(expr); sum && sum.getKind() == mlir::AffineExprKind::Add) {
    auto addend = llvm::dyn_cast<mlir::AffineConstantExpr>(sum.getRHS());
    if (!addend) return std::nullopt;
    constant = addend.getValue();
    expr = sum.getLHS();
  }
  if (!llvm::isa<mlir::AffineDimExpr, mlir::AffineSymbolExpr>(expr)) return std::nullopt;
  return Offset{apply->getOperand(0), constant};
}

// The constant `offset` holds, if any. An arith.constant, the most common
// offset of the questions hoisting and bufferization ask by the thousand, is
// read without folding the op: getConstantIntValue's fold cost most of a question.
std::optional<std::int64_t> constantOf(mlir::OpFoldResult offset) {
  if (auto value = llvm::dyn_cast<mlir::Value>(offset)) {
    mlir::Operation* op = value.getDefiningOp();
    if (!op) return std::nullopt;
    if (auto constant = llvm::dyn_cast<mlir::arith::ConstantOp>(op))
      if (auto integer = llvm::dyn_cast<mlir::IntegerAttr>(constant.getValue())) return integer.getValue().getSExtValue();
  }
  return mlir::getConstantIntValue(offset);
}

Offset decompose(mlir::OpFoldResult offset) {
  Offset result;
  while (true) {
    if (std::optional<std::int64_t> constant = constantOf(offset)) {
      result.constant += *constant;
      return result;
    }
    const auto value = llvm::cast<mlir::Value>(offset);
    auto apply = value.getDefiningOp<mlir::affine::AffineApplyOp>();
    std::optional<Offset> step = apply ? operandPlusConstant(apply) : std::nullopt;
    if (!step) {
      result.base = value;
      return result;
    }
    result.constant += step->constant;
    offset = step->base;
  }
}

// A slice's unit-stride extent per dimension: where it starts and how far it reaches.
struct Extents {
  llvm::SmallVector<mlir::OpFoldResult, 4> offsets;
  llvm::SmallVector<std::int64_t, 4> sizes;
};

// Straight from a transfer's indices: the models answer for every pair of
// transfers that hoisting and bufferization ask about, and building index
// attributes for a HyperrectangularSlice per question cost more than relating it.
template <typename TransferOp>
Extents extentsOf(TransferOp transfer) {
  Extents extents;
  for (mlir::Value index : transfer.getIndices()) extents.offsets.push_back(index);
  extents.sizes = transfer.getTransferChunkAccessed();
  return extents;
}

// nullopt where some size or stride is not a constant, or a stride is not 1.
std::optional<Extents> extentsOf(const mlir::HyperrectangularSlice& slice) {
  Extents extents;
  extents.offsets.assign(slice.getMixedOffsets().begin(), slice.getMixedOffsets().end());
  for (std::size_t d = 0; d < extents.offsets.size(); ++d) {
    const std::optional<std::int64_t> size = mlir::getConstantIntValue(slice.getMixedSizes()[d]);
    if (!size || !mlir::isOneInteger(slice.getMixedStrides()[d])) return std::nullopt;
    extents.sizes.push_back(*size);
  }
  return extents;
}

std::optional<Extents> extentsOf(mlir::Operation* op) {
  if (auto read = llvm::dyn_cast<mlir::vector::TransferReadOp>(op)) return extentsOf(read);
  if (auto write = llvm::dyn_cast<mlir::vector::TransferWriteOp>(op)) return extentsOf(write);
  mlir::FailureOr<mlir::HyperrectangularSlice> slice =
      llvm::cast<mlir::SubsetOpInterface>(op).getAccessedHyperrectangularSlice();
  if (mlir::failed(slice)) return std::nullopt;
  return extentsOf(*slice);
}

SliceRelation relateExtents(const Extents& a, const Extents& b) {
  if (a.offsets.size() != b.offsets.size()) return SliceRelation::Unknown;
  bool equal = true, known = true;
  for (std::size_t d = 0; d < a.offsets.size(); ++d) {
    const Offset a_offset = decompose(a.offsets[d]), b_offset = decompose(b.offsets[d]);
    if (a_offset.base != b_offset.base) {
      known = false;
      continue;
    }
    std::int64_t a_end = 0, b_end = 0;
    if (__builtin_add_overflow(a_offset.constant, a.sizes[d], &a_end) ||
        __builtin_add_overflow(b_offset.constant, b.sizes[d], &b_end))
      return SliceRelation::Unknown;
    if (a_end <= b_offset.constant || b_end <= a_offset.constant) return SliceRelation::Disjoint;
    equal = equal && a_offset.constant == b_offset.constant && a.sizes[d] == b.sizes[d];
  }
  if (!known) return SliceRelation::Unknown;
  return equal ? SliceRelation::Equal : SliceRelation::Overlapping;
}

template <typename TransferOp>
struct TransferSubset : mlir::SubsetOpInterface::ExternalModel<TransferSubset<TransferOp>, TransferOp> {
  mlir::FailureOr<mlir::HyperrectangularSlice> getAccessedHyperrectangularSlice(mlir::Operation* op) const {
    const Extents extents = extentsOf(llvm::cast<TransferOp>(op));
    mlir::Builder builder(op->getContext());
    llvm::SmallVector<mlir::OpFoldResult> sizes;
    for (std::int64_t size : extents.sizes) sizes.push_back(builder.getIndexAttr(size));
    return mlir::HyperrectangularSlice(extents.offsets, sizes);
  }

  bool operatesOnEquivalentSubset(mlir::Operation* op, mlir::SubsetOpInterface candidate,
                                  llvm::function_ref<bool(mlir::Value, mlir::Value)> equivalent) const {
    switch (relate(op, candidate, equivalent)) {
      case SliceRelation::Equal: return true;
      case SliceRelation::Unknown: return mlir::detail::defaultOperatesOnEquivalentSubset(op, candidate, equivalent);
      default: return false;
    }
  }

  bool operatesOnDisjointSubset(mlir::Operation* op, mlir::SubsetOpInterface candidate,
                                llvm::function_ref<bool(mlir::Value, mlir::Value)> equivalent) const {
    switch (relate(op, candidate, equivalent)) {
      case SliceRelation::Disjoint: return true;
      case SliceRelation::Unknown: return mlir::detail::defaultOperatesOnDisjointSubset(op, candidate, equivalent);
      default: return false;
    }
  }

 private:
  // Overlapping stands for "not provably related" where the containers differ:
  // both questions are then answered no, as MLIR's own models answer them.
  static SliceRelation relate(mlir::Operation* op, mlir::SubsetOpInterface candidate,
                              llvm::function_ref<bool(mlir::Value, mlir::Value)> equivalent) {
    auto self = llvm::cast<mlir::SubsetOpInterface>(op);
    if (!equivalent(self.getTensorContainer(), candidate.getTensorContainer())) return SliceRelation::Overlapping;
    const std::optional<Extents> other = extentsOf(candidate.getOperation());
    if (!other) return SliceRelation::Unknown;
    return relateExtents(extentsOf(llvm::cast<TransferOp>(op)), *other);
  }
};

struct TransferReadExtraction
    : mlir::SubsetExtractionOpInterface::ExternalModel<TransferReadExtraction, mlir::vector::TransferReadOp> {
  mlir::OpOperand& getSourceOperand(mlir::Operation* op) const {
    return llvm::cast<mlir::vector::TransferReadOp>(op).getBaseMutable();
  }
};

struct TransferWriteInsertion
    : mlir::SubsetInsertionOpInterface::ExternalModel<TransferWriteInsertion, mlir::vector::TransferWriteOp> {
  mlir::OpOperand& getSourceOperand(mlir::Operation* op) const {
    return llvm::cast<mlir::vector::TransferWriteOp>(op).getValueToStoreMutable();
  }
  mlir::OpOperand& getDestinationOperand(mlir::Operation* op) const {
    return llvm::cast<mlir::vector::TransferWriteOp>(op).getBaseMutable();
  }
  // Hoisting moves existing reads; it never asks a write to build one.
  mlir::Value buildSubsetExtraction(mlir::Operation*, mlir::OpBuilder&, mlir::Location) const { return {}; }
  llvm::SmallVector<mlir::Value> getValuesNeededToBuildSubsetExtraction(mlir::Operation*) const { return {}; }
};

}  // namespace

SliceRelation relateSlices(const mlir::HyperrectangularSlice& a, const mlir::HyperrectangularSlice& b) {
  const std::optional<Extents> a_extents = extentsOf(a), b_extents = extentsOf(b);
  if (!a_extents || !b_extents) return SliceRelation::Unknown;
  return relateExtents(*a_extents, *b_extents);
}

void registerTransferSubsetModels(mlir::DialectRegistry& registry) {
  registry.addExtension(+[](mlir::MLIRContext* context, mlir::vector::VectorDialect*) {
    mlir::vector::TransferReadOp::attachInterface<TransferSubset<mlir::vector::TransferReadOp>,
                                                  TransferReadExtraction>(*context);
    mlir::vector::TransferWriteOp::attachInterface<TransferSubset<mlir::vector::TransferWriteOp>,
                                                   TransferWriteInsertion>(*context);
  });
}

}  // namespace nkbench::mlir_backend
