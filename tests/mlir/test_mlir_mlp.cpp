// mlp cases on the mlir backend: every layer's output against the reference,
// with the bias and ReLU fused into the block kernels' stores (and shown to
// be), or in a separate pass for comparison.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "harness/core/isa.h"
#include "kernels/mlir/mlir_backend.h"
#include "kernels/mlir/schedule.h"
#include "reference/bf16.h"
#include "reference/compare.h"
#include "reference/fill.h"
#include "reference/reference_mlp.h"

namespace nkbench {
namespace {

Problem mlpProblem(DType dtype, std::int64_t rows, std::vector<std::int64_t> widths, bool bias, Activation activation) {
  Problem p;
  p.kind = OpKind::Mlp;
  p.dtype = p.c_dtype = dtype;
  p.m = rows;
  p.mlp.widths = std::move(widths);
  p.mlp.bias = bias;
  p.mlp.activation = activation;
  p.k = p.mlp.widths.front();
  p.n = p.mlp.widths.back();
  return p;
}

struct MlpRun {
  Verification verification;
  KernelInfo info;
};

// Runs `p` on exact-integer data through the backend and verifies every layer.
MlpRun runMlp(Backend& backend, const Problem& p) {
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  const ReferenceResult reference = referenceMlp(p, data);
  std::vector<float> got(std::size_t(p.cElements()));
  std::unique_ptr<Kernel> kernel;
  auto run = [&](const void* a, const void* b, void* c) {
    kernel = backend.prepare(p, {a, b, c, data.bias.empty() ? nullptr : data.bias.data()});
    kernel->pack();
    kernel->compute();
    kernel->unpack();
  };
  if (p.dtype == DType::F32) {
    FloatBuffer c(got.size(), std::numeric_limits<float>::quiet_NaN());
    run(data.a.data(), data.b.data(), c.data());
    std::copy(c.begin(), c.end(), got.begin());
  } else {
    BFloat16Buffer a(data.a.size()), b(data.b.size()), c(got.size(), toBFloat16(std::numeric_limits<float>::quiet_NaN()));
    toBFloat16(data.a.data(), a.size(), a.data());
    toBFloat16(data.b.data(), b.size(), b.data());
    run(a.data(), b.data(), c.data());
    toFloat(c.data(), c.size(), got.data());
  }
  return {verifyResult(p, FillMode::ExactInteger, got.data(), reference), kernel->info()};
}

BackendConfig hostConfig(Isa isa, int threads = 1, std::string schedule = "") {
  BackendConfig config;
  config.isa = isa;
  config.host = detectCpuFeatures();
  config.threads = threads;
  config.mlir_schedule = std::move(schedule);
  return config;
}

Isa bestVectorIsa() {
  const CpuFeatures host = detectCpuFeatures();
  for (Isa isa : {Isa::Avx512Bf16, Isa::Avx512})
    if (host.has(isa)) return isa;
  return Isa::Avx2;
}

struct MlpShape {
  DType dtype;
  std::int64_t rows;
  std::vector<std::int64_t> widths;
  bool bias;
  Activation activation;
  int threads;
};

class MlirMlp : public ::testing::TestWithParam<MlpShape> {};

TEST_P(MlirMlp, EveryLayerMatchesTheReferenceWithTheEpilogueFusedIntoTheStores) {
  const MlpShape& shape = GetParam();
  const Problem p = mlpProblem(shape.dtype, shape.rows, shape.widths, shape.bias, shape.activation);
  for (Isa isa : {Isa::Avx2, bestVectorIsa()}) {
    if (!detectCpuFeatures().has(isa)) continue;
    auto backend = makeMlirBackend(hostConfig(isa, shape.threads));
    ASSERT_EQ(backend->unsupportedReason(p), std::nullopt);
    const MlpRun run = runMlp(*backend, p);
    EXPECT_EQ(run.verification.status, VerifyStatus::Passed)
        << "--isa " << toString(isa) << " " << p.describe() << ": " << run.verification.detail;
    if (p.hasEpilogue()) {
      EXPECT_NE(run.info.nanokernel.find("epilogue " + p.mlp.epilogueText() + " fused into"), std::string::npos)
          << run.info.nanokernel;
      EXPECT_NE(run.info.nanokernel.find(", 0 reads of C after them"), std::string::npos) << run.info.nanokernel;
    } else {
      EXPECT_EQ(run.info.nanokernel.find("epilogue"), std::string::npos) << run.info.nanokernel;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MlirMlp,
    ::testing::Values(MlpShape{DType::F32, 48, {64, 96, 32, 80}, true, Activation::Relu, 1},
                      // Widths no block divides: padded columns must stay zero through the layers.
                      MlpShape{DType::F32, 17, {33, 45, 19}, true, Activation::Relu, 2},
                      MlpShape{DType::F32, 9, {20, 40}, false, Activation::Relu, 1},
                      MlpShape{DType::F32, 16, {32, 48, 16}, true, Activation::None, 1},
                      MlpShape{DType::F32, 16, {32, 16}, false, Activation::None, 1},
                      MlpShape{DType::BF16, 40, {64, 96, 48}, true, Activation::Relu, 1},
                      MlpShape{DType::BF16, 21, {30, 50, 18}, true, Activation::Relu, 2}));

TEST(MlirMlp, SeparateEpilogueComputesTheSameAndSaysSo) {
  const Isa isa = bestVectorIsa();
  const Problem p = mlpProblem(DType::F32, 24, {64, 32, 48}, true, Activation::Relu);
  const std::string schedule = mlir_backend::selectSchedule(isa, DType::F32).name + ":epilogue=separate";
  auto backend = makeMlirBackend(hostConfig(isa, 1, schedule));
  const MlpRun run = runMlp(*backend, p);
  EXPECT_EQ(run.verification.status, VerifyStatus::Passed) << run.verification.detail;
  EXPECT_NE(run.info.implementation.find("bias+relu in a pass over each block after it"), std::string::npos)
      << run.info.implementation;
  EXPECT_EQ(run.info.nanokernel.find("epilogue"), std::string::npos) << run.info.nanokernel;
}

TEST(MlirMlp, TheGenericLoweringSkipsMlpsWithTheReason) {
  const Problem p = mlpProblem(DType::F32, 8, {16, 16}, true, Activation::Relu);
  auto backend = makeMlirDefaultBackend(hostConfig(Isa::Avx2));
  const std::optional<std::string> reason = backend->unsupportedReason(p);
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("no fused epilogue"), std::string::npos) << *reason;
}

}  // namespace
}  // namespace nkbench
