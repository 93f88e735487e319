// C's zero fill under split pieces and register blocks (zero_fills.h): each
// piece gets a fill of its own, reads of a fill are its zeros, and a fill that
// the blocks' writes cover is never stored.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kernels/mlir/vector/rewrites/zero_fills.h"
#include "tests/support/kernel_ir.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

namespace nkbench::mlir_backend {
namespace {

// Two row pieces of a 23x37 C under a zero fill, as transform.structured.split
// leaves them: the second piece's destination is cut from the tensor the first
// was inserted into. Each piece computes a copy (which does not read its
// destination, but is no fill). In @overlap a third slice, returned, sees rows
// 12-19 of both.
constexpr const char* kSplitPieces = R"mlir(
func.func @pieces(%c: tensor<23x37xf32>, %x: tensor<16x37xf32>, %y: tensor<7x37xf32>) -> tensor<23x37xf32> {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill {name = "whole_fill"} ins(%zero : f32) outs(%c : tensor<23x37xf32>) -> tensor<23x37xf32>
  %lower = tensor.extract_slice %fill[0, 0] [16, 37] [1, 1] : tensor<23x37xf32> to tensor<16x37xf32>
  %lower_done = linalg.copy ins(%x : tensor<16x37xf32>) outs(%lower : tensor<16x37xf32>) -> tensor<16x37xf32>
  %merged = tensor.insert_slice %lower_done into %fill[0, 0] [16, 37] [1, 1] : tensor<16x37xf32> into tensor<23x37xf32>
  %upper = tensor.extract_slice %merged[16, 0] [7, 37] [1, 1] : tensor<23x37xf32> to tensor<7x37xf32>
  %upper_done = linalg.copy ins(%y : tensor<7x37xf32>) outs(%upper : tensor<7x37xf32>) -> tensor<7x37xf32>
  %all = tensor.insert_slice %upper_done into %merged[16, 0] [7, 37] [1, 1] : tensor<7x37xf32> into tensor<23x37xf32>
  return %all : tensor<23x37xf32>
}
func.func @overlap(%c: tensor<23x37xf32>, %x: tensor<16x37xf32>) -> (tensor<23x37xf32>, tensor<8x37xf32>) {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill {name = "seen_fill"} ins(%zero : f32) outs(%c : tensor<23x37xf32>) -> tensor<23x37xf32>
  %lower = tensor.extract_slice %fill[0, 0] [16, 37] [1, 1] : tensor<23x37xf32> to tensor<16x37xf32>
  %lower_done = linalg.copy ins(%x : tensor<16x37xf32>) outs(%lower : tensor<16x37xf32>) -> tensor<16x37xf32>
  %merged = tensor.insert_slice %lower_done into %fill[0, 0] [16, 37] [1, 1] : tensor<16x37xf32> into tensor<23x37xf32>
  %across = tensor.extract_slice %merged[12, 0] [8, 37] [1, 1] : tensor<23x37xf32> to tensor<8x37xf32>
  return %merged, %across : tensor<23x37xf32>, tensor<8x37xf32>
}
func.func @kept_fill(%c: tensor<23x37xf32>, %x: tensor<8x37xf32>) -> (tensor<23x37xf32>, tensor<16x37xf32>) {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill {name = "kept_fill"} ins(%zero : f32) outs(%c : tensor<23x37xf32>) -> tensor<23x37xf32>
  %slice = tensor.extract_slice %fill[0, 0] [16, 37] [1, 1] : tensor<23x37xf32> to tensor<16x37xf32>
  %top = tensor.insert_slice %x into %slice[0, 0] [8, 37] [1, 1] : tensor<8x37xf32> into tensor<16x37xf32>
  %both = tensor.insert_slice %x into %top[8, 0] [8, 37] [1, 1] : tensor<8x37xf32> into tensor<16x37xf32>
  return %fill, %both : tensor<23x37xf32>, tensor<16x37xf32>
}
)mlir";

// A 2x20 tile under a splat, written back in 1x16 pieces (the second of each
// row past the tile's end, as edge blocks are), in variants that do and do
// not cover it, read it, or carry it through loops.
constexpr const char* kBlocks = R"mlir(
func.func @covered(%t: tensor<2x20xf32>, %v: vector<1x16xf32>) -> tensor<2x20xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zeros = arith.constant dense<0.0> : vector<2x20xf32>
  %fill = vector.transfer_write %zeros, %t[%c0, %c0] {name = "covered_fill", in_bounds = [true, true]} : vector<2x20xf32>, tensor<2x20xf32>
  %w0 = vector.transfer_write %v, %fill[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  %w2 = vector.transfer_write %v, %w1[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w3 = vector.transfer_write %v, %w2[%c1, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  return %w3 : tensor<2x20xf32>
}
func.func @gap(%t: tensor<2x20xf32>, %v: vector<1x16xf32>) -> tensor<2x20xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zeros = arith.constant dense<0.0> : vector<2x20xf32>
  %fill = vector.transfer_write %zeros, %t[%c0, %c0] {name = "gap_fill", in_bounds = [true, true]} : vector<2x20xf32>, tensor<2x20xf32>
  %w0 = vector.transfer_write %v, %fill[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  %w2 = vector.transfer_write %v, %w1[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  return %w2 : tensor<2x20xf32>
}
func.func @read_of_fill(%t: tensor<2x20xf32>, %v: vector<1x16xf32>) -> (tensor<2x20xf32>, vector<1x16xf32>, vector<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %other_pad = arith.constant 1.0 : f32
  %zeros = arith.constant dense<0.0> : vector<2x20xf32>
  %fill = vector.transfer_write %zeros, %t[%c0, %c0] {name = "read_fill", in_bounds = [true, true]} : vector<2x20xf32>, tensor<2x20xf32>
  %edge = vector.transfer_read %fill[%c1, %c16], %pad {name = "edge_read", in_bounds = [true, false]} : tensor<2x20xf32>, vector<1x16xf32>
  %padded = vector.transfer_read %fill[%c1, %c16], %other_pad {name = "other_pad_read", in_bounds = [true, false]} : tensor<2x20xf32>, vector<1x16xf32>
  %w0 = vector.transfer_write %v, %fill[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  %w2 = vector.transfer_write %v, %w1[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w3 = vector.transfer_write %v, %w2[%c1, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  return %w3, %edge, %padded : tensor<2x20xf32>, vector<1x16xf32>, vector<1x16xf32>
}
func.func @read_between(%t: tensor<2x20xf32>, %v: vector<1x16xf32>) -> (tensor<2x20xf32>, vector<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : vector<2x20xf32>
  %fill = vector.transfer_write %zeros, %t[%c0, %c0] {name = "read_between_fill", in_bounds = [true, true]} : vector<2x20xf32>, tensor<2x20xf32>
  %w0 = vector.transfer_write %v, %fill[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %seen = vector.transfer_read %w0[%c1, %c0], %pad {in_bounds = [true, true]} : tensor<2x20xf32>, vector<1x16xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  %w2 = vector.transfer_write %v, %w1[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w3 = vector.transfer_write %v, %w2[%c1, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  return %w3, %seen : tensor<2x20xf32>, vector<1x16xf32>
}
func.func @read_overlapping(%t: tensor<2x20xf32>, %v: vector<1x16xf32>) -> (tensor<2x20xf32>, vector<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : vector<2x20xf32>
  %fill = vector.transfer_write %zeros, %t[%c0, %c0] {name = "read_overlapping_fill", in_bounds = [true, true]} : vector<2x20xf32>, tensor<2x20xf32>
  %w0 = vector.transfer_write %v, %fill[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %seen = vector.transfer_read %w0[%c0, %c4], %pad {in_bounds = [true, true]} : tensor<2x20xf32>, vector<1x16xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  %w2 = vector.transfer_write %v, %w1[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w3 = vector.transfer_write %v, %w2[%c1, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  return %w3, %seen : tensor<2x20xf32>, vector<1x16xf32>
}
func.func @read_transposed(%t: tensor<2x20xf32>, %v: vector<1x16xf32>, %pair: vector<2xf32>) -> (tensor<2x20xf32>, vector<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : vector<2x20xf32>
  %fill = vector.transfer_write %zeros, %t[%c0, %c0] {name = "read_transposed_fill", in_bounds = [true, true]} : vector<2x20xf32>, tensor<2x20xf32>
  %w0 = vector.transfer_write %pair, %fill[%c1, %c0] {in_bounds = [true]} : vector<2xf32>, tensor<2x20xf32>
  %column = vector.transfer_read %w0[%c0, %c1], %pad {permutation_map = affine_map<(d0, d1) -> (d0)>, in_bounds = [true]} : tensor<2x20xf32>, vector<2xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w2 = vector.transfer_write %v, %w1[%c0, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  %w3 = vector.transfer_write %v, %w2[%c1, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  return %w3, %column : tensor<2x20xf32>, vector<2xf32>
}
func.func @through_loops(%t: tensor<2x20xf32>, %v: vector<1x16xf32>, %n: index) -> tensor<2x20xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zeros = arith.constant dense<0.0> : vector<2x20xf32>
  %fill = vector.transfer_write %zeros, %t[%c0, %c0] {name = "loop_fill", in_bounds = [true, true]} : vector<2x20xf32>, tensor<2x20xf32>
  %carried = scf.for %i = %c0 to %n step %c1 iter_args(%outer = %fill) -> (tensor<2x20xf32>) {
    %inner = scf.for %j = %c0 to %n step %c1 iter_args(%x = %outer) -> (tensor<2x20xf32>) {
      scf.yield %x : tensor<2x20xf32>
    }
    scf.yield %inner : tensor<2x20xf32>
  }
  %w0 = vector.transfer_write %v, %carried[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  %w2 = vector.transfer_write %v, %w1[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w3 = vector.transfer_write %v, %w2[%c1, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  return %w3 : tensor<2x20xf32>
}
func.func @read_in_loop(%t: tensor<2x20xf32>, %v: vector<1x16xf32>, %n: index) -> tensor<2x20xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : vector<2x20xf32>
  %fill = vector.transfer_write %zeros, %t[%c0, %c0] {name = "loop_read_fill", in_bounds = [true, true]} : vector<2x20xf32>, tensor<2x20xf32>
  %carried = scf.for %i = %c0 to %n step %c1 iter_args(%outer = %fill) -> (tensor<2x20xf32>) {
    %r = vector.transfer_read %outer[%c0, %c0], %pad {in_bounds = [true, true]} : tensor<2x20xf32>, vector<1x16xf32>
    %w = vector.transfer_write %r, %outer[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
    scf.yield %w : tensor<2x20xf32>
  }
  %w0 = vector.transfer_write %v, %carried[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  %w2 = vector.transfer_write %v, %w1[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x20xf32>
  %w3 = vector.transfer_write %v, %w2[%c1, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x20xf32>
  return %w3 : tensor<2x20xf32>
}
)mlir";

class ZeroFills : public ::testing::Test {
 protected:
  void run(const char* source) {
    module_ = test::parseKernelIr(context_, source);
    ASSERT_TRUE(module_);
    registerZeroFillsPass();
    mlir::PassManager passes(&context_);
    ASSERT_TRUE(mlir::succeeded(mlir::parsePassPipeline(std::string("func.func(") + kZeroFillsPass + ")", passes)));
    ASSERT_TRUE(mlir::succeeded(passes.run(*module_)));
  }

  mlir::Operation* named(const std::string& name) { return test::opNamed(*module_, name); }

  // The values `function` returns.
  mlir::OperandRange returned(const std::string& function) {
    auto func = module_->lookupSymbol<mlir::func::FuncOp>(function);
    return func.getBody().front().getTerminator()->getOperands();
  }

  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
};

// The destination of the piece that `insert` puts in: a zero fill of a slice
// at `row_offset` of `under`, the tensor the piece is inserted into.
void expectPieceFilledOnItsSlice(mlir::tensor::InsertSliceOp insert, std::int64_t row_offset) {
  auto piece = insert.getSource().getDefiningOp<mlir::linalg::CopyOp>();
  ASSERT_TRUE(piece);
  auto fill = piece.getOutputs()[0].getDefiningOp<mlir::linalg::FillOp>();
  ASSERT_TRUE(fill) << "the piece's destination is no fill";
  EXPECT_TRUE(mlir::matchPattern(fill.getInputs()[0], mlir::m_AnyZeroFloat()));
  auto slice = fill.getOutputs()[0].getDefiningOp<mlir::tensor::ExtractSliceOp>();
  ASSERT_TRUE(slice);
  EXPECT_EQ(slice.getStaticOffsets()[0], row_offset);
  EXPECT_EQ(slice.getSource(), insert.getDest()) << "cut from the tensor the piece goes back into";
}

TEST_F(ZeroFills, EachPieceOfASplitCGetsAFillOfItsOwnAndCIsNotFilledWhole) {
  run(kSplitPieces);
  auto upper = returned("pieces")[0].getDefiningOp<mlir::tensor::InsertSliceOp>();
  ASSERT_TRUE(upper);
  auto lower = upper.getDest().getDefiningOp<mlir::tensor::InsertSliceOp>();
  ASSERT_TRUE(lower);
  expectPieceFilledOnItsSlice(upper, 16);
  expectPieceFilledOnItsSlice(lower, 0);
  EXPECT_EQ(named("whole_fill"), nullptr) << "the two pieces overwrite every element";
  EXPECT_TRUE(llvm::isa<mlir::BlockArgument>(lower.getDest())) << "the first piece goes into C itself";
}

TEST_F(ZeroFills, AFillThatSomeOpReadsStays) {
  run(kSplitPieces);
  EXPECT_NE(named("seen_fill"), nullptr) << "rows 16-22 of the fill are returned";
  auto across = returned("overlap")[1].getDefiningOp<mlir::tensor::ExtractSliceOp>();
  ASSERT_TRUE(across) << "rows 12-19 are not all zeros: no fill of them";
  EXPECT_TRUE(across.getSource().getDefiningOp<mlir::tensor::InsertSliceOp>());
}

// A slice that two inserts overwrite whole, of a fill that is returned: it
// gets no fill of its own (which the pass would then take away again, without end).
TEST_F(ZeroFills, ASliceNoOpReadsGetsNoFill) {
  run(kSplitPieces);
  EXPECT_NE(named("kept_fill"), nullptr);
  auto top = returned("kept_fill")[1].getDefiningOp<mlir::tensor::InsertSliceOp>().getDest()
                 .getDefiningOp<mlir::tensor::InsertSliceOp>();
  ASSERT_TRUE(top);
  EXPECT_TRUE(top.getDest().getDefiningOp<mlir::tensor::ExtractSliceOp>());
}

TEST_F(ZeroFills, AFillThatTheBlocksCoverIsNeverWritten) {
  run(kBlocks);
  EXPECT_EQ(named("covered_fill"), nullptr) << "covered by four 1x16 writes, two past the end";
  EXPECT_EQ(named("loop_fill"), nullptr) << "carried untouched through two nested loops";
  EXPECT_NE(named("gap_fill"), nullptr) << "row 1, columns 16-19 are never written";
  EXPECT_EQ(named("read_between_fill"), nullptr) << "the read of row 1 misses the write of row 0: zeros";
  EXPECT_TRUE(mlir::matchPattern(returned("read_between")[1], mlir::m_AnyZeroFloat()));
  EXPECT_NE(named("read_overlapping_fill"), nullptr) << "a read overlapping the write of row 0 sees it and the fill";
  EXPECT_TRUE(returned("read_overlapping")[1].getDefiningOp<mlir::vector::TransferReadOp>());
  // A column read (rows 0-1 of column 1) sees the write of row 1's first two
  // elements, though their first indices differ: no zeros.
  EXPECT_TRUE(returned("read_transposed")[1].getDefiningOp<mlir::vector::TransferReadOp>());
  EXPECT_NE(named("loop_read_fill"), nullptr) << "the loop reads the fill";
}

TEST_F(ZeroFills, ReadsOfAFillAreItsZerosWhereThePaddingIsZeroToo) {
  run(kBlocks);
  const mlir::OperandRange values = returned("read_of_fill");
  EXPECT_TRUE(mlir::matchPattern(values[1], mlir::m_AnyZeroFloat())) << "an edge read past the tile, zero padding";
  EXPECT_TRUE(values[2].getDefiningOp<mlir::vector::TransferReadOp>()) << "padding 1.0: lanes past the tile are ones";
  // The read with padding 1.0 still sees the fill, which therefore stays.
  EXPECT_NE(named("read_fill"), nullptr);
}

}  // namespace
}  // namespace nkbench::mlir_backend
