#include "kernels/mlir/vector/rewrites/merged_writes.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "kernels/mlir/vector/rewrites/tensor_boxes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace nkbench::mlir_backend {
namespace {

// A whole-tensor vector is unrolled into its rows again when lowered; past
// this many elements the one vector would be bigger than a block's registers
// could ever hold, and the chain is not a block's write-back.
constexpr std::int64_t kMaxMergedElements = 1 << 14;

struct Piece {
  mlir::vector::TransferWriteOp write;
  Box box;
};

// The next write of a chain: the only user of `write`'s result, writing into it
// in the same block.
mlir::vector::TransferWriteOp nextInChain(mlir::vector::TransferWriteOp write) {
  if (!write.getResult() || !write.getResult().hasOneUse()) return {};
  auto next = llvm::dyn_cast<mlir::vector::TransferWriteOp>(*write.getResult().getUsers().begin());
  if (!next || next.getBase() != write.getResult() || next->getBlock() != write->getBlock()) return {};
  return next;
}

// A write the merged vector can take: static and in bounds, of the tensor's rank and element type.
std::optional<Piece> pieceOf(mlir::vector::TransferWriteOp write, mlir::RankedTensorType tensor) {
  const mlir::VectorType vector = write.getVectorType();
  if (vector.getRank() != tensor.getRank() || vector.isScalable() ||
      vector.getElementType() != tensor.getElementType() ||
      !llvm::all_of(write.getInBoundsValues(), [](bool in_bounds) { return in_bounds; }))
    return std::nullopt;
  std::optional<Box> box = writeBox(write, tensor);
  if (!box) return std::nullopt;
  for (std::int64_t d = 0; d < tensor.getRank(); ++d)
    if (box->end[d] - box->begin[d] != vector.getDimSize(d)) return std::nullopt;  // clipped: not in bounds
  return Piece{write, *box};
}

// The pieces of the chain that starts at `head`, when they cover its tensor
// exactly once; otherwise none.
std::vector<Piece> coveringChain(mlir::vector::TransferWriteOp head) {
  const auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(head.getBase().getType());
  if (!tensor || !tensor.hasStaticShape() || tensor.getNumElements() > kMaxMergedElements) return {};
  // The writes up to as many elements as the tensor has: any further one would write some twice.
  std::vector<Piece> pieces;
  std::vector<Box> boxes;
  std::int64_t written = 0;
  for (mlir::vector::TransferWriteOp write = head; write && written < tensor.getNumElements();
       write = nextInChain(write)) {
    std::optional<Piece> piece = pieceOf(write, tensor);
    if (!piece) return {};
    written += piece->box.elements();
    boxes.push_back(piece->box);
    pieces.push_back(*piece);
  }
  if (pieces.size() < 2 || !coversExactlyOnce(tensor.getShape(), boxes)) return {};
  return pieces;
}

void merge(std::vector<Piece>& pieces) {
  mlir::vector::TransferWriteOp last = pieces.back().write;
  const auto tensor = llvm::cast<mlir::RankedTensorType>(pieces.front().write.getBase().getType());
  const auto whole = mlir::VectorType::get(tensor.getShape(), tensor.getElementType());
  mlir::OpBuilder builder(last);
  const mlir::Location loc = last.getLoc();
  mlir::Value value = mlir::ub::PoisonOp::create(builder, loc, whole);
  const llvm::SmallVector<std::int64_t> unit_strides(std::size_t(tensor.getRank()), 1);
  for (Piece& piece : pieces)
    value = mlir::vector::InsertStridedSliceOp::create(builder, loc, piece.write.getVector(), value, piece.box.begin,
                                                       unit_strides);
  llvm::SmallVector<mlir::Value> origin(std::size_t(tensor.getRank()),
                                        mlir::arith::ConstantIndexOp::create(builder, loc, 0).getResult());
  auto merged = mlir::vector::TransferWriteOp::create(builder, loc, value, pieces.front().write.getBase(), origin,
                                                      llvm::SmallVector<bool>(std::size_t(tensor.getRank()), true));
  last.getResult().replaceAllUsesWith(merged.getResult());
  for (auto piece = pieces.rbegin(); piece != pieces.rend(); ++piece) piece->write.erase();
}

// The pieces a merged vector was put together from, in order, when they are
// insert_strided_slices into poison that cover it exactly once; otherwise none.
std::vector<mlir::vector::InsertStridedSliceOp> mergedPieces(mlir::Value value) {
  const auto whole = llvm::dyn_cast<mlir::VectorType>(value.getType());
  if (!whole || whole.isScalable() || whole.getNumElements() > kMaxMergedElements) return {};
  std::vector<mlir::vector::InsertStridedSliceOp> pieces;
  while (auto insert = value.getDefiningOp<mlir::vector::InsertStridedSliceOp>()) {
    if (!insert.getResult().hasOneUse() || insert.hasNonUnitStrides() ||
        insert.getSourceVectorType().getRank() != whole.getRank())
      return {};
    pieces.push_back(insert);
    value = insert.getDest();
  }
  if (!value.getDefiningOp<mlir::ub::PoisonOp>()) return {};
  std::vector<Box> boxes;
  for (mlir::vector::InsertStridedSliceOp insert : pieces) {
    Box& box = boxes.emplace_back();
    for (auto [offset, size] : llvm::zip(insert.getOffsets().getAsValueRange<mlir::IntegerAttr>(),
                                         insert.getSourceVectorType().getShape())) {
      box.begin.push_back(offset.getSExtValue());
      box.end.push_back(offset.getSExtValue() + size);
    }
  }
  if (pieces.empty() || !coversExactlyOnce(whole.getShape(), boxes)) return {};
  std::reverse(pieces.begin(), pieces.end());
  return pieces;
}

// `index` + `offset`, folded where `index` is a constant.
mlir::Value offsetIndex(mlir::OpBuilder& builder, mlir::Location loc, mlir::Value index, std::int64_t offset) {
  if (offset == 0) return index;
  if (std::optional<std::int64_t> constant = mlir::getConstantIntValue(index))
    return mlir::arith::ConstantIndexOp::create(builder, loc, *constant + offset);
  return mlir::arith::AddIOp::create(builder, loc, index, mlir::arith::ConstantIndexOp::create(builder, loc, offset));
}

}  // namespace

std::int64_t splitMergedWrites(mlir::ModuleOp module) {
  std::vector<mlir::vector::TransferWriteOp> writes;
  module.walk([&](mlir::vector::TransferWriteOp write) {
    if (llvm::isa<mlir::MemRefType>(write.getBase().getType()) && !write.getMask() &&
        write.getPermutationMap().isIdentity() &&
        write.getVectorType().getElementType() == write.getShapedType().getElementType())
      writes.push_back(write);
  });
  std::int64_t split = 0;
  for (mlir::vector::TransferWriteOp write : writes) {
    const std::vector<mlir::vector::InsertStridedSliceOp> pieces = mergedPieces(write.getVector());
    if (pieces.empty()) continue;
    mlir::OpBuilder builder(write);
    const mlir::Location loc = write.getLoc();
    for (mlir::vector::InsertStridedSliceOp piece : pieces) {
      llvm::SmallVector<mlir::Value> indices;
      for (auto [index, offset] : llvm::zip(write.getIndices(), piece.getOffsets().getAsValueRange<mlir::IntegerAttr>()))
        indices.push_back(offsetIndex(builder, loc, index, offset.getSExtValue()));
      mlir::vector::TransferWriteOp::create(builder, loc, piece.getValueToStore(), write.getBase(), indices,
                                            write.getInBoundsValues());
    }
    mlir::Value value = write.getVector();
    write.erase();
    while (auto insert = value.getDefiningOp<mlir::vector::InsertStridedSliceOp>()) {
      value = insert.getDest();
      insert.erase();
    }
    // The poison, unless CSE gave it to another merged write too.
    if (mlir::Operation* poison = value.getDefiningOp(); poison->use_empty()) poison->erase();
    ++split;
  }
  return split;
}

std::int64_t mergeCoveringWriteChains(mlir::ModuleOp module) {
  // Heads: writes into a tensor that no write of a chain returned.
  std::vector<mlir::vector::TransferWriteOp> heads;
  module.walk([&](mlir::vector::TransferWriteOp write) {
    auto before = write.getBase().getDefiningOp<mlir::vector::TransferWriteOp>();
    if (!before || nextInChain(before) != write) heads.push_back(write);
  });
  if (!heads.empty()) module.getContext()->getOrLoadDialect<mlir::ub::UBDialect>();
  std::int64_t merged = 0;
  for (mlir::vector::TransferWriteOp head : heads) {
    std::vector<Piece> pieces = coveringChain(head);
    if (pieces.empty()) continue;
    merge(pieces);
    ++merged;
  }
  return merged;
}

}  // namespace nkbench::mlir_backend
