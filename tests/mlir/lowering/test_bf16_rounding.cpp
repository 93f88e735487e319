// The integer rounding of f32 to bf16 on hosts without avx512-bf16
// (bf16_rounding.h): the expanded ops, folded on constants, give toBFloat16's
// bits for ties, denormals, overflow, infinities and NaNs.

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/mlir/lowering/bf16_rounding.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "operands/bf16.h"
#include "tests/support/kernel_ir.h"

namespace nkbench::mlir_backend {
namespace {

const std::vector<std::uint32_t> kFloatBits = {
    0x3f800000, 0xbf800000, 0x00000000, 0x80000000,  // +-1, +-0
    0x3f808000, 0x3f818000, 0x3f808001, 0x3f807fff,  // ties to even (down, up), just above and below
    0x00008000, 0x00018000, 0x007fffff, 0x80000001,  // denormals: ties, the largest, the smallest
    0x7f7f8000, 0x7f7f7fff, 0xff7fffff,              // overflow to inf at the tie, the largest finite
    0x7f800000, 0xff800000,                          // infinities
    0x7fc00000, 0xffc00000, 0x7f800001, 0x7fa00000,  // NaNs: quiet, negative, payload dropped, signalling
    0x7fffffff, 0xffffffff,                          // all ones: no carry into the sign
};

TEST(Bf16Rounding, FoldsToTheReferenceBitsForEveryKindOfValue) {
  std::string body;
  for (std::size_t i = 0; i < kFloatBits.size(); ++i)
    body += fmt::format(
        "  %f{0} = arith.constant {1} : i32\n  %x{0} = arith.bitcast %f{0} : i32 to f32\n"
        "  %r{0} = arith.truncf %x{0} : f32 to bf16\n  %b{0} = arith.bitcast %r{0} : bf16 to i16\n",
        i, static_cast<std::int32_t>(kFloatBits[i]));
  std::vector<std::string> results, types;
  for (std::size_t i = 0; i < kFloatBits.size(); ++i) {
    results.push_back(fmt::format("%b{}", i));
    types.emplace_back("i16");
  }
  const std::string source = fmt::format("func.func @rounding() -> ({1}) {{\n{0}  return {2} : {1}\n}}\n",
                                         body, fmt::join(types, ", "), fmt::join(results, ", "));
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, source.c_str());
  ASSERT_TRUE(module);
  mlir::RewritePatternSet patterns(&context);
  populateBf16RoundingPatterns(patterns);
  ASSERT_TRUE(mlir::succeeded(mlir::applyPatternsGreedily(*module, std::move(patterns))));

  int truncations = 0;
  module->walk([&](mlir::arith::TruncFOp) { ++truncations; });
  EXPECT_EQ(truncations, 0);
  auto function = module->lookupSymbol<mlir::func::FuncOp>("rounding");
  mlir::Operation* ret = function.getBody().front().getTerminator();
  for (std::size_t i = 0; i < kFloatBits.size(); ++i) {
    mlir::IntegerAttr folded;
    ASSERT_TRUE(mlir::matchPattern(ret->getOperand(static_cast<unsigned>(i)), mlir::m_Constant(&folded)))
        << "not folded: " << std::hex << kFloatBits[i];
    const std::uint16_t expected = toBFloat16(std::bit_cast<float>(kFloatBits[i])).bits;
    EXPECT_EQ(static_cast<std::uint16_t>(folded.getValue().getZExtValue()), expected) << std::hex << kFloatBits[i];
  }
}

// Vectors take the same ops, lane by lane: valid IR whose NaN select is on
// i32 lanes, no bf16 value but the result. (arith folds no vector compare;
// the kernels' rounding tests check vector bits: test_mlir_bf16_c.cpp.)
TEST(Bf16Rounding, VectorsTakeTheSameOpsOnI32Lanes) {
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, R"mlir(
func.func @rounding(%x: vector<4xf32>) -> vector<4xbf16> {
  %r = arith.truncf %x : vector<4xf32> to vector<4xbf16>
  return %r : vector<4xbf16>
}
)mlir");
  ASSERT_TRUE(module);
  mlir::RewritePatternSet patterns(&context);
  populateBf16RoundingPatterns(patterns);
  ASSERT_TRUE(mlir::succeeded(mlir::applyPatternsGreedily(*module, std::move(patterns))));
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*module)));
  int truncations = 0, selects = 0, bf16_values = 0;
  module->walk([&](mlir::Operation* op) {
    truncations += llvm::isa<mlir::arith::TruncFOp>(op);
    if (auto select = llvm::dyn_cast<mlir::arith::SelectOp>(op))
      selects += select.getType() == mlir::VectorType::get({4}, mlir::IntegerType::get(&context, 32));
    for (mlir::Value result : op->getResults())
      bf16_values += mlir::getElementTypeOrSelf(result.getType()).isBF16();
  });
  EXPECT_EQ(truncations, 0);
  EXPECT_EQ(selects, 1);
  EXPECT_EQ(bf16_values, 1);  // the final bitcast
}

}  // namespace
}  // namespace nkbench::mlir_backend
