// A splat written over a whole buffer becomes a loop over its rows (row_fills.h);
// every other write stays as it is.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kernels/mlir/vector/buffer_rewrites/row_fills.h"
#include "tests/support/kernel_ir.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

namespace nkbench::mlir_backend {
namespace {

// @whole: C's zero fill over all of C, then a block's store. @partial: fills
// that do not cover a whole rank-2 buffer (a block, a view of one block's
// shape, a whole-shaped write that starts at row 8), a rank-3 buffer, a
// non-splat write, a masked one.
constexpr const char* kFills = R"mlir(
func.func @whole(%c: memref<64x48xf32>, %block: vector<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant dense<2.5> : vector<64x48xf32>
  vector.transfer_write %zero, %c[%c0, %c0] {in_bounds = [true, true]} : vector<64x48xf32>, memref<64x48xf32>
  vector.transfer_write %block, %c[%c8, %c0] {in_bounds = [true, true]} : vector<8x16xf32>, memref<64x48xf32>
  return
}
func.func @partial(%c: memref<64x48xf32>, %sums: memref<2x8x16xf32>, %m: vector<8x16xi1>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %zero_block = arith.constant dense<0.0> : vector<8x16xf32>
  %zero_sums = arith.constant dense<0.0> : vector<2x8x16xf32>
  %ramp = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : vector<2x2xf32>
  %small = memref.alloca() : memref<2x2xf32>
  %block = memref.alloca() : memref<8x16xf32>
  vector.transfer_write %zero_block, %c[%c8, %c0] {in_bounds = [true, true]} : vector<8x16xf32>, memref<64x48xf32>
  vector.transfer_write %zero_sums, %sums[%c0, %c0, %c0] {in_bounds = [true, true, true]} : vector<2x8x16xf32>, memref<2x8x16xf32>
  vector.transfer_write %ramp, %small[%c0, %c0] {in_bounds = [true, true]} : vector<2x2xf32>, memref<2x2xf32>
  vector.transfer_write %zero_block, %block[%c0, %c0], %m {in_bounds = [true, true]} : vector<8x16xf32>, memref<8x16xf32>
  %view = memref.subview %c[8, 16] [8, 16] [1, 1] : memref<64x48xf32> to memref<8x16xf32, strided<[48, 1], offset: 400>>
  vector.transfer_write %zero_block, %view[%c0, %c0] {in_bounds = [true, true]} : vector<8x16xf32>, memref<8x16xf32, strided<[48, 1], offset: 400>>
  %zero_whole = arith.constant dense<0.0> : vector<64x48xf32>
  vector.transfer_write %zero_whole, %c[%c8, %c0] {in_bounds = [false, true]} : vector<64x48xf32>, memref<64x48xf32>
  return
}
)mlir";

class RowFills : public ::testing::Test {
 protected:
  void SetUp() override {
    module_ = test::parseKernelIr(context_, kFills);
    ASSERT_TRUE(module_);
    rolled_ = rollWholeBufferFills(*module_);
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*module_)));
  }

  mlir::Operation* function(const std::string& name) { return module_->lookupSymbol(name); }

  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::int64_t rolled_ = 0;
};

TEST_F(RowFills, AFillOfAWholeBufferIsALoopOfOneRowOfStores) {
  EXPECT_EQ(rolled_, 1);
  int loops = 0;
  function("whole")->walk([&](mlir::scf::ForOp loop) {
    ++loops;
    EXPECT_EQ(mlir::getConstantIntValue(loop.getLowerBound()), 0);
    EXPECT_EQ(mlir::getConstantIntValue(loop.getUpperBound()), 64);
    EXPECT_EQ(mlir::getConstantIntValue(loop.getStep()), 1);
    int stores = 0;
    loop.walk([&](mlir::vector::TransferWriteOp write) {
      ++stores;
      EXPECT_EQ(write.getVectorType(), mlir::VectorType::get({48}, mlir::Float32Type::get(&context_)));
      EXPECT_EQ(write.getIndices()[0], loop.getInductionVar());
      EXPECT_TRUE(mlir::isZeroInteger(write.getIndices()[1]));
      mlir::DenseElementsAttr row;
      ASSERT_TRUE(mlir::matchPattern(write.getVector(), mlir::m_Constant(&row)));
      ASSERT_TRUE(row.isSplat());
      EXPECT_EQ(row.getSplatValue<float>(), 2.5f);
    });
    EXPECT_EQ(stores, 1);
  });
  EXPECT_EQ(loops, 1);
  // The block's store still follows the fill.
  int writes = 0;
  function("whole")->walk([&](mlir::vector::TransferWriteOp write) {
    if (++writes == 2) {
      EXPECT_EQ(write.getVectorType().getShape(), (llvm::ArrayRef<std::int64_t>{8, 16}));
    }
  });
  EXPECT_EQ(writes, 2);
  // The whole fill's value has no other use: it goes with the fill.
  function("whole")->walk([&](mlir::arith::ConstantOp constant) {
    if (auto vector = llvm::dyn_cast<mlir::VectorType>(constant.getType())) {
      EXPECT_EQ(vector.getRank(), 1) << "the 64x48 splat is left behind";
    }
  });
}

TEST_F(RowFills, PartsOfABufferOtherRanksValuesAndMaskedWritesStay) {
  int writes = 0;
  function("partial")->walk([&](mlir::vector::TransferWriteOp) { ++writes; });
  EXPECT_EQ(writes, 6);
  int loops = 0;
  function("partial")->walk([&](mlir::scf::ForOp) { ++loops; });
  EXPECT_EQ(loops, 0);
}

}  // namespace
}  // namespace nkbench::mlir_backend
