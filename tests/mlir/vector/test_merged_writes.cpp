// A chain of static writes that covers its tensor exactly once becomes one
// write of the whole tensor before bufferization, and the pieces' writes again
// after it (merged_writes.h); every other chain stays as it is.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/mlir/vector/rewrites/merged_writes.h"
#include "tests/support/kernel_ir.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

namespace nkbench::mlir_backend {
namespace {

using Offsets = std::vector<std::int64_t>;

// @block: a 2x32 block's four accumulators written back, last row first.
// The others are not covered once by static, in-bounds, unmasked writes of
// one chain: a gap, an element written twice, a write past the edge, a masked
// write, a chain whose middle is read by another op.
constexpr const char* kChains = R"mlir(
func.func @block(%t: tensor<2x32xf32>, %v0: vector<1x16xf32>, %v1: vector<1x16xf32>, %v2: vector<1x16xf32>, %v3: vector<1x16xf32>) -> tensor<2x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %w0 = vector.transfer_write %v0, %t[%c1, %c16] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  %w1 = vector.transfer_write %v1, %w0[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  %w2 = vector.transfer_write %v2, %w1[%c0, %c16] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  %w3 = vector.transfer_write %v3, %w2[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  return %w3 : tensor<2x32xf32>
}
func.func @gap(%t: tensor<2x32xf32>, %v: vector<1x16xf32>) -> tensor<2x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %w0 = vector.transfer_write %v, %t[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c16] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  %w2 = vector.transfer_write %v, %w1[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  return %w2 : tensor<2x32xf32>
}
func.func @twice(%t: tensor<2x32xf32>, %v: vector<1x16xf32>) -> tensor<2x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %w0 = vector.transfer_write %v, %t[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  %w2 = vector.transfer_write %v, %w1[%c0, %c16] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  %w3 = vector.transfer_write %v, %w2[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  %w4 = vector.transfer_write %v, %w3[%c1, %c16] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x32xf32>
  return %w4 : tensor<2x32xf32>
}
func.func @past_the_edge(%t: tensor<2x24xf32>, %v: vector<1x16xf32>, %v8: vector<1x8xf32>) -> tensor<2x24xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %w0 = vector.transfer_write %v, %t[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x24xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, tensor<2x24xf32>
  %w2 = vector.transfer_write %v, %w1[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<2x24xf32>
  %w3 = vector.transfer_write %v8, %w2[%c1, %c16] {in_bounds = [true, true]} : vector<1x8xf32>, tensor<2x24xf32>
  return %w3 : tensor<2x24xf32>
}
func.func @masked(%t: tensor<1x32xf32>, %v: vector<1x16xf32>, %m: vector<1x16xi1>) -> tensor<1x32xf32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %w0 = vector.transfer_write %v, %t[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<1x32xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c16], %m {in_bounds = [true, true]} : vector<1x16xf32>, tensor<1x32xf32>
  return %w1 : tensor<1x32xf32>
}
func.func @read_midway(%t: tensor<1x32xf32>, %v: vector<1x16xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %w0 = vector.transfer_write %v, %t[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<1x32xf32>
  %w1 = vector.transfer_write %v, %w0[%c0, %c16] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<1x32xf32>
  return %w0, %w1 : tensor<1x32xf32>, tensor<1x32xf32>
}
)mlir";

// After bufferization: @merged, the whole write of a 2x32 block at row 8 and
// a column known at run time; @partial, pieces that leave part of the vector unset.
constexpr const char* kBuffers = R"mlir(
func.func @merged(%c: memref<64x64xf32>, %column: index, %v0: vector<1x16xf32>, %v1: vector<1x16xf32>, %v2: vector<1x16xf32>, %v3: vector<1x16xf32>) {
  %c8 = arith.constant 8 : index
  %p = ub.poison : vector<2x32xf32>
  %a = vector.insert_strided_slice %v0, %p {offsets = [1, 16], strides = [1, 1]} : vector<1x16xf32> into vector<2x32xf32>
  %b = vector.insert_strided_slice %v1, %a {offsets = [1, 0], strides = [1, 1]} : vector<1x16xf32> into vector<2x32xf32>
  %d = vector.insert_strided_slice %v2, %b {offsets = [0, 16], strides = [1, 1]} : vector<1x16xf32> into vector<2x32xf32>
  %e = vector.insert_strided_slice %v3, %d {offsets = [0, 0], strides = [1, 1]} : vector<1x16xf32> into vector<2x32xf32>
  vector.transfer_write %e, %c[%c8, %column] {in_bounds = [true, true]} : vector<2x32xf32>, memref<64x64xf32>
  return
}
func.func @shared_poison(%c: memref<64x64xf32>, %v0: vector<1x16xf32>, %v1: vector<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %p = ub.poison : vector<1x32xf32>
  %a = vector.insert_strided_slice %v0, %p {offsets = [0, 0], strides = [1, 1]} : vector<1x16xf32> into vector<1x32xf32>
  %b = vector.insert_strided_slice %v1, %a {offsets = [0, 16], strides = [1, 1]} : vector<1x16xf32> into vector<1x32xf32>
  vector.transfer_write %b, %c[%c0, %c0] {in_bounds = [true, true]} : vector<1x32xf32>, memref<64x64xf32>
  %d = vector.insert_strided_slice %v1, %p {offsets = [0, 0], strides = [1, 1]} : vector<1x16xf32> into vector<1x32xf32>
  %e = vector.insert_strided_slice %v0, %d {offsets = [0, 16], strides = [1, 1]} : vector<1x16xf32> into vector<1x32xf32>
  vector.transfer_write %e, %c[%c8, %c0] {in_bounds = [true, true]} : vector<1x32xf32>, memref<64x64xf32>
  return
}
func.func @partial(%c: memref<64x64xf32>, %v0: vector<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %p = ub.poison : vector<2x32xf32>
  %a = vector.insert_strided_slice %v0, %p {offsets = [1, 16], strides = [1, 1]} : vector<1x16xf32> into vector<2x32xf32>
  vector.transfer_write %a, %c[%c0, %c0] {in_bounds = [true, true]} : vector<2x32xf32>, memref<64x64xf32>
  return
}
)mlir";

Offsets offsetsOf(mlir::vector::InsertStridedSliceOp insert) {
  Offsets offsets;
  for (const llvm::APInt& offset : insert.getOffsets().getAsValueRange<mlir::IntegerAttr>())
    offsets.push_back(offset.getSExtValue());
  return offsets;
}

std::vector<mlir::vector::TransferWriteOp> writesIn(mlir::Operation* function) {
  std::vector<mlir::vector::TransferWriteOp> writes;
  function->walk([&](mlir::vector::TransferWriteOp write) { writes.push_back(write); });
  return writes;
}

class MergedWrites : public ::testing::Test {
 protected:
  mlir::OwningOpRef<mlir::ModuleOp> parse(const char* source) {
    mlir::OwningOpRef<mlir::ModuleOp> module = test::parseKernelIr(context_, source);
    EXPECT_TRUE(module);
    return module;
  }
  mlir::MLIRContext context_;
};

TEST_F(MergedWrites, AChainThatCoversItsTensorOnceIsOneWriteOfTheWholeTensor) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(kChains);
  ASSERT_TRUE(module);
  EXPECT_EQ(mergeCoveringWriteChains(*module), 1);
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*module)));
  auto block = llvm::cast<mlir::func::FuncOp>(module->lookupSymbol("block"));
  std::vector<mlir::vector::TransferWriteOp> writes = writesIn(block);
  ASSERT_EQ(writes.size(), 1u);
  mlir::vector::TransferWriteOp whole = writes.front();
  EXPECT_EQ(whole.getVectorType().getShape(), (llvm::ArrayRef<std::int64_t>{2, 32}));
  EXPECT_EQ(whole.getBase(), block.getArgument(0));
  for (mlir::Value index : whole.getIndices()) EXPECT_TRUE(mlir::isZeroInteger(index));
  for (bool in_bounds : whole.getInBoundsValues()) EXPECT_TRUE(in_bounds);
  // The vectors in the chain's order, each at its write's place, over poison.
  std::vector<Offsets> places;
  std::vector<mlir::Value> values;
  mlir::Value value = whole.getVector();
  while (auto insert = value.getDefiningOp<mlir::vector::InsertStridedSliceOp>()) {
    places.insert(places.begin(), offsetsOf(insert));
    values.insert(values.begin(), insert.getValueToStore());
    value = insert.getDest();
  }
  EXPECT_TRUE(value.getDefiningOp<mlir::ub::PoisonOp>());
  EXPECT_EQ(places, (std::vector<Offsets>{{1, 16}, {1, 0}, {0, 16}, {0, 0}}));
  ASSERT_EQ(values.size(), 4u);
  for (unsigned i = 0; i < 4; ++i) EXPECT_EQ(values[i], block.getArgument(i + 1));
}

TEST_F(MergedWrites, GapsOverlapsEdgesMasksAndReadsMidwayKeepTheirWrites) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(kChains);
  ASSERT_TRUE(module);
  mergeCoveringWriteChains(*module);
  for (auto [name, writes] : {std::pair<const char*, std::size_t>{"gap", 3}, {"twice", 5}, {"past_the_edge", 4},
                              {"masked", 2}, {"read_midway", 2}}) {
    EXPECT_EQ(writesIn(module->lookupSymbol(name)).size(), writes) << name;
    module->lookupSymbol(name)->walk(
        [&](mlir::vector::InsertStridedSliceOp) { ADD_FAILURE() << name << " was merged"; });
  }
}

TEST_F(MergedWrites, AfterBufferizationTheWholeWriteIsItsPiecesInTheirOrder) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(kBuffers);
  ASSERT_TRUE(module);
  EXPECT_EQ(splitMergedWrites(*module), 3);
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*module)));
  auto merged = llvm::cast<mlir::func::FuncOp>(module->lookupSymbol("merged"));
  std::vector<mlir::vector::TransferWriteOp> writes = writesIn(merged);
  ASSERT_EQ(writes.size(), 4u);
  const std::vector<Offsets> places{{1, 16}, {1, 0}, {0, 16}, {0, 0}};
  const mlir::Value column = merged.getArgument(1);
  for (unsigned i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(writes[i].getVector(), merged.getArgument(i + 2));
    EXPECT_EQ(writes[i].getBase(), merged.getArgument(0));
    EXPECT_EQ(mlir::getConstantIntValue(writes[i].getIndices()[0]), 8 + places[i][0]);
    const mlir::Value index = writes[i].getIndices()[1];
    if (places[i][1] == 0) {
      EXPECT_EQ(index, column);
    } else {
      auto sum = index.getDefiningOp<mlir::arith::AddIOp>();
      ASSERT_TRUE(sum);
      EXPECT_EQ(sum.getLhs(), column);
      EXPECT_EQ(mlir::getConstantIntValue(sum.getRhs()), places[i][1]);
    }
  }
  merged->walk([](mlir::Operation* op) {
    EXPECT_FALSE((llvm::isa<mlir::vector::InsertStridedSliceOp, mlir::ub::PoisonOp>(op))) << "left behind";
  });
  EXPECT_EQ(writesIn(module->lookupSymbol("partial")).size(), 1u) << "a partly set vector is not a merged write";
  // Two merged writes over one poison (CSE shares it): both split, the poison goes with the last.
  EXPECT_EQ(writesIn(module->lookupSymbol("shared_poison")).size(), 4u);
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*module)));
  module->lookupSymbol("shared_poison")->walk([](mlir::ub::PoisonOp) { ADD_FAILURE() << "poison left behind"; });
}

}  // namespace
}  // namespace nkbench::mlir_backend
