#include "kernels/mlir/vector/rewrites/transfer_subsets.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
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

Offset decompose(mlir::OpFoldResult offset) {
  Offset result;
  while (true) {
    if (std::optional<std::int64_t> constant = mlir::getConstantIntValue(offset)) {
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

template <typename TransferOp>
struct TransferSubset : mlir::SubsetOpInterface::ExternalModel<TransferSubset<TransferOp>, TransferOp> {
  mlir::FailureOr<mlir::HyperrectangularSlice> getAccessedHyperrectangularSlice(mlir::Operation* op) const {
    auto transfer = llvm::cast<TransferOp>(op);
    mlir::Builder builder(op->getContext());
    llvm::SmallVector<mlir::OpFoldResult> offsets(transfer.getIndices().begin(), transfer.getIndices().end());
    llvm::SmallVector<mlir::OpFoldResult> sizes;
    for (std::int64_t size : transfer.getTransferChunkAccessed()) sizes.push_back(builder.getIndexAttr(size));
    return mlir::HyperrectangularSlice(offsets, sizes);
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
    mlir::FailureOr<mlir::HyperrectangularSlice> other = candidate.getAccessedHyperrectangularSlice();
    if (mlir::failed(other) || !equivalent(self.getTensorContainer(), candidate.getTensorContainer()))
      return SliceRelation::Overlapping;
    return relateSlices(*self.getAccessedHyperrectangularSlice(), *other);
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
  const auto a_offsets = a.getMixedOffsets(), b_offsets = b.getMixedOffsets();
  if (a_offsets.size() != b_offsets.size()) return SliceRelation::Unknown;
  bool equal = true, known = true;
  for (std::size_t d = 0; d < a_offsets.size(); ++d) {
    const std::optional<std::int64_t> a_size = mlir::getConstantIntValue(a.getMixedSizes()[d]);
    const std::optional<std::int64_t> b_size = mlir::getConstantIntValue(b.getMixedSizes()[d]);
    if (!a_size || !b_size || !mlir::isOneInteger(a.getMixedStrides()[d]) || !mlir::isOneInteger(b.getMixedStrides()[d]))
      return SliceRelation::Unknown;
    const Offset a_offset = decompose(a_offsets[d]), b_offset = decompose(b_offsets[d]);
    if (a_offset.base != b_offset.base) {
      known = false;
      continue;
    }
    std::int64_t a_end = 0, b_end = 0;
    if (__builtin_add_overflow(a_offset.constant, *a_size, &a_end) ||
        __builtin_add_overflow(b_offset.constant, *b_size, &b_end))
      return SliceRelation::Unknown;
    if (a_end <= b_offset.constant || b_end <= a_offset.constant) return SliceRelation::Disjoint;
    equal = equal && a_offset.constant == b_offset.constant && *a_size == *b_size;
  }
  if (!known) return SliceRelation::Unknown;
  return equal ? SliceRelation::Equal : SliceRelation::Overlapping;
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
