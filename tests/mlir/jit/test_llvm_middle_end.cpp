// LLVM's clean-up of a kernel module (llvm_middle_end.h): what the kernels need
// from LLVM's middle end is done, on IR shaped as the MLIR lowering leaves it.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kernels/mlir/jit/llvm_middle_end.h"
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

// A loop as MLIR's scf -> cf lowering leaves it (tested at its header), whose
// address arithmetic does not change inside it (the row offset i * ld), and a
// masked load whose mask is all true. (The second instcombine and
// vector-combine fold n-D aggregates of real kernels: llvm_middle_end.cpp.)
constexpr const char* kKernelShapedIr = R"ll(
declare <16 x float> @llvm.masked.load.v16f32.p0(ptr, <16 x i1>, <16 x float>)
define void @kernel(ptr noalias %a, ptr noalias %c, i64 %i, i64 %ld) {
entry:
  br label %header
header:
  %k = phi i64 [ 0, %entry ], [ %k.next, %body ]
  %acc = phi <16 x float> [ zeroinitializer, %entry ], [ %sum, %body ]
  %more = icmp slt i64 %k, 256
  br i1 %more, label %body, label %exit
body:
  %row = mul i64 %i, %ld
  %at = add i64 %row, %k
  %ptr = getelementptr float, ptr %a, i64 %at
  %v = call <16 x float> @llvm.masked.load.v16f32.p0(ptr align 4 %ptr, <16 x i1> splat (i1 true), <16 x float> zeroinitializer)
  %sum = fadd <16 x float> %acc, %v
  %k.next = add i64 %k, 16
  br label %body_end
body_end:
  br label %header
exit:
  store <16 x float> %acc, ptr %c, align 4
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
    optimizeKernelModule(*module_, *machine_, LlvmMiddleEnd::Cleanup);
    kernel_ = module_->getFunction("kernel");
  }

  // The block of the loop's load: the loop's body.
  llvm::BasicBlock& loop() {
    for (llvm::BasicBlock& b : *kernel_)
      for (llvm::Instruction& instruction : b)
        if (llvm::isa<llvm::LoadInst>(instruction) || llvm::isa<llvm::IntrinsicInst>(instruction)) return b;
    ADD_FAILURE() << "the loop's load is gone";
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
  EXPECT_EQ(count<llvm::BinaryOperator>(kernel_->getEntryBlock()), 1);  // i * ld
  for (llvm::Instruction& instruction : loop())
    if (instruction.getOpcode() == llvm::Instruction::Mul) ADD_FAILURE() << "a multiply is left in the loop";
}

TEST_F(LlvmCleanup, AnAllTrueMaskedLoadIsAPlainLoad) {
  EXPECT_EQ(count<llvm::IntrinsicInst>(loop()), 0);
  EXPECT_EQ(count<llvm::LoadInst>(loop()), 1);
}

TEST_F(LlvmCleanup, TheLoopIsOneBlockTestedAtItsEnd) {
  const auto* branch = llvm::dyn_cast<llvm::BranchInst>(loop().getTerminator());
  ASSERT_NE(branch, nullptr);
  ASSERT_TRUE(branch->isConditional());
  EXPECT_TRUE(branch->getSuccessor(0) == &loop() || branch->getSuccessor(1) == &loop());
}

}  // namespace
}  // namespace nkbench::mlir_backend
