// The lowering to the LLVM dialect (to_llvm.h, vector_lowering.h): its last
// conversion, of every dialect in one pass with the function on bare pointers,
// and the whole pipeline against the upstream passes it stands for.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kernels/mlir/jit/llvm_middle_end.h"
#include "kernels/mlir/lowering/to_llvm.h"
#include "tests/support/kernel_ir.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

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

TEST(ToLlvm, LowersAKernelToTheLlvmDialectOnBarePointers) {
  registerToLlvmPasses();
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = test::parseKernelIr(context, kKernel);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context);
  ASSERT_TRUE(mlir::succeeded(mlir::parsePassPipeline(kToLlvmPass, pm)));
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

// Every step of the pipeline has work in it: a subview, a 2-D transfer, an
// affine map, a loop, a broadcast, an FMA, an x86vector dot product, a shape
// cast, a strided slice, a contraction, and an edge read and written out of
// bounds (masks).
constexpr const char* kVectorKernel = R"mlir(
func.func @nk_kernel(%a: memref<4x32xf32> {llvm.noalias}, %b: memref<32xbf16> {llvm.noalias},
                     %c: memref<4x16xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c24 = arith.constant 24 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c2 {
    %rows = memref.subview %a[%i, 0] [2, 32] [1, 1] : memref<4x32xf32> to memref<2x32xf32, strided<[32, 1], offset: ?>>
    %x = vector.transfer_read %rows[%c0, %c0], %pad {in_bounds = [true, true]}
        : memref<2x32xf32, strided<[32, 1], offset: ?>>, vector<2x16xf32>
    %row = vector.extract %x[1] : vector<16xf32> from vector<2x16xf32>
    %next = affine.apply affine_map<()[s0] -> (s0 + 1)>()[%i]
    %s = memref.load %a[%next, %c0] : memref<4x32xf32>
    %bs = vector.broadcast %s : f32 to vector<16xf32>
    %acc = vector.load %c[%i, %c0] : memref<4x16xf32>, vector<16xf32>
    %y = vector.fma %bs, %row, %acc : vector<16xf32>
    %pairs = vector.load %b[%c0] : memref<32xbf16>, vector<32xbf16>
    %z = x86vector.avx512.dot %y, %pairs, %pairs : vector<32xbf16> -> vector<16xf32>
    vector.store %z, %c[%i, %c0] : memref<4x16xf32>, vector<16xf32>
    %flat = vector.shape_cast %x : vector<2x16xf32> to vector<32xf32>
    %middle = vector.extract_strided_slice %flat {offsets = [8], sizes = [16], strides = [1]}
        : vector<32xf32> to vector<16xf32>
    %sum = vector.contract {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                            iterator_types = ["reduction"], kind = #vector.kind<add>} %middle, %z, %s
        : vector<16xf32>, vector<16xf32> into f32
    %edge = vector.transfer_read %a[%i, %c24], %pad {in_bounds = [false]} : memref<4x32xf32>, vector<16xf32>
    %scaled = vector.broadcast %sum : f32 to vector<16xf32>
    %out = arith.mulf %edge, %scaled : vector<16xf32>
    vector.transfer_write %out, %c[%next, %c8] {in_bounds = [false]} : vector<16xf32>, memref<4x16xf32>
  }
  return
}
)mlir";

// The kernel lowered by `pipeline`, as LLVM IR after instcombine and early-cse:
// the conversions may build the operands' memref descriptors in another order,
// which LLVM folds away.
std::string loweredToLlvmIr(const std::string& pipeline) {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = test::parseKernelIr(context, kVectorKernel);
  if (!module) return "(does not parse)";
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm))) return "(pipeline does not parse)";
  if (mlir::failed(pm.run(*module))) return "(pipeline failed)";
  mlir::registerBuiltinDialectTranslation(context);
  mlir::registerLLVMDialectTranslation(context);
  llvm::LLVMContext llvm_context;
  std::unique_ptr<llvm::Module> llvm_module = mlir::translateModuleToLLVMIR(*module, llvm_context);
  if (!llvm_module) return "(does not translate)";
  runLlvmPipeline(*llvm_module, "function(instcombine,early-cse)");
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm_module->print(os, nullptr);
  return text;
}

TEST(ToLlvm, PipelineLowersAKernelAsTheUpstreamPassesItStandsForDo) {
  mlir::registerAllPasses();
  registerToLlvmPasses();
  const std::string upstream = loweredToLlvmIr(
      "convert-vector-to-scf{full-unroll=true},convert-scf-to-cf,expand-strided-metadata,lower-affine,"
      "convert-vector-to-llvm{enable-x86vector=true},finalize-memref-to-llvm,convert-math-to-llvm,"
      "convert-arith-to-llvm,convert-func-to-llvm{use-bare-ptr-memref-call-conv=true},convert-cf-to-llvm,"
      "convert-ub-to-llvm,reconcile-unrealized-casts");
  const std::string ours = loweredToLlvmIr(kToLlvmPipeline);
  EXPECT_NE(ours.find("llvm.x86.avx512bf16.dpbf16ps.512"), std::string::npos) << ours;
  EXPECT_NE(ours.find("llvm.masked.load"), std::string::npos) << ours;
  EXPECT_NE(ours.find("llvm.masked.store"), std::string::npos) << ours;
  EXPECT_EQ(ours, upstream);
}

}  // namespace
}  // namespace nkbench::mlir_backend
