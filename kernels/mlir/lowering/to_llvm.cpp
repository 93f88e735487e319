#include "kernels/mlir/lowering/to_llvm.h"

#include <memory>
#include <optional>

#include "kernels/mlir/dialect_registry.h"
#include "kernels/mlir/lowering/vector_lowering.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/LoweringOptions.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/X86Vector/Transforms.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/DialectConversion.h"

namespace nkbench::mlir_backend {
namespace {

class ToLlvmPass final : public mlir::PassWrapper<ToLlvmPass, mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ToLlvmPass)
  llvm::StringRef getArgument() const override { return kToLlvmPass; }
  llvm::StringRef getDescription() const override {
    return "vector (x86vector), memref, arith, func (bare pointers), cf, ub and math to the LLVM dialect in one conversion";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    // The transfer lowering creates memref and arith ops, which the conversion then lowers.
    registry.insert<mlir::LLVM::LLVMDialect, mlir::arith::ArithDialect, mlir::memref::MemRefDialect,
                    mlir::x86vector::X86VectorDialect>();
  }

  llvm::LogicalResult initialize(mlir::MLIRContext* context) override {
    mlir::LowerToLLVMOptions options(context);
    options.useBarePtrCallConv = true;
    converter_ = std::make_shared<mlir::LLVMTypeConverter>(context, options);
    mlir::RewritePatternSet patterns(context);
    // As convert-vector-to-llvm{enable-x86vector=true} with its default options.
    mlir::vector::populateVectorTransferLoweringPatterns(patterns);
    mlir::populateVectorToLLVMConversionPatterns(*converter_, patterns, /*reassociateFPReductions=*/false,
                                                 /*force32BitVectorIndices=*/true);
    mlir::populateX86VectorLegalizeForLLVMExportPatterns(*converter_, patterns);
    mlir::populateFinalizeMemRefToLLVMConversionPatterns(*converter_, patterns);
    mlir::populateMathToLLVMConversionPatterns(*converter_, patterns);
    mlir::arith::populateArithToLLVMConversionPatterns(*converter_, patterns);
    mlir::populateFuncToLLVMConversionPatterns(*converter_, patterns);
    mlir::cf::populateControlFlowToLLVMConversionPatterns(*converter_, patterns);
    mlir::cf::populateAssertToLLVMConversionPattern(*converter_, patterns);  // as convert-cf-to-llvm
    mlir::ub::populateUBToLLVMConversionPatterns(*converter_, patterns);
    patterns_.emplace(std::move(patterns));
    return llvm::success();
  }

  void runOnOperation() override {
    mlir::LLVMConversionTarget target(getContext());
    // Casts left between converted values are reconciled after it
    // (reconcile-unrealized-casts), as after the upstream passes.
    target.addLegalOp<mlir::UnrealizedConversionCastOp>();
    mlir::configureX86VectorLegalizeForExportTarget(target);
    // An op of these left unconverted fails here, named, not later in translation.
    target.addIllegalDialect<mlir::vector::VectorDialect, mlir::memref::MemRefDialect, mlir::arith::ArithDialect,
                             mlir::func::FuncDialect, mlir::cf::ControlFlowDialect, mlir::ub::UBDialect,
                             mlir::math::MathDialect>();
    if (mlir::failed(mlir::applyPartialConversion(getOperation(), target, *patterns_))) signalPassFailure();
  }

 private:
  // The patterns refer to it; shared with the clones a pass manager makes of the pass.
  std::shared_ptr<mlir::LLVMTypeConverter> converter_;
  // No SymbolTableCollection goes into these patterns: it would outlive the module it was built for.
  std::optional<mlir::FrozenRewritePatternSet> patterns_;
};

}  // namespace

void registerToLlvmPasses() {
  registerVectorLoweringPasses();
  registerPassOnce<ToLlvmPass>();
}

}  // namespace nkbench::mlir_backend
