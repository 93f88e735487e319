// Which elements of a buffer a vector transfer may touch (transfer_overlap.h):
// index ranges through loops, affine maps and subviews, and the overlap of two.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kernels/mlir/vector/buffer_rewrites/transfer_overlap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "tests/support/kernel_ir.h"

namespace nkbench::mlir_backend {
namespace {

// Two bands of 9-row blocks of a 50x70 buffer: rows 0-17 in a loop of two
// blocks through a subview, rows 18-49 in a loop of four 8-row blocks whose
// indices are folded into affine maps; one read anywhere (a run-time row).
constexpr const char* kBands = R"mlir(
func.func @bands(%sum: memref<50x70xf32>, %v: vector<1x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c16 = arith.constant 16 : index
  %c18 = arith.constant 18 : index
  %c50 = arith.constant 50 : index
  %pad = arith.constant 0.0 : f32
  scf.for %r = %c0 to %c18 step %c9 {
    %block = memref.subview %sum[%r, 32] [9, 38] [1, 1] : memref<50x70xf32> to memref<9x38xf32, strided<[70, 1], offset: ?>>
    vector.transfer_write %v, %block[%c8, %c16] {name = "first_band", in_bounds = [true, false]} : vector<1x16xf32>, memref<9x38xf32, strided<[70, 1], offset: ?>>
  }
  scf.for %r = %c18 to %c50 step %c8 {
    %row = affine.apply affine_map<(d0) -> (d0 + 7)>(%r)
    %x = vector.transfer_read %sum[%row, %c0], %pad {name = "second_band", in_bounds = [true, true]} : memref<50x70xf32>, vector<1x16xf32>
  }
  %y = vector.transfer_read %sum[%n, %c0], %pad {name = "anywhere", in_bounds = [true, true]} : memref<50x70xf32>, vector<1x16xf32>
  %t = vector.transfer_read %sum[%c0, %c0], %pad {name = "transposed", in_bounds = [true],
      permutation_map = affine_map<(d0, d1) -> (d0)>} : memref<50x70xf32>, vector<4xf32>
  scf.for %r = %c0 to %c50 step %c9 {
    %scaled = affine.apply affine_map<(d0) -> (d0 * 2 + (d0 floordiv 9) * 3)>(%r)
    %z = vector.transfer_read %sum[%r, %scaled], %pad {name = "scaled", in_bounds = [true, false]} : memref<50x70xf32>, vector<1x16xf32>
    %acc = vector.transfer_read %sum[%r, %c0], %pad {name = "block_read", in_bounds = [true, true]} : memref<50x70xf32>, vector<1x16xf32>
    vector.transfer_write %acc, %sum[%r, %c0] {name = "block_store", in_bounds = [true, true]} : vector<1x16xf32>, memref<50x70xf32>
    %above = affine.apply affine_map<(d0) -> (d0 - 9)>(%r)
    %w = vector.transfer_read %sum[%above, %c0], %pad {name = "previous_block_read", in_bounds = [true, true]} : memref<50x70xf32>, vector<1x16xf32>
  }
  return
}
)mlir";

std::map<std::string, mlir::VectorTransferOpInterface> named(mlir::ModuleOp module) {
  std::map<std::string, mlir::VectorTransferOpInterface> transfers;
  module.walk([&](mlir::VectorTransferOpInterface transfer) {
    if (auto name = transfer->getAttrOfType<mlir::StringAttr>("name")) transfers[name.str()] = transfer;
  });
  return transfers;
}

TEST(TransferOverlap, SpansFollowLoopsAffineMapsAndSubviews) {
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, kBands);
  ASSERT_TRUE(module);
  auto transfers = named(*module);
  ASSERT_EQ(transfers.size(), 8u);

  const TransferSpan first = spanOf(transfers["first_band"]);
  EXPECT_EQ(first.buffer, module->lookupSymbol<mlir::func::FuncOp>("bands").getArgument(0));
  ASSERT_TRUE(first.first[0] && first.first[1]);
  // Loop rows 0 and 9, block row 8: rows 8-17; block column 16 of a view at 32: 48.
  EXPECT_EQ(first.first[0]->rest.lo, 8);
  EXPECT_EQ(first.first[0]->rest.hi, 17);
  EXPECT_EQ(first.first[1]->rest.lo, 48);
  EXPECT_EQ(first.first[1]->rest.hi, 48);
  EXPECT_EQ(first.extent[0], 1);
  EXPECT_EQ(first.extent[1], 16);

  const TransferSpan second = spanOf(transfers["second_band"]);
  ASSERT_TRUE(second.first[0]);
  // Loop rows 18, 26, 34, 42 (the last start below 50), plus 7.
  EXPECT_EQ(second.first[0]->rest.lo, 25);
  EXPECT_EQ(second.first[0]->rest.hi, 49);

  EXPECT_FALSE(spanOf(transfers["anywhere"]).first[0].has_value());
  // A map that is not a minor identity: nothing known.
  const TransferSpan transposed = spanOf(transfers["transposed"]);
  EXPECT_FALSE(transposed.first[0].has_value() || transposed.first[1].has_value());
  // 2r + 3 * (r floordiv 9) over r = 0, 9, ..., 45: 0 to 105.
  const TransferSpan scaled = spanOf(transfers["scaled"]);
  ASSERT_TRUE(scaled.first[1]);
  EXPECT_EQ(scaled.first[1]->rest.lo, 0);
  EXPECT_EQ(scaled.first[1]->rest.hi, 105);
  // The loop's induction variable kept apart: 2 per step of it, but a floor
  // division of it is not linear.
  auto loop = transfers["scaled"]->getParentOfType<mlir::scf::ForOp>();
  EXPECT_FALSE(spanOf(transfers["scaled"], loop).first[1].has_value());
  const TransferSpan block = spanOf(transfers["block_read"], loop);
  ASSERT_TRUE(block.first[0]);
  EXPECT_EQ(block.first[0]->per_iv, 1);
  EXPECT_EQ(block.first[0]->rest.lo, 0);
}

TEST(TransferOverlap, OnlyKnownDisjointRangesAreApart) {
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, kBands);
  ASSERT_TRUE(module);
  auto transfers = named(*module);
  // Rows 8-17 against 25-49; and against any row, where only the columns could
  // separate them: 48-63 against 0-15.
  EXPECT_FALSE(mayOverlap(transfers["first_band"], transfers["second_band"]));
  EXPECT_FALSE(mayOverlap(transfers["first_band"], transfers["anywhere"]));
  EXPECT_TRUE(mayOverlap(transfers["second_band"], transfers["anywhere"]));
  EXPECT_TRUE(mayOverlap(transfers["first_band"], transfers["first_band"]));
  // Different buffers: nothing is known.
  TransferSpan elsewhere = spanOf(transfers["second_band"]);
  elsewhere.buffer = mlir::Value();
  EXPECT_TRUE(mayOverlap(spanOf(transfers["first_band"]), elsewhere));
}

// A block's store and the reads of later iterations: of their own rows (a
// loop step of 9 rows past a 1-row store), apart; of the rows 9 above theirs,
// the previous iteration's, not.
TEST(TransferOverlap, LaterIterationsAreApartWhereTheLoopStepsPastTheStore) {
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, kBands);
  ASSERT_TRUE(module);
  auto transfers = named(*module);
  auto loop = transfers["block_store"]->getParentOfType<mlir::scf::ForOp>();
  const TransferSpan store = spanOf(transfers["block_store"], loop);
  EXPECT_FALSE(mayOverlapAcrossIterations(store, spanOf(transfers["block_read"], loop), loop));
  EXPECT_TRUE(mayOverlapAcrossIterations(store, spanOf(transfers["previous_block_read"], loop), loop));
  // In one iteration, compared over the whole loop, both may.
  EXPECT_TRUE(mayOverlap(transfers["block_store"], transfers["block_read"]));
}

}  // namespace
}  // namespace nkbench::mlir_backend
