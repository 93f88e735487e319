// One code generator pipeline for every kernel (object_emitter.h): each
// module's object is byte for byte what a fresh pipeline emits for it, however
// many modules the pipeline emitted before.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kernels/mlir/jit/object_emitter.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetOptions.h"

namespace nkbench::mlir_backend {
namespace {

// A loop of FMAs on a pointer, and a function with a constant and a global: the
// second module's symbols, sections and constant pool differ from the first's.
constexpr const char* kLoop = R"ll(
define void @kernel(ptr noalias %a, ptr noalias %c) {
entry:
  br label %body
body:
  %k = phi i64 [ 0, %entry ], [ %k.next, %body ]
  %acc = phi <16 x float> [ zeroinitializer, %entry ], [ %sum, %body ]
  %ptr = getelementptr float, ptr %a, i64 %k
  %v = load <16 x float>, ptr %ptr, align 4
  %sum = call <16 x float> @llvm.fma.v16f32(<16 x float> %v, <16 x float> %v, <16 x float> %acc)
  %k.next = add i64 %k, 16
  %more = icmp slt i64 %k.next, 256
  br i1 %more, label %body, label %exit
exit:
  store <16 x float> %acc, ptr %c, align 4
  ret void
}
declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
)ll";

constexpr const char* kConstants = R"ll(
@scale = internal constant <8 x float> <float 1.0, float 2.0, float 3.0, float 4.0, float 5.0, float 6.0, float 7.0, float 8.0>
define void @other(ptr noalias %c) {
  %s = load <8 x float>, ptr @scale, align 32
  %v = load <8 x float>, ptr %c, align 4
  %m = fmul <8 x float> %v, %s
  store <8 x float> %m, ptr %c, align 4
  ret void
}
)ll";

class ObjectEmitterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    const llvm::Triple triple("x86_64-unknown-linux-gnu");
    std::string lookup_error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, lookup_error);
    ASSERT_TRUE(target) << lookup_error;
    machine_.reset(target->createTargetMachine(triple, "x86-64-v4", "", llvm::TargetOptions(), std::nullopt,
                                               std::nullopt, llvm::CodeGenOptLevel::Aggressive));
    ASSERT_TRUE(machine_);
  }

  // Each module in a context of its own, gone after its object, as the compiler does.
  std::string emit(ObjectEmitter& emitter, const char* text) {
    llvm::LLVMContext context;
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(text, error, context);
    EXPECT_TRUE(module) << error.getMessage().str();
    if (!module) return {};
    module->setDataLayout(machine_->createDataLayout());
    module->setTargetTriple(machine_->getTargetTriple());
    return emitter.emit(*module);
  }

  // What a pipeline built for this one module emits.
  std::string fresh(const char* text) {
    ObjectEmitter emitter(*machine_);
    return emit(emitter, text);
  }

  // Assembly of the same machine in between, as `show` asks for it.
  void emitAssemblyBetween(const char* text) {
    llvm::LLVMContext context;
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(text, error, context);
    ASSERT_TRUE(module);
    module->setDataLayout(machine_->createDataLayout());
    llvm::SmallString<0> text_out;
    llvm::raw_svector_ostream os(text_out);
    llvm::legacy::PassManager passes;
    ASSERT_FALSE(machine_->addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::AssemblyFile));
    passes.run(*module);
    EXPECT_NE(std::string(text_out).find("vfmadd"), std::string::npos);
  }

  std::unique_ptr<llvm::TargetMachine> machine_;
};

TEST_F(ObjectEmitterTest, EachModuleIsEmittedAsAFreshPipelineEmitsIt) {
  const std::string loop = fresh(kLoop), constants = fresh(kConstants);
  ASSERT_EQ(loop.substr(0, 4), "\x7f" "ELF");
  ASSERT_NE(loop, constants);
  ObjectEmitter reused(*machine_);
  EXPECT_EQ(emit(reused, kLoop), loop);
  EXPECT_EQ(emit(reused, kConstants), constants);
  emitAssemblyBetween(kLoop);
  EXPECT_EQ(emit(reused, kLoop), loop);
  EXPECT_EQ(emit(reused, kConstants), constants);
}

}  // namespace
}  // namespace nkbench::mlir_backend
