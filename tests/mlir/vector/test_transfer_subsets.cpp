// How vector transfers relate as subsets of one tensor: by interval arithmetic
// where each offset is one value plus a constant, by value bounds otherwise.

#include <gtest/gtest.h>

#include "kernels/mlir/vector/rewrites/transfer_subsets.h"
#include "tests/support/kernel_ir.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Interfaces/SubsetOpInterface.h"

namespace nkbench::mlir_backend {
namespace {

// Reads of one 1x16 row piece each, named by their `name` attribute: the
// accumulators of a register block at (%i, %j) and pieces around them.
constexpr const char* kTransfers = R"mlir(
func.func @block(%t: tensor<64x64xf32>, %u: tensor<64x64xf32>, %i: index, %j: index) -> tensor<64x64xf32> {
  %pad = arith.constant 0.0 : f32
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %i1 = affine.apply affine_map<()[s0] -> (s0 + 1)>()[%i]
  %j8 = affine.apply affine_map<()[s0] -> (s0 + 8)>()[%j]
  %j16 = affine.apply affine_map<()[s0] -> (s0 + 16)>()[%j]
  %j16again = affine.apply affine_map<(d0) -> (d0 + 8)>(%j8)
  %j16add = arith.addi %j, %c16 : index
  %origin = vector.transfer_read %t[%i, %j], %pad {name = "origin"} : tensor<64x64xf32>, vector<1x16xf32>
  %same = vector.transfer_read %t[%i, %j], %pad {name = "same"} : tensor<64x64xf32>, vector<1x16xf32>
  %right = vector.transfer_read %t[%i, %j16] , %pad {name = "right"} : tensor<64x64xf32>, vector<1x16xf32>
  %right_again = vector.transfer_read %t[%i, %j16again], %pad {name = "right_again"} : tensor<64x64xf32>, vector<1x16xf32>
  %half_right = vector.transfer_read %t[%i, %j8], %pad {name = "half_right"} : tensor<64x64xf32>, vector<1x16xf32>
  %below = vector.transfer_read %t[%i1, %j], %pad {name = "below"} : tensor<64x64xf32>, vector<1x16xf32>
  %swapped = vector.transfer_read %t[%j, %i], %pad {name = "swapped"} : tensor<64x64xf32>, vector<1x16xf32>
  %right_by_add = vector.transfer_read %t[%i, %j16add], %pad {name = "right_by_add"} : tensor<64x64xf32>, vector<1x16xf32>
  %fixed = vector.transfer_read %t[%c16, %c32], %pad {name = "fixed"} : tensor<64x64xf32>, vector<1x16xf32>
  %fixed_left = vector.transfer_read %t[%c16, %c16], %pad {name = "fixed_left"} : tensor<64x64xf32>, vector<1x16xf32>
  %jm16 = affine.apply affine_map<()[s0] -> (s0 - 16)>()[%j]
  %j2 = affine.apply affine_map<(d0) -> (d0 * 2)>(%j)
  %jk = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%j, %i)
  %left = vector.transfer_read %t[%i, %jm16], %pad {name = "left"} : tensor<64x64xf32>, vector<1x16xf32>
  %twice = vector.transfer_read %t[%i, %j2], %pad {name = "twice"} : tensor<64x64xf32>, vector<1x16xf32>
  %sum = vector.transfer_read %t[%i, %jk], %pad {name = "sum"} : tensor<64x64xf32>, vector<1x16xf32>
  %other_row_right = vector.transfer_read %t[%jk, %j16], %pad {name = "other_row_right"} : tensor<64x64xf32>, vector<1x16xf32>
  %other_tensor = vector.transfer_read %u[%i, %j], %pad {name = "other_tensor"} : tensor<64x64xf32>, vector<1x16xf32>
  %written = vector.transfer_write %origin, %t[%i, %j16] {name = "write_right"} : vector<1x16xf32>, tensor<64x64xf32>
  return %written : tensor<64x64xf32>
}
)mlir";

class TransferSubsets : public ::testing::Test {
 protected:
  void SetUp() override {
    module_ = test::parseKernelIr(context_, kTransfers);
    ASSERT_TRUE(module_);
  }

  mlir::SubsetOpInterface named(const std::string& name) {
    mlir::Operation* found = nullptr;
    module_->walk([&](mlir::Operation* op) {
      if (auto attr = op->getAttrOfType<mlir::StringAttr>("name"); attr && attr.getValue() == name) found = op;
    });
    EXPECT_NE(found, nullptr) << name;
    return llvm::cast<mlir::SubsetOpInterface>(found);
  }

  SliceRelation relation(const std::string& a, const std::string& b) {
    return relateSlices(*named(a).getAccessedHyperrectangularSlice(), *named(b).getAccessedHyperrectangularSlice());
  }

  static bool sameValue(mlir::Value a, mlir::Value b) { return a == b; }

  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
};

TEST_F(TransferSubsets, OffsetsOfOneValuePlusAConstantAreComparedAsIntervals) {
  EXPECT_EQ(relation("origin", "same"), SliceRelation::Equal);
  EXPECT_EQ(relation("origin", "right"), SliceRelation::Disjoint) << "columns [j, j+16) and [j+16, j+32)";
  EXPECT_EQ(relation("origin", "below"), SliceRelation::Disjoint) << "rows i and i+1";
  EXPECT_EQ(relation("origin", "half_right"), SliceRelation::Overlapping) << "columns [j, j+16) and [j+8, j+24)";
  EXPECT_EQ(relation("right", "right_again"), SliceRelation::Equal) << "(j + 8) + 8 is j + 16";
  EXPECT_EQ(relation("fixed", "fixed_left"), SliceRelation::Disjoint);
  EXPECT_EQ(relation("fixed", "fixed"), SliceRelation::Equal);
  EXPECT_EQ(relation("left", "origin"), SliceRelation::Disjoint) << "columns [j-16, j) and [j, j+16)";
  EXPECT_EQ(relation("other_row_right", "origin"), SliceRelation::Disjoint)
      << "rows undecided, columns apart: apart";
}

TEST_F(TransferSubsets, OffsetsOfDifferentValuesAreLeftUndecided) {
  EXPECT_EQ(relation("origin", "swapped"), SliceRelation::Unknown);
  EXPECT_EQ(relation("origin", "right_by_add"), SliceRelation::Unknown) << "arith.addi is not read as an interval";
  EXPECT_EQ(relation("origin", "fixed"), SliceRelation::Unknown);
  EXPECT_EQ(relation("below", "swapped"), SliceRelation::Unknown);
  EXPECT_EQ(relation("origin", "twice"), SliceRelation::Unknown) << "j * 2 is no value plus a constant";
  EXPECT_EQ(relation("origin", "sum"), SliceRelation::Unknown) << "j + i is no one value plus a constant";
}

TEST_F(TransferSubsets, TheInterfaceAnswersAsValueBoundsWouldAndFallsBackToThem) {
  EXPECT_TRUE(named("origin").operatesOnEquivalentSubset(named("same"), sameValue));
  EXPECT_FALSE(named("origin").operatesOnDisjointSubset(named("same"), sameValue));
  EXPECT_TRUE(named("origin").operatesOnDisjointSubset(named("right"), sameValue));
  EXPECT_FALSE(named("origin").operatesOnEquivalentSubset(named("right"), sameValue));
  EXPECT_FALSE(named("origin").operatesOnDisjointSubset(named("half_right"), sameValue));
  EXPECT_FALSE(named("origin").operatesOnEquivalentSubset(named("half_right"), sameValue));
  // Undecided by intervals; value bounds see through arith.addi.
  EXPECT_TRUE(named("origin").operatesOnDisjointSubset(named("right_by_add"), sameValue));
  EXPECT_TRUE(named("right").operatesOnEquivalentSubset(named("right_by_add"), sameValue));
  // Different tensors are neither.
  EXPECT_FALSE(named("origin").operatesOnEquivalentSubset(named("other_tensor"), sameValue));
  EXPECT_FALSE(named("origin").operatesOnDisjointSubset(named("other_tensor"), sameValue));
  // A write and a read of the same piece, as subset hoisting pairs them.
  auto write = llvm::cast<mlir::SubsetInsertionOpInterface>(named("write_right").getOperation());
  EXPECT_TRUE(write.isEquivalentSubset(named("right")->getResult(0), sameValue));
  EXPECT_FALSE(write.isEquivalentSubset(named("origin")->getResult(0), sameValue));
  EXPECT_EQ(write.getSourceOperand().get(), named("origin")->getResult(0));
}

}  // namespace
}  // namespace nkbench::mlir_backend
