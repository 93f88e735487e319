#include "kernels/mlir/amx_emulation.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

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

// tdpbf16ps: C[i][j] += sum over pairs p of A[i][2p+o] * B[p][2j+o], the odd
// element (o = 1) of each pair first. Per pair and half, the A column is
// broadcast along j and the B half-row along i, so each step is one tile-wide
// multiply and add; bf16 products are exact in f32, so the add is the only rounding.
struct TileMulF : mlir::OpConversionPattern<mlir::amx::TileMulFOp> {
  using OpConversionPattern::OpConversionPattern;
  mlir::LogicalResult matchAndRewrite(mlir::amx::TileMulFOp op, OpAdaptor adaptor,
                                      mlir::ConversionPatternRewriter& rewriter) const override {
    const mlir::Location loc = op.getLoc();
    const mlir::VectorType c_type = vectorOf(op.getTileType());
    const std::int64_t rows = c_type.getDimSize(0), cols = c_type.getDimSize(1);
    const std::int64_t pairs = op.getLhsTileType().getDimSize(1) / 2;
    const mlir::Type f32 = rewriter.getF32Type();
    mlir::Value acc = adaptor.getAcc();
    for (std::int64_t p = 0; p < pairs; ++p) {
      const mlir::Value b_row = mlir::vector::ExtractOp::create(rewriter, loc, adaptor.getRhs(), p);
      auto b_halves = mlir::vector::DeinterleaveOp::create(rewriter, loc, b_row);
      for (const std::int64_t half : {1, 0}) {
        const mlir::Value a_column = mlir::vector::ExtractStridedSliceOp::create(
            rewriter, loc, adaptor.getLhs(), llvm::ArrayRef<std::int64_t>{0, 2 * p + half},
            llvm::ArrayRef<std::int64_t>{rows, 1}, llvm::ArrayRef<std::int64_t>{1, 1});
        const mlir::Value a_wide =
            mlir::arith::ExtFOp::create(rewriter, loc, mlir::VectorType::get({rows, 1}, f32), a_column);
        const mlir::Value b_half = half ? b_halves.getRes2() : b_halves.getRes1();
        const mlir::Value b_wide =
            mlir::arith::ExtFOp::create(rewriter, loc, mlir::VectorType::get({cols}, f32), b_half);
        const mlir::Value product =
            mlir::arith::MulFOp::create(rewriter, loc, mlir::vector::BroadcastOp::create(rewriter, loc, c_type, a_wide),
                                        mlir::vector::BroadcastOp::create(rewriter, loc, c_type, b_wide));
        acc = mlir::arith::AddFOp::create(rewriter, loc, acc, product);
      }
    }
    rewriter.replaceOp(op, acc);
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
