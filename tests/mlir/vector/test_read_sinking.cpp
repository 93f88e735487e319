// Tensor reads moved to just before their first users (read_sinking.h), in
// program order, so that one schedule always gives one machine code.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/mlir/dialect_registry.h"
#include "kernels/mlir/vector/rewrites/read_sinking.h"
#include "kernels/mlir/vector/schedule_cleanups.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace nkbench::mlir_backend {
namespace {

// Three accumulators read before a K loop that takes them all (its first user
// in common), an unrelated op between; a fourth read with an unrelated op
// before its user; a read used inside a loop's body and after the loop; a read
// whose tensor is written before its use; a read in a loop's body with an
// unrelated op before its user; a read of a buffer.
constexpr const char* kReads = R"mlir(
func.func @reads(%c: tensor<8x8xf32>, %m: memref<8xf32>, %v: vector<8xf32>, %n: index) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, tensor<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %pad = arith.constant 0.0 : f32
  %row0 = vector.transfer_read %c[%c0, %c0], %pad {in_bounds = [true]} : tensor<8x8xf32>, vector<8xf32>
  %row1 = vector.transfer_read %c[%c1, %c0], %pad {in_bounds = [true]} : tensor<8x8xf32>, vector<8xf32>
  %row2 = vector.transfer_read %c[%c2, %c0], %pad {in_bounds = [true]} : tensor<8x8xf32>, vector<8xf32>
  %buffered = vector.transfer_read %m[%c0], %pad {in_bounds = [true]} : memref<8xf32>, vector<8xf32>
  %between = arith.mulf %v, %v : vector<8xf32>
  %acc:3 = scf.for %k = %c0 to %n step %c1 iter_args(%a0 = %row0, %a1 = %row1, %a2 = %row2) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>) {
    scf.yield %a1, %a2, %a0 : vector<8xf32>, vector<8xf32>, vector<8xf32>
  }
  %row3 = vector.transfer_read %c[%c3, %c0], %pad {in_bounds = [true]} : tensor<8x8xf32>, vector<8xf32>
  %row4 = vector.transfer_read %c[%c4, %c0], %pad {in_bounds = [true]} : tensor<8x8xf32>, vector<8xf32>
  %square = arith.mulf %between, %between : vector<8xf32>
  %sum = arith.addf %row3, %square : vector<8xf32>
  %inner = scf.for %k = %c0 to %n step %c1 iter_args(%s = %v) -> (vector<8xf32>) {
    %row6 = vector.transfer_read %c[%c6, %c0], %pad {in_bounds = [true]} : tensor<8x8xf32>, vector<8xf32>
    %t = arith.addf %s, %row4 : vector<8xf32>
    %u = arith.mulf %t, %row6 : vector<8xf32>
    scf.yield %u : vector<8xf32>
  }
  %after = arith.addf %row4, %inner : vector<8xf32>
  %row5 = vector.transfer_read %c[%c5, %c0], %pad {in_bounds = [true]} : tensor<8x8xf32>, vector<8xf32>
  %written = vector.transfer_write %v, %c[%c5, %c0] {in_bounds = [true]} : vector<8xf32>, tensor<8x8xf32>
  %fifth = arith.addf %row5, %v : vector<8xf32>
  %both = arith.addf %buffered, %sum : vector<8xf32>
  return %acc#0, %acc#1, %acc#2, %after, %fifth, %both, %sum, %written : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, tensor<8x8xf32>
}
)mlir";

// The ops of `block` in order, constants left out: a read of C as "row<i>",
// the buffer's read as "buffer", any other op by its name.
std::vector<std::string> opsInOrder(mlir::Block& block) {
  std::vector<std::string> ops;
  for (mlir::Operation& op : block) {
    if (llvm::isa<mlir::arith::ConstantOp>(op)) continue;
    auto read = llvm::dyn_cast<mlir::vector::TransferReadOp>(op);
    if (!read) {
      ops.push_back(op.getName().getStringRef().str());
    } else if (llvm::isa<mlir::MemRefType>(read.getBase().getType())) {
      ops.emplace_back("buffer");
    } else {
      ops.push_back("row" + std::to_string(mlir::getConstantIntValue(read.getIndices().front()).value_or(-1)));
    }
  }
  return ops;
}

mlir::func::FuncOp function(mlir::ModuleOp module) { return *module.getOps<mlir::func::FuncOp>().begin(); }

// The function's own ops, in order.
std::vector<std::string> opsInOrder(mlir::ModuleOp module) { return opsInOrder(function(module).getBody().front()); }

// The ops of the body of the function's last loop, in order.
std::vector<std::string> lastLoopBody(mlir::ModuleOp module) {
  mlir::scf::ForOp last;
  for (auto loop : function(module).getBody().front().getOps<mlir::scf::ForOp>()) last = loop;
  return opsInOrder(*last.getBody());
}

const std::vector<std::string> kSunk{"buffer",     "arith.mulf", "row0",       "row1",       "row2",
                                     "scf.for",    "row4",       "arith.mulf", "row3",       "arith.addf",
                                     "scf.for",    "arith.addf", "row5",       "vector.transfer_write",
                                     "arith.addf", "arith.addf", "func.return"};
const std::vector<std::string> kSunkLoopBody{"arith.addf", "row6", "arith.mulf", "scf.yield"};

class ReadSinkingTest : public ::testing::Test {
 protected:
  ReadSinkingTest() {
    mlir::DialectRegistry registry;
    registerKernelDialects(registry);
    context_.appendDialectRegistry(registry);
  }
  mlir::OwningOpRef<mlir::ModuleOp> parse() { return mlir::parseSourceString<mlir::ModuleOp>(kReads, &context_); }

  mlir::MLIRContext context_;
};

TEST_F(ReadSinkingTest, ReadsMeetTheirFirstUsersInProgramOrder) {
  auto module = parse();
  ASSERT_TRUE(module);
  EXPECT_EQ(sinkTensorReadsToFirstUse(*module), 5) << "rows 0-3 and 6";
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*module)));
  // The accumulators keep their order before the loop that takes them; row 4,
  // used in a loop's body before its use after the loop, stays; so does row 5,
  // whose tensor is written before its use; the buffer's read passes nothing.
  EXPECT_EQ(opsInOrder(*module), kSunk);
  EXPECT_EQ(lastLoopBody(*module), kSunkLoopBody) << "reads in loop bodies move too";
  EXPECT_EQ(sinkTensorReadsToFirstUse(*module), 0) << "a second walk finds every read in place";
}

TEST_F(ReadSinkingTest, TheComposingCleanupSinksReadsOnlyWhereAsked) {
  ScheduleCleanupRunner cleanups{context_};
  auto kept = parse();
  ASSERT_TRUE(kept);
  const std::vector<std::string> written = opsInOrder(*kept);
  ASSERT_TRUE(mlir::succeeded(cleanups.apply(*kept, ScheduleCleanup{})));
  EXPECT_EQ(opsInOrder(*kept), written);

  auto sunk = parse();
  ASSERT_TRUE(sunk);
  ASSERT_TRUE(mlir::succeeded(cleanups.apply(*sunk, ScheduleCleanup{.sink_vector_producers = true})));
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*sunk)));
  EXPECT_EQ(opsInOrder(*sunk), kSunk);
  EXPECT_EQ(lastLoopBody(*sunk), kSunkLoopBody);
}

}  // namespace
}  // namespace nkbench::mlir_backend
