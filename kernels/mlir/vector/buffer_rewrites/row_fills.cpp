#include "kernels/mlir/vector/buffer_rewrites/row_fills.h"

#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace nkbench::mlir_backend {
namespace {

// The splat `write` stores, where it stores one value over the whole of a
// static rank-2 buffer of its own (an identity layout: C or a stack buffer,
// not a view into one) with more than one row; a null attribute otherwise.
mlir::Attribute splatOverWholeBuffer(mlir::vector::TransferWriteOp write) {
  const auto buffer = llvm::dyn_cast<mlir::MemRefType>(write.getBase().getType());
  const mlir::VectorType vector = write.getVectorType();
  if (!buffer || !buffer.hasStaticShape() || !buffer.getLayout().isIdentity() || buffer.getRank() != 2 ||
      vector.getShape() != buffer.getShape() || buffer.getDimSize(0) < 2)
    return {};
  if (write.getMask() || !write.getPermutationMap().isMinorIdentity() ||
      !llvm::all_of(write.getIndices(), [](mlir::Value index) { return mlir::isZeroInteger(index); }))
    return {};
  mlir::DenseElementsAttr value;
  if (!mlir::matchPattern(write.getVector(), mlir::m_Constant(&value)) || !value.isSplat()) return {};
  return value.getSplatValue<mlir::Attribute>();
}

}  // namespace

std::int64_t rollWholeBufferFills(mlir::ModuleOp module) {
  std::vector<std::pair<mlir::vector::TransferWriteOp, mlir::Attribute>> fills;
  module.walk([&](mlir::vector::TransferWriteOp write) {
    if (mlir::Attribute value = splatOverWholeBuffer(write)) fills.emplace_back(write, value);
  });
  for (auto [fill, value] : fills) {
    mlir::OpBuilder b(fill);
    const mlir::Location loc = fill.getLoc();
    const mlir::VectorType whole = fill.getVectorType();
    const auto row_type = mlir::VectorType::get({whole.getDimSize(1)}, whole.getElementType());
    const mlir::Value row = mlir::arith::ConstantOp::create(b, loc, mlir::DenseElementsAttr::get(row_type, value));
    const mlir::Value zero = mlir::arith::ConstantIndexOp::create(b, loc, 0);
    const mlir::Value one = mlir::arith::ConstantIndexOp::create(b, loc, 1);
    const mlir::Value rows = mlir::arith::ConstantIndexOp::create(b, loc, whole.getDimSize(0));
    const mlir::Value buffer = fill.getBase();
    mlir::scf::ForOp::create(b, loc, zero, rows, one, mlir::ValueRange{},
                             [&](mlir::OpBuilder& body, mlir::Location at, mlir::Value r, mlir::ValueRange) {
                               mlir::vector::TransferWriteOp::create(body, at, row, buffer, mlir::ValueRange{r, zero},
                                                                     llvm::ArrayRef<bool>{true});
                               mlir::scf::YieldOp::create(body, at);
                             });
    const mlir::Value whole_value = fill.getVector();
    fill.erase();
    if (whole_value.use_empty()) whole_value.getDefiningOp()->erase();
  }
  return std::int64_t(fills.size());
}

}  // namespace nkbench::mlir_backend
