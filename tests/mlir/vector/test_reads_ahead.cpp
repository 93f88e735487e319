// Reads of a buffer moved ahead of the writes just before them that miss
// their elements (reads_ahead.h), and kept behind anything else.

#include <gtest/gtest.h>

#include <string>

#include "kernels/mlir/vector/buffer_rewrites/reads_ahead.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "tests/support/kernel_ir.h"

namespace nkbench::mlir_backend {
namespace {

// @rows: C's rows of 5 read and written in turn (a K=1 block unrolled). Row
// 1's read misses row 0's write; row 2's read misses both; the second read of
// row 1 sees its write, and misses row 2's. @blocked: a read behind a write to another buffer,
// one behind the op that makes its index, and one behind an overlapping write.
constexpr const char* kRows = R"mlir(
func.func @rows(%c: memref<3x5xf32>, %v: vector<1x16xf32>) -> vector<1x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %pad = arith.constant 0.0 : f32
  %r0 = vector.transfer_read %c[%c0, %c0], %pad {name = "r0", in_bounds = [true, false]} : memref<3x5xf32>, vector<1x16xf32>
  %s0 = arith.addf %r0, %v : vector<1x16xf32>
  vector.transfer_write %s0, %c[%c0, %c0] {name = "w0", in_bounds = [true, false]} : vector<1x16xf32>, memref<3x5xf32>
  %r1 = vector.transfer_read %c[%c1, %c0], %pad {name = "r1", in_bounds = [true, false]} : memref<3x5xf32>, vector<1x16xf32>
  %s1 = arith.addf %r1, %v : vector<1x16xf32>
  vector.transfer_write %s1, %c[%c1, %c0] {name = "w1", in_bounds = [true, false]} : vector<1x16xf32>, memref<3x5xf32>
  %r2 = vector.transfer_read %c[%c2, %c0], %pad {name = "r2", in_bounds = [true, false]} : memref<3x5xf32>, vector<1x16xf32>
  %s2 = arith.addf %r2, %v : vector<1x16xf32>
  vector.transfer_write %s2, %c[%c2, %c0] {name = "w2", in_bounds = [true, false]} : vector<1x16xf32>, memref<3x5xf32>
  %seen = vector.transfer_read %c[%c1, %c0], %pad {name = "seen", in_bounds = [true, false]} : memref<3x5xf32>, vector<1x16xf32>
  return %seen : vector<1x16xf32>
}
func.func @blocked(%c: memref<3x5xf32>, %other: memref<3x5xf32>, %v: vector<1x16xf32>, %i: index) -> (vector<1x16xf32>, vector<1x16xf32>, vector<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %pad = arith.constant 0.0 : f32
  vector.transfer_write %v, %c[%c0, %c0] {name = "b_w0", in_bounds = [true, false]} : vector<1x16xf32>, memref<3x5xf32>
  vector.transfer_write %v, %other[%c0, %c0] {name = "b_other", in_bounds = [true, false]} : vector<1x16xf32>, memref<3x5xf32>
  %a = vector.transfer_read %c[%c1, %c0], %pad {name = "after_other", in_bounds = [true, false]} : memref<3x5xf32>, vector<1x16xf32>
  vector.transfer_write %v, %c[%c0, %c0] {name = "b_w1", in_bounds = [true, false]} : vector<1x16xf32>, memref<3x5xf32>
  %row = arith.addi %i, %c1 : index
  %b = vector.transfer_read %c[%row, %c0], %pad {name = "after_index", in_bounds = [true, false]} : memref<3x5xf32>, vector<1x16xf32>
  vector.transfer_write %v, %c[%c2, %c0] {name = "b_w2", in_bounds = [true, false]} : vector<1x16xf32>, memref<3x5xf32>
  %d = vector.transfer_read %c[%c2, %c0], %pad {name = "after_overlap", in_bounds = [true, false]} : memref<3x5xf32>, vector<1x16xf32>
  return %a, %b, %d : vector<1x16xf32>, vector<1x16xf32>, vector<1x16xf32>
}
func.func @views(%c: memref<3x5xf32>, %v: vector<1x16xf32>, %w: vector<5xf32>) -> (vector<1x16xf32>, vector<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  %row1 = memref.subview %c[1, 0] [1, 5] [1, 1] : memref<3x5xf32> to memref<1x5xf32, strided<[5, 1], offset: 5>>
  vector.transfer_write %v, %row1[%c0, %c0] {name = "v_view", in_bounds = [true, false]} : vector<1x16xf32>, memref<1x5xf32, strided<[5, 1], offset: 5>>
  %a = vector.transfer_read %c[%c1, %c0], %pad {name = "after_view", in_bounds = [true, false]} : memref<3x5xf32>, vector<1x16xf32>
  vector.store %w, %c[%c0, %c0] {name = "v_store"} : memref<3x5xf32>, vector<5xf32>
  %b = vector.transfer_read %c[%c1, %c0], %pad {name = "after_store", in_bounds = [true, false]} : memref<3x5xf32>, vector<1x16xf32>
  return %a, %b : vector<1x16xf32>, vector<1x16xf32>
}
)mlir";

class ReadsAhead : public ::testing::Test {
 protected:
  void SetUp() override {
    module_ = test::parseKernelIr(context_, kRows);
    ASSERT_TRUE(module_);
    moved_ = moveReadsAheadOfMissedWrites(*module_);
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*module_)));
  }

  mlir::Operation* named(const std::string& name) { return test::opNamed(*module_, name); }
  bool before(const std::string& first, const std::string& second) {
    return named(first)->isBeforeInBlock(named(second));
  }

  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::int64_t moved_ = 0;
};

TEST_F(ReadsAhead, EachRowIsReadBeforeTheWritesOfTheRowsBeforeIt) {
  EXPECT_TRUE(before("r1", "w0"));
  EXPECT_TRUE(before("r2", "w0"));
  EXPECT_TRUE(before("r0", "r1")) << "reads keep their order";
  EXPECT_TRUE(before("w1", "seen")) << "the read of a written row stays behind its write";
  EXPECT_TRUE(before("seen", "w2")) << "and moves past the write of the next row";
  EXPECT_EQ(moved_, 3);
}

TEST_F(ReadsAhead, AReadStaysBehindAWriteElsewhereItsIndexAndAnOverlappingWrite) {
  EXPECT_TRUE(before("b_other", "after_other")) << "a write to another buffer may be anywhere";
  EXPECT_TRUE(before("b_w1", "after_index")) << "its row is computed after the write";
  EXPECT_TRUE(before("b_w2", "after_overlap"));
}

// A write of its row through a view of the buffer, and a store that is no
// transfer, keep the read behind them.
TEST_F(ReadsAhead, AReadStaysBehindAWriteThroughAViewAndAPlainStore) {
  EXPECT_TRUE(before("v_view", "after_view"));
  EXPECT_TRUE(before("v_store", "after_store"));
}

}  // namespace
}  // namespace nkbench::mlir_backend
