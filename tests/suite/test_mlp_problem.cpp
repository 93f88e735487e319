// The mlp kind's Problem: sizes, offsets, FLOPs and its names, as the suite
// parser, the reference and the reports use them.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/problem.h"
#include "tests/support/test_problems.h"

namespace nkbench {
namespace {

using test::makeMlpProblem;

TEST(MlpProblem, KindAndActivationNames) {
  EXPECT_EQ(toString(OpKind::Mlp), "mlp");
  EXPECT_EQ(parseOpKind("mlp"), OpKind::Mlp);
  EXPECT_EQ(parseOpKind("MLP"), std::nullopt);
  EXPECT_EQ(toString(Activation::Relu), "relu");
  EXPECT_EQ(toString(Activation::None), "none");
  EXPECT_EQ(parseActivation("relu"), Activation::Relu);
  EXPECT_EQ(parseActivation("none"), Activation::None);
  EXPECT_EQ(parseActivation("gelu"), std::nullopt);
  EXPECT_EQ(parseActivation(""), std::nullopt);
}

TEST(MlpProblem, FlopsCountTheLayersGemmsOnly) {
  // 2 * 16 * (64*96 + 96*32): the bias and ReLU passes are not counted.
  const Problem p = makeMlpProblem(DType::F32, 16, {64, 96, 32}, true, Activation::Relu);
  EXPECT_EQ(p.flops(), 2.0 * 16 * (64 * 96 + 96 * 32));
  EXPECT_EQ(p.flops(), 294912.0);
  EXPECT_EQ(makeMlpProblem(DType::F32, 16, {64, 96, 32}, false, Activation::None).flops(), 294912.0);
  // Four 1024-wide layers of 256 rows: 3 GEMMs of 2 * 256 * 1024 * 1024.
  EXPECT_EQ(makeMlpProblem(DType::F32, 256, {1024, 1024, 1024, 1024}, true, Activation::Relu).flops(),
            3 * 2.0 * 256 * 1024 * 1024);
  // One layer is one GEMM: the same FLOPs as the gemm it multiplies.
  const Problem one = makeMlpProblem(DType::F32, 7, {5, 3}, false, Activation::None);
  EXPECT_EQ(one.flops(), one.mlpLayer(0).flops());
  EXPECT_EQ(one.flops(), 2.0 * 7 * 5 * 3);
}

TEST(MlpProblem, OperandSizesAndOffsets) {
  const Problem p = makeMlpProblem(DType::F32, 16, {64, 96, 32}, true, Activation::Relu);
  EXPECT_EQ(p.mlp.count(), 2);
  EXPECT_EQ(p.aElements(), 16 * 64);         // X
  EXPECT_EQ(p.bElements(), 64 * 96 + 96 * 32);  // W_1 then W_2
  EXPECT_EQ(p.cElements(), 16 * 96 + 16 * 32);  // Y_1 then Y_2
  EXPECT_EQ(p.biasElements(), 96 + 32);
  EXPECT_EQ(makeMlpProblem(DType::F32, 16, {64, 96, 32}, false, Activation::Relu).biasElements(), 0);
  EXPECT_EQ(p.reductionLength(), 64);

  EXPECT_EQ(p.mlp.weightOffset(0), 0);
  EXPECT_EQ(p.mlp.weightOffset(1), 64 * 96);
  EXPECT_EQ(p.mlp.weightOffset(2), p.bElements());
  EXPECT_EQ(p.mlp.biasOffset(0), 0);
  EXPECT_EQ(p.mlp.biasOffset(1), 96);
  EXPECT_EQ(p.mlp.biasOffset(2), p.biasElements());
  EXPECT_EQ(p.mlpOutputOffset(0), 0);
  EXPECT_EQ(p.mlpOutputOffset(1), 16 * 96);
  EXPECT_EQ(p.mlpOutputOffset(2), p.cElements());

  // A gemm or brgemm keeps its sizes and has no biases.
  Problem brgemm;
  brgemm.m = 8;
  brgemm.n = 32;
  brgemm.k = 16;
  brgemm.batch = 4;
  EXPECT_EQ(brgemm.bElements(), 4 * 16 * 32);
  EXPECT_EQ(brgemm.cElements(), 8 * 32);
  EXPECT_EQ(brgemm.biasElements(), 0);
  EXPECT_EQ(brgemm.flops(), 2.0 * 8 * 32 * 16 * 4);
}

TEST(MlpProblem, EachLayerIsTheGemmItMultiplies) {
  const Problem p = makeMlpProblem(DType::BF16, 16, {64, 96, 32}, true, Activation::Relu);
  const Problem first = p.mlpLayer(0);
  EXPECT_EQ(first.kind, OpKind::Gemm);
  EXPECT_EQ(first.m, 16);
  EXPECT_EQ(first.k, 64);
  EXPECT_EQ(first.n, 96);
  EXPECT_EQ(first.batch, 1);
  EXPECT_FALSE(first.accumulate);
  EXPECT_EQ(first.dtype, DType::BF16);
  EXPECT_EQ(first.c_dtype, DType::BF16);
  const Problem second = p.mlpLayer(1);
  EXPECT_EQ(second.m, 16);
  EXPECT_EQ(second.k, 96);
  EXPECT_EQ(second.n, 32);
  EXPECT_EQ(second.cElements(), p.cElements() - p.mlpOutputOffset(1));
  EXPECT_EQ(first.flops() + second.flops(), p.flops());
}

TEST(MlpProblem, DescribeNamesRowsWidthsAndEpilogue) {
  EXPECT_EQ(makeMlpProblem(DType::F32, 256, {1024, 1024, 1024}, true, Activation::Relu).describe(),
            "mlp f32 256x[1024-1024-1024] bias+relu");
  EXPECT_EQ(makeMlpProblem(DType::BF16, 16, {64, 96, 32}, true, Activation::None).describe(),
            "mlp bf16 16x[64-96-32] bias");
  EXPECT_EQ(makeMlpProblem(DType::F32, 16, {64, 96, 32}, false, Activation::Relu).describe(),
            "mlp f32 16x[64-96-32] relu");
  EXPECT_EQ(makeMlpProblem(DType::F32, 16, {64, 96, 32}, false, Activation::None).describe(), "mlp f32 16x[64-96-32]");
}

TEST(MlpProblem, WidthsTextRoundTrips) {
  for (const std::vector<std::int64_t>& widths :
       {std::vector<std::int64_t>{64, 96, 32}, {1, 1}, {1048576, 7, 1024, 1024, 3}}) {
    const MlpLayers layers{widths, false, Activation::None};
    EXPECT_EQ(parseMlpWidths(layers.widthsText()), widths) << layers.widthsText();
  }
  EXPECT_EQ(MlpLayers({{64, 96, 32}, true, Activation::Relu}).widthsText(), "64-96-32");
  EXPECT_EQ(parseMlpWidths("1024-1024"), (std::vector<std::int64_t>{1024, 1024}));
  for (const char* bad : {"", "64", "64-", "-64", "64--32", "64-0", "64-x", "64-+3", "64 -32", "64-32-", "0-1", "a-b",
                          "99999999999999999999-1"})
    EXPECT_EQ(parseMlpWidths(bad), std::nullopt) << bad;
}

TEST(MlpProblem, EpilogueTextRoundTrips) {
  const struct {
    bool bias;
    Activation activation;
    const char* text;
  } cases[] = {{true, Activation::Relu, "bias+relu"},
               {true, Activation::None, "bias"},
               {false, Activation::Relu, "relu"},
               {false, Activation::None, ""}};
  for (const auto& c : cases) {
    const MlpLayers layers{{8, 8}, c.bias, c.activation};
    EXPECT_EQ(layers.epilogueText(), c.text);
    // Parsing sets both, whatever they were.
    MlpLayers parsed{{8, 8}, !c.bias, c.activation == Activation::Relu ? Activation::None : Activation::Relu};
    ASSERT_TRUE(parseMlpEpilogue(c.text, parsed)) << c.text;
    EXPECT_EQ(parsed, layers) << c.text;
  }
  MlpLayers untouched{{8, 8}, true, Activation::Relu};
  for (const char* bad : {"relu+bias", "gelu", "bias+", "none", "Bias", " bias"}) {
    EXPECT_FALSE(parseMlpEpilogue(bad, untouched)) << bad;
    EXPECT_EQ(untouched, (MlpLayers{{8, 8}, true, Activation::Relu})) << bad;
  }
}

}  // namespace
}  // namespace nkbench
