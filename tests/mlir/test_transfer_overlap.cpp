// Which elements of a buffer a vector transfer may touch (transfer_overlap.h):
// index ranges through loops, affine maps and subviews, and the overlap of two.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kernels/mlir/vector/buffer_rewrites/transfer_overlap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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
  ASSERT_EQ(transfers.size(), 3u);

  const TransferSpan first = spanOf(transfers["first_band"]);
  EXPECT_EQ(first.buffer, module->lookupSymbol<mlir::func::FuncOp>("bands").getArgument(0));
  ASSERT_TRUE(first.first[0] && first.first[1]);
  // Loop rows 0 and 9, block row 8: rows 8-17; block column 16 of a view at 32: 48.
  EXPECT_EQ(first.first[0]->lo, 8);
  EXPECT_EQ(first.first[0]->hi, 17);
  EXPECT_EQ(first.first[1]->lo, 48);
  EXPECT_EQ(first.first[1]->hi, 48);
  EXPECT_EQ(first.extent[0], 1);
  EXPECT_EQ(first.extent[1], 16);

  const TransferSpan second = spanOf(transfers["second_band"]);
  ASSERT_TRUE(second.first[0]);
  // Loop rows 18, 26, 34, 42 (the last start below 50), plus 7.
  EXPECT_EQ(second.first[0]->lo, 25);
  EXPECT_EQ(second.first[0]->hi, 49);

  EXPECT_FALSE(spanOf(transfers["anywhere"]).first[0].has_value());
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

}  // namespace
}  // namespace nkbench::mlir_backend
