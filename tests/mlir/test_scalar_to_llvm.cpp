// The last conversion to the LLVM dialect (scalar_to_llvm.h): memref, arith,
// func, cf and ub of a kernel in one pass, the function on bare pointers.

#include <gtest/gtest.h>

#include "kernels/mlir/lowering/scalar_to_llvm.h"
#include "tests/support/kernel_ir.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

namespace nkbench::mlir_backend {
namespace {

// A loop over C's rows, as convert-scf-to-cf leaves it, with a load, an add and a store.
constexpr const char* kKernel = R"mlir(
func.func @nk_kernel(%a: memref<4x16xf32> {llvm.noalias}, %c: memref<4x16xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %unused = ub.poison : f32
  cf.br ^header(%c0 : index)
^header(%i: index):
  %more = arith.cmpi slt, %i, %c4 : index
  cf.cond_br %more, ^body, ^exit
^body:
  %x = memref.load %a[%i, %c0] : memref<4x16xf32>
  %y = arith.addf %x, %x : f32
  memref.store %y, %c[%i, %c0] : memref<4x16xf32>
  %next = arith.addi %i, %c1 : index
  cf.br ^header(%next : index)
^exit:
  return
}
)mlir";

TEST(ScalarToLlvm, LowersAKernelToTheLlvmDialectOnBarePointers) {
  registerScalarToLlvmPass();
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = test::parseKernelIr(context, kKernel);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context);
  ASSERT_TRUE(mlir::succeeded(mlir::parsePassPipeline(kScalarToLlvmPass, pm)));
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));

  module->walk([](mlir::Operation* op) {
    if (!llvm::isa<mlir::ModuleOp>(op)) {
      EXPECT_EQ(op->getDialect()->getNamespace(), "llvm") << op->getName().getStringRef().str();
    }
  });
  auto kernel = module->lookupSymbol<mlir::LLVM::LLVMFuncOp>("nk_kernel");
  ASSERT_TRUE(kernel);
  ASSERT_EQ(kernel.getNumArguments(), 2u);
  for (unsigned i = 0; i < 2; ++i) {
    EXPECT_TRUE(llvm::isa<mlir::LLVM::LLVMPointerType>(kernel.getArgumentTypes()[i])) << "argument " << i;
    EXPECT_TRUE(kernel.getArgAttr(i, "llvm.noalias")) << "argument " << i;
  }
}

}  // namespace
}  // namespace nkbench::mlir_backend
