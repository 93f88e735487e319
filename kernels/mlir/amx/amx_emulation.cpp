#include "kernels/mlir/amx/amx_emulation.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace nkbench::mlir_backend {
namespace {

mlir::VectorType vectorOf(mlir::amx::TileType tile) {
  return mlir::VectorType::get(tile.getShape(), tile.getElementType());
}

// The payload's loads and stores take their row stride from the memref.
mlir::LogicalResult requireImplicitStride(mlir::Operation* op, mlir::Value stride,
                                          mlir::ConversionPatternRewriter& rewriter) {
  return stride ? rewriter.notifyMatchFailure(op, "explicit tile strides are not emulated") : mlir::success();
}

struct TileZero : mlir::OpConversionPattern<mlir::amx::TileZeroOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult matchAndRewrite(mlir::amx::TileZeroOp op, OpAdaptor,
                                      mlir::ConversionPatternRewriter& rewriter) const override {
    const mlir::VectorType type = vectorOf(op.getTileType());
    rewriter.replaceOpWithNewOp<mlir::arith::ConstantOp>(op, type, rewriter.getZeroAttr(type));
    return mlir::success();
  }
};

struct TileLoad : mlir::OpConversionPattern<mlir::amx::TileLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult matchAndRewrite(mlir::amx::TileLoadOp op, OpAdaptor adaptor,
                                      mlir::ConversionPatternRewriter& rewriter) const override {
    if (mlir::failed(requireImplicitStride(op, op.getStride(), rewriter))) return mlir::failure();
    const mlir::VectorType type = vectorOf(op.getTileType());
    const mlir::Value padding = mlir::arith::ConstantOp::create(rewriter, op.getLoc(), type.getElementType(),
                                                                rewriter.getZeroAttr(type.getElementType()));
    rewriter.replaceOpWithNewOp<mlir::vector::TransferReadOp>(op, type, adaptor.getBase(), adaptor.getIndices(),
                                                              padding, llvm::ArrayRef<bool>{true, true});
    return mlir::success();
  }
};

struct TileStore : mlir::OpConversionPattern<mlir::amx::TileStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult matchAndRewrite(mlir::amx::TileStoreOp op, OpAdaptor adaptor,
                                      mlir::ConversionPatternRewriter& rewriter) const override {
    if (mlir::failed(requireImplicitStride(op, op.getStride(), rewriter))) return mlir::failure();
    rewriter.replaceOpWithNewOp<mlir::vector::TransferWriteOp>(op, adaptor.getVal(), adaptor.getBase(),
                                                               adaptor.getIndices(), llvm::ArrayRef<bool>{true, true});
    return mlir::success();
  }
};

// tdpbf16ps's f32 arithmetic treats denormal inputs as zero and flushes
// denormal results to zero (DAZ and FTZ, whatever MXCSR says): values strictly
// between -FLT_MIN and FLT_MIN become a zero of their sign (x * 0).
mlir::Value flushDenormals(mlir::OpBuilder& builder, mlir::Location loc, mlir::Value value) {
  const auto type = mlir::cast<mlir::VectorType>(value.getType());
  auto splat = [&](float scalar) {
    return mlir::arith::ConstantOp::create(builder, loc, type,
                                           mlir::DenseElementsAttr::get(type, builder.getF32FloatAttr(scalar)));
  };
  const float smallest_normal = std::numeric_limits<float>::min();
  const mlir::Value below = mlir::arith::CmpFOp::create(builder, loc, mlir::arith::CmpFPredicate::OLT, value,
                                                        splat(smallest_normal));
  const mlir::Value above = mlir::arith::CmpFOp::create(builder, loc, mlir::arith::CmpFPredicate::OGT, value,
                                                        splat(-smallest_normal));
  const mlir::Value tiny = mlir::arith::AndIOp::create(builder, loc, below, above);
  const mlir::Value signed_zero = mlir::arith::MulFOp::create(builder, loc, value, splat(0.0f));
  return mlir::arith::SelectOp::create(builder, loc, tiny, signed_zero, value);
}

// tdpbf16ps as the Intel SDM defines it: per C element, the even products of
// the instruction's pairs p = 0..P-1 are summed into one f32 partial and the
// odd products into another (each step an FMA, starting from zero), then C +=
// (even + odd); every step rounds to nearest even with DAZ and FTZ. Per pair and
// half, the A column is broadcast along j and the B half-row along i, so each
// step is one tile-wide FMA.
struct TileMulF : mlir::OpConversionPattern<mlir::amx::TileMulFOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult matchAndRewrite(mlir::amx::TileMulFOp op, OpAdaptor adaptor,
                                      mlir::ConversionPatternRewriter& rewriter) const override {
    const mlir::Location loc = op.getLoc();
    const mlir::VectorType c_type = vectorOf(op.getTileType());
    const std::int64_t rows = c_type.getDimSize(0), cols = c_type.getDimSize(1);
    const std::int64_t pairs = op.getLhsTileType().getDimSize(1) / 2;
    const mlir::Type f32 = rewriter.getF32Type();
    const mlir::Value zero = mlir::arith::ConstantOp::create(rewriter, loc, c_type, rewriter.getZeroAttr(c_type));
    mlir::Value partial[2] = {zero, zero};  // even, odd
    for (std::int64_t p = 0; p < pairs; ++p) {
      const mlir::Value b_row = mlir::vector::ExtractOp::create(rewriter, loc, adaptor.getRhs(), p);
      auto b_halves = mlir::vector::DeinterleaveOp::create(rewriter, loc, b_row);
      for (const std::int64_t half : {0, 1}) {
        const mlir::Value a_column = mlir::vector::ExtractStridedSliceOp::create(
            rewriter, loc, adaptor.getLhs(), llvm::ArrayRef<std::int64_t>{0, 2 * p + half},
            llvm::ArrayRef<std::int64_t>{rows, 1}, llvm::ArrayRef<std::int64_t>{1, 1});
        const mlir::Value a_wide = flushDenormals(
            rewriter, loc, mlir::arith::ExtFOp::create(rewriter, loc, mlir::VectorType::get({rows, 1}, f32), a_column));
        const mlir::Value b_half = half ? b_halves.getRes2() : b_halves.getRes1();
        const mlir::Value b_wide = flushDenormals(
            rewriter, loc, mlir::arith::ExtFOp::create(rewriter, loc, mlir::VectorType::get({cols}, f32), b_half));
        const mlir::Value step = mlir::vector::FMAOp::create(
            rewriter, loc, mlir::vector::BroadcastOp::create(rewriter, loc, c_type, a_wide),
            mlir::vector::BroadcastOp::create(rewriter, loc, c_type, b_wide), partial[half]);
        partial[half] = flushDenormals(rewriter, loc, step);
      }
    }
    const mlir::Value pair_sum =
        flushDenormals(rewriter, loc, mlir::arith::AddFOp::create(rewriter, loc, partial[0], partial[1]));
    const mlir::Value acc = flushDenormals(rewriter, loc, adaptor.getAcc());
    rewriter.replaceOp(op, flushDenormals(rewriter, loc, mlir::arith::AddFOp::create(rewriter, loc, acc, pair_sum)));
    return mlir::success();
  }
};

}  // namespace

mlir::LogicalResult emulateAmxTiles(mlir::ModuleOp module) {
  mlir::MLIRContext* context = module.getContext();
  mlir::TypeConverter converter;
  converter.addConversion([](mlir::Type type) { return type; });
  converter.addConversion([](mlir::amx::TileType tile) -> mlir::Type { return vectorOf(tile); });
  mlir::ConversionTarget target(*context);
  target.addIllegalDialect<mlir::amx::AMXDialect>();
  target.markUnknownOpDynamicallyLegal([](mlir::Operation*) { return true; });
  mlir::RewritePatternSet patterns(context);
  mlir::scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);
  patterns.add<TileZero, TileLoad, TileStore, TileMulF>(converter, context);
  return mlir::applyPartialConversion(module, target, std::move(patterns));
}

}  // namespace nkbench::mlir_backend
