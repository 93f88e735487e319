// LLVM's clean-up of a kernel module (llvm_cleanup.h): what the kernels need
// from LLVM's middle end is done, on IR shaped as the MLIR lowering leaves it.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kernels/mlir/jit/llvm_cleanup.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetOptions.h"

namespace nkbench::mlir_backend {
namespace {

// A loop whose address arithmetic does not change inside it (the row offset
// i * ld) and a masked load whose mask is all true. (What the second
// instcombine and vector-combine do is checked on a real kernel:
// MlirStructure.ARaggedBf16EdgeIsGatheredInRegisters.)
constexpr const char* kKernelShapedIr = R"ll(
define void @kernel(ptr noalias %a, ptr noalias %c, i64 %i, i64 %ld) {
entry:
  br label %loop
loop:
  %k = phi i64 [ 0, %entry ], [ %k.next, %loop ]
  %acc = phi <16 x float> [ zeroinitializer, %entry ], [ %sum, %loop ]
  %row = mul i64 %i, %ld
  %at = add i64 %row, %k
  %ptr = getelementptr float, ptr %a, i64 %at
  %v = call <16 x float> @llvm.masked.load.v16f32.p0(ptr %ptr, i32 4, <16 x i1> splat (i1 true), <16 x float> zeroinitializer)
  %sum = fadd <16 x float> %acc, %v
  %k.next = add i64 %k, 16
  %done = icmp sge i64 %k.next, 256
  br i1 %done, label %exit, label %loop
exit:
  store <16 x float> %sum, ptr %c, align 4
  ret void
}
)ll";

class LlvmCleanup : public ::testing::Test {
 protected:
  void SetUp() override {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::SMDiagnostic error;
    module_ = llvm::parseAssemblyString(kKernelShapedIr, error, context_);
    ASSERT_TRUE(module_) << error.getMessage().str();
    const llvm::Triple triple("x86_64-unknown-linux-gnu");
    std::string lookup_error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, lookup_error);
    ASSERT_TRUE(target) << lookup_error;
    machine_.reset(target->createTargetMachine(triple, "x86-64-v4", "", llvm::TargetOptions(), std::nullopt));
    ASSERT_TRUE(machine_);
    module_->setDataLayout(machine_->createDataLayout());
    cleanUpKernelModule(*module_, *machine_);
    kernel_ = module_->getFunction("kernel");
  }

  llvm::BasicBlock& block(const char* name) {
    for (llvm::BasicBlock& b : *kernel_)
      if (b.getName() == name) return b;
    ADD_FAILURE() << "no block " << name;
    return kernel_->getEntryBlock();
  }

  template <typename Op>
  int count(llvm::BasicBlock& in) {
    int n = 0;
    for (llvm::Instruction& instruction : in) n += llvm::isa<Op>(instruction);
    return n;
  }

  llvm::LLVMContext context_;
  std::unique_ptr<llvm::Module> module_;
  std::unique_ptr<llvm::TargetMachine> machine_;
  llvm::Function* kernel_ = nullptr;
};

TEST_F(LlvmCleanup, LoopInvariantAddressArithmeticLeavesTheLoop) {
  EXPECT_EQ(count<llvm::BinaryOperator>(block("entry")), 1);  // i * ld
  for (llvm::Instruction& instruction : block("loop"))
    if (instruction.getOpcode() == llvm::Instruction::Mul) ADD_FAILURE() << "a multiply is left in the loop";
}

TEST_F(LlvmCleanup, AnAllTrueMaskedLoadIsAPlainLoad) {
  EXPECT_EQ(count<llvm::IntrinsicInst>(block("loop")), 0);
  EXPECT_EQ(count<llvm::LoadInst>(block("loop")), 1);
}

}  // namespace
}  // namespace nkbench::mlir_backend
