// mlp cases on the mlir backend: every layer's output against the reference,
// with the bias and ReLU fused into the block kernels' stores (and shown to
// be), or in separate passes over each layer's output for comparison.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/isa.h"
#include "kernels/mlir/kernel_problem.h"
#include "kernels/mlir/mlir_backend.h"
#include "kernels/mlir/schedule/schedule.h"
#include "tests/support/mlp_test_support.h"

namespace nkbench {
namespace {

using test::makeMlpProblem;
using test::runMlpAgainstReference;
using test::RunOutcome;

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
  const Problem p = makeMlpProblem(shape.dtype, shape.rows, shape.widths, shape.bias, shape.activation);
  for (Isa isa : {Isa::Avx2, bestVectorIsa()}) {
    if (!detectCpuFeatures().has(isa)) continue;
    auto backend = makeMlirBackend(hostConfig(isa, shape.threads));
    ASSERT_EQ(backend->unsupportedReason(p), std::nullopt);
    const RunOutcome run = runMlpAgainstReference(*backend, p, FillMode::ExactInteger);
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

// On the tile route the epilogue goes on each block's f32 rows as they are
// rounded into the bf16 C, right after the tile stores; on one thread and on
// two, each of which configures its own tiles.
TEST(MlirMlp, TileKernelsFuseTheEpilogueIntoEachBlocksRounding) {
  std::vector<Isa> tile_levels;
  for (Isa isa : {Isa::AmxEmulated, Isa::Amx})
    if (detectCpuFeatures().has(isa)) tile_levels.push_back(isa);
  if (tile_levels.empty()) GTEST_SKIP() << "the host runs no tile kernels, not even emulated";
  const std::vector<Problem> mlps = {
      makeMlpProblem(DType::BF16, 40, {64, 96, 48}, true, Activation::Relu),
      // Ragged: padded rows and columns must stay zero through the layers.
      makeMlpProblem(DType::BF16, 21, {30, 50, 18}, true, Activation::Relu),
      makeMlpProblem(DType::BF16, 32, {64, 64}, false, Activation::Relu),
      makeMlpProblem(DType::BF16, 32, {64, 32}, true, Activation::None)};
  for (Isa isa : tile_levels)
    for (int threads : {1, 2})
      for (const Problem& p : mlps) {
        SCOPED_TRACE(fmt::format("--isa {} --threads {} {}", toString(isa), threads, p.describe()));
        auto backend = makeMlirBackend(hostConfig(isa, threads));
        ASSERT_EQ(backend->unsupportedReason(p), std::nullopt);
        const RunOutcome run = runMlpAgainstReference(*backend, p, FillMode::ExactInteger);
        EXPECT_EQ(run.verification.status, VerifyStatus::Passed) << run.verification.detail;
        EXPECT_EQ(run.info.schedule, "amx.bf16.32x32");
        EXPECT_NE(run.info.nanokernel.find("amx-tile-nanokernel"), std::string::npos) << run.info.nanokernel;
        EXPECT_NE(run.info.nanokernel.find("epilogue " + p.mlp.epilogueText() + " fused into"), std::string::npos)
            << run.info.nanokernel;
        EXPECT_NE(run.info.nanokernel.find("rows after their tile stores"), std::string::npos) << run.info.nanokernel;
      }
}

TEST(MlirMlp, SeparateEpilogueComputesTheSameAndSaysSo) {
  const Isa isa = bestVectorIsa();
  const Problem p = makeMlpProblem(DType::F32, 24, {64, 32, 48}, true, Activation::Relu);
  const std::string schedule = mlir_backend::selectSchedule(isa, DType::F32).name + ":epilogue=separate";
  auto backend = makeMlirBackend(hostConfig(isa, 1, schedule));
  const RunOutcome run = runMlpAgainstReference(*backend, p, FillMode::ExactInteger);
  EXPECT_EQ(run.verification.status, VerifyStatus::Passed) << run.verification.detail;
  EXPECT_NE(run.info.implementation.find("bias+relu as passes over each layer's output"), std::string::npos)
      << run.info.implementation;
  EXPECT_EQ(run.info.nanokernel.find("epilogue"), std::string::npos) << run.info.nanokernel;
}

TEST(MlirMlp, TheGenericLoweringSkipsMlpsWithTheReason) {
  const Problem p = makeMlpProblem(DType::F32, 8, {16, 16}, true, Activation::Relu);
  auto backend = makeMlirDefaultBackend(hostConfig(Isa::Avx2));
  const std::optional<std::string> reason = backend->unsupportedReason(p);
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("no fused epilogue"), std::string::npos) << *reason;
}

// Its kernels round a bf16 C before the epilogue: a second rounding would be wrong.
TEST(MlirMlp, SeparateEpilogueSkipsBf16WithTheReason) {
  const Problem p = makeMlpProblem(DType::BF16, 8, {32, 32}, true, Activation::Relu);
  auto backend = makeMlirBackend(hostConfig(Isa::Avx2, 1, "avx2.bf16-widen.6x16:epilogue=separate"));
  const std::optional<std::string> reason = backend->unsupportedReason(p);
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("takes f32 mlps only"), std::string::npos) << *reason;
}

// Without a bias and an activation the setting would change nothing but the
// row's schedule name: such cases are skipped, saying so, and an mlp with
// them is not.
TEST(MlirMlp, SeparateEpilogueSkipsCasesWithoutOneWithTheReason) {
  auto backend = makeMlirBackend(hostConfig(Isa::Avx2, 1, "avx2.f32.6x16:epilogue=separate"));
  for (const Problem& p : {test::makeProblem(8, 16, 16, 2, false), test::makeProblem(24, 40, 32, 1, false, OpKind::Gemm),
                           makeMlpProblem(DType::F32, 8, {16, 16}, false, Activation::None)}) {
    SCOPED_TRACE(p.describe());
    const std::optional<std::string> reason = backend->unsupportedReason(p);
    ASSERT_TRUE(reason.has_value());
    EXPECT_NE(reason->find(":epilogue=separate runs an mlp's bias and activation as passes, and this " +
                           std::string(toString(p.kind)) + " has none"),
              std::string::npos)
        << *reason;
  }
  EXPECT_EQ(backend->unsupportedReason(makeMlpProblem(DType::F32, 8, {16, 16}, true, Activation::None)), std::nullopt);
  EXPECT_EQ(makeMlirBackend(hostConfig(Isa::Avx2))->unsupportedReason(test::makeProblem(8, 16, 16, 2, false)),
            std::nullopt);
}

// `show` prints an mlp's kernel as the run compiles it: with the epilogue
// fused, or without it where the schedule runs it as passes.
TEST(MlirMlp, TheKernelOfASeparateEpilogueHasNone) {
  const Problem p = makeMlpProblem(DType::F32, 64, {64, 64}, true, Activation::Relu);
  const Problem fused =
      mlir_backend::kernelProblemFor(p, mlir_backend::parseScheduleSpec("avx2.f32.6x16"), CacheSizes{});
  const Problem separate = mlir_backend::kernelProblemFor(
      p, mlir_backend::parseScheduleSpec("avx2.f32.6x16:epilogue=separate"), CacheSizes{});
  EXPECT_TRUE(fused.hasEpilogue());
  EXPECT_FALSE(separate.hasEpilogue());
  EXPECT_EQ(separate.m, fused.m);
  EXPECT_EQ(separate.batch, fused.batch);
}

}  // namespace
}  // namespace nkbench
