#include "kernels/mlir/lowering/bf16_rounding.h"

#include <cstdint>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

namespace nkbench::mlir_backend {
namespace {

struct TruncToBf16AsIntegers : mlir::OpRewritePattern<mlir::arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(mlir::arith::TruncFOp op, mlir::PatternRewriter& rewriter) const override {
    const mlir::Value in = op.getIn();
    if (!mlir::getElementTypeOrSelf(in.getType()).isF32() || !mlir::getElementTypeOrSelf(op.getType()).isBF16())
      return mlir::failure();
    // Scalars and vectors: the integer ops below take no tensors.
    if (llvm::isa<mlir::ShapedType>(in.getType()) && !llvm::isa<mlir::VectorType>(in.getType()))
      return mlir::failure();
    const mlir::Location loc = op.getLoc();
    // The integer type of `width` bits, in the operand's vector shape if it has one.
    auto integers = [&](unsigned width) -> mlir::Type {
      const mlir::Type element = rewriter.getIntegerType(width);
      if (auto vector = llvm::dyn_cast<mlir::VectorType>(in.getType())) return vector.clone(element);
      return element;
    };
    auto constant = [&](mlir::Type type, std::int64_t value) -> mlir::Value {
      const auto attr = rewriter.getIntegerAttr(mlir::getElementTypeOrSelf(type), value);
      if (auto shaped = llvm::dyn_cast<mlir::ShapedType>(type))
        return mlir::arith::ConstantOp::create(rewriter, loc, mlir::DenseElementsAttr::get(shaped, attr));
      return mlir::arith::ConstantOp::create(rewriter, loc, attr);
    };
    const mlir::Type i32 = integers(32), i16 = integers(16);
    const mlir::Value sixteen = constant(i32, 16);
    // A NaN is made quiet, its sign and kept payload as they are, and its
    // dropped bits cleared, so that the rounding below carries nothing into it.
    // The select is on i32 lanes, before any bf16 value exists.
    const mlir::Value raw = mlir::arith::BitcastOp::create(rewriter, loc, i32, in);
    const mlir::Value quiet = mlir::arith::AndIOp::create(
        rewriter, loc, mlir::arith::OrIOp::create(rewriter, loc, raw, constant(i32, 0x00400000)),
        constant(i32, static_cast<std::int32_t>(0xffff0000u)));
    const mlir::Value is_nan = mlir::arith::CmpFOp::create(rewriter, loc, mlir::arith::CmpFPredicate::UNO, in, in);
    const mlir::Value bits = mlir::arith::SelectOp::create(rewriter, loc, is_nan, quiet, raw);
    // Round to nearest even: add 0x7fff plus the lowest bit that stays.
    const mlir::Value kept_lsb = mlir::arith::AndIOp::create(
        rewriter, loc, mlir::arith::ShRUIOp::create(rewriter, loc, bits, sixteen), constant(i32, 1));
    const mlir::Value biased = mlir::arith::AddIOp::create(
        rewriter, loc, mlir::arith::AddIOp::create(rewriter, loc, bits, constant(i32, 0x7fff)), kept_lsb);
    const mlir::Value rounded = mlir::arith::TruncIOp::create(
        rewriter, loc, i16, mlir::arith::ShRUIOp::create(rewriter, loc, biased, sixteen));
    rewriter.replaceOpWithNewOp<mlir::arith::BitcastOp>(op, op.getType(), rounded);
    return mlir::success();
  }
};

}  // namespace

void populateBf16RoundingPatterns(mlir::RewritePatternSet& patterns) {
  // Before upstream's, which would take the truncations too.
  patterns.add<TruncToBf16AsIntegers>(patterns.getContext(), /*benefit=*/2);
  mlir::arith::populateExpandBFloat16Patterns(patterns);
}

}  // namespace nkbench::mlir_backend
