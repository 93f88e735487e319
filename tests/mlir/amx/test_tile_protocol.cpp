// The tile configuration protocol of the AMX kernels: the palettes the kernels
// need, the thread's configuration state (loaded once for a run of calls,
// reloaded only on change, released at the end of the run), and the emulator's
// faults for tiles used without the configuration they need. Runs on emulated
// tiles where the host has avx512-bf16, and on real tiles too where it has AMX.
#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "harness/run/runner.h"
#include "kernels/mlir/amx/amx_payload_ir.h"
#include "kernels/mlir/amx/tile_config.h"
#include "kernels/mlir/amx/tile_emulator.h"
#include "kernels/mlir/amx/tile_state.h"
#include "kernels/mlir/kernel_problem.h"
#include "kernels/mlir/mlir_backend.h"
#include "kernels/mlir/mlir_compiler.h"
#include "tests/backends/baseline_test_support.h"

namespace nkbench {
namespace {

using mlir_backend::TileMachine;

Problem tileBrgemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, bool accumulate = false) {
  return test::asBf16(test::brgemm(m, n, k, batch, accumulate));
}

std::vector<Isa> hostTileLevels() {
  std::vector<Isa> levels;
  for (Isa isa : {Isa::AmxEmulated, Isa::Amx})
    if (detectCpuFeatures().has(isa)) levels.push_back(isa);
  return levels;
}

TileMachine machineOf(Isa isa) { return isa == Isa::Amx ? TileMachine::Real : TileMachine::Emulated; }

mlir_backend::TilePalette paletteOf(const Problem& kernel_problem, std::size_t group = 0) {
  return mlir_backend::groupTileRegions(mlir_backend::planTileRegions(kernel_problem, 32, 32)).at(group).palette;
}

TEST(TilePalette, ABlockOfFourSixteenBySixteenTilesTakesAllEightRegisters) {
  const std::vector<mlir_backend::TileGroup> groups =
      mlir_backend::groupTileRegions(mlir_backend::planTileRegions(tileBrgemm(64, 64, 64, 1), 32, 32));
  ASSERT_EQ(groups.size(), 1u);
  const mlir_backend::TileRegisters& regs = groups[0].registers;
  EXPECT_EQ(regs.c(0, 0), 0);
  EXPECT_EQ(regs.c(1, 1), 3);
  EXPECT_EQ(regs.a(1), 5);
  EXPECT_EQ(regs.b(1), 7);
  const mlir_backend::TilePalette& palette = groups[0].palette;
  EXPECT_EQ(palette.bytes[0], 1);
  EXPECT_EQ(palette.bytes[1], 0);
  for (int tile = 0; tile < 8; ++tile) {
    EXPECT_EQ(palette.rows(tile), 16) << tile;
    EXPECT_EQ(palette.bytesPerRow(tile), 64) << tile;
  }
  for (std::size_t reserved = 2; reserved < 16; ++reserved) EXPECT_EQ(palette.bytes[reserved], 0) << reserved;
}

// C: 7 rows of 3 f32; A: 7 rows of 32 bf16; B: 16 pair rows of 3 pairs.
TEST(TilePalette, PartTilesConfigureTheirOwnRowsAndWidths) {
  EXPECT_EQ(paletteOf(tileBrgemm(7, 3, 32, 1)).describe(), "palette 1 tmm0 7x12 tmm1 7x64 tmm2 16x12");
  // 100 x 37: 16x16 tiles in 2 x 2 blocks, then 16x5 (2 x 1), 4x16 (1 x 2) and 4x5.
  EXPECT_EQ(paletteOf(tileBrgemm(100, 37, 32, 1), 1).describe(),
            "palette 1 tmm0 16x20 tmm1 16x20 tmm2 16x64 tmm3 16x64 tmm4 16x20");
  EXPECT_EQ(paletteOf(tileBrgemm(100, 37, 32, 1), 3).describe(), "palette 1 tmm0 4x20 tmm1 4x64 tmm2 16x20");
}

class TileEmulator : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!detectCpuFeatures().has(Isa::AmxEmulated)) GTEST_SKIP() << "host lacks avx512-bf16";
    mlir_backend::releaseTiles(TileMachine::Emulated);
    mlir_backend::takeEmulatedTileFault();
  }
  void TearDown() override { mlir_backend::releaseTiles(TileMachine::Emulated); }
  std::unique_ptr<mlir_backend::CompiledKernel> compile(const Problem& problem) {
    return compiler_.compile(problem, mlir_backend::selectSchedule(Isa::AmxEmulated, DType::BF16, "amx.bf16.32x32"),
                             mlir_backend::Lowering::Nanokernel);
  }
  // Calls `kernel` on zero operands large enough for `problem`, with whatever is loaded.
  static std::string faultOfCall(const mlir_backend::CompiledKernel& kernel, const Problem& problem) {
    std::vector<BFloat16> a(problem.batch * problem.m * problem.k), b(problem.batch * problem.k * problem.n);
    std::vector<float> c(problem.m * problem.n);
    kernel.function()(a.data(), b.data(), c.data());
    return mlir_backend::takeEmulatedTileFault().value_or("no fault");
  }
  mlir_backend::MlirCompiler compiler_{Isa::AmxEmulated, CacheSizes{}};
};

TEST_F(TileEmulator, TilesUsedWithoutAConfigurationFault) {
  const Problem problem = tileBrgemm(32, 32, 32, 1);
  EXPECT_EQ(faultOfCall(*compile(problem), problem), "tilezero with no tile configuration loaded");
}

// The 7x3 kernel's configuration has three tiles; the 32x32 kernel needs eight.
TEST_F(TileEmulator, AConfigurationOfAnotherTileShapeFaults) {
  const Problem small = tileBrgemm(7, 3, 32, 1), large = tileBrgemm(32, 32, 32, 1);
  const auto small_kernel = compile(small), large_kernel = compile(large);
  mlir_backend::useTileConfig(TileMachine::Emulated, small_kernel->tileCalls()->entry_palette);
  EXPECT_NE(faultOfCall(*large_kernel, large).find("tilezero: tmm3 is not configured"), std::string::npos);
  mlir_backend::useTileConfig(TileMachine::Emulated, large_kernel->tileCalls()->entry_palette);
  EXPECT_EQ(faultOfCall(*large_kernel, large), "no fault");
}

// A parallel run's calls fault on the threads that make them; the thread that
// started the run takes the fault.
TEST_F(TileEmulator, AFaultOnAnotherThreadIsTakenByAnyThread) {
  const Problem problem = tileBrgemm(32, 32, 32, 1);
  const auto kernel = compile(problem);
  std::thread([&] {
    std::vector<BFloat16> a(problem.m * problem.k), b(problem.k * problem.n);
    std::vector<float> c(problem.m * problem.n);
    kernel->function()(a.data(), b.data(), c.data());
  }).join();
  EXPECT_EQ(mlir_backend::takeEmulatedTileFault().value_or("no fault"), "tilezero with no tile configuration loaded");
  EXPECT_EQ(mlir_backend::takeEmulatedTileFault(), std::nullopt) << "taken once";
}

// A thread's configuration, once any thread has released its tiles, may have
// been replaced by other code on that thread (OpenMP gives a run's release no
// promise of reaching the threads that made its calls): it is loaded again.
TEST_F(TileEmulator, AReleaseOnAnyThreadMakesEveryThreadLoadAgain) {
  const mlir_backend::TilePalette palette = paletteOf(tileBrgemm(32, 32, 32, 1));
  std::promise<void> released;
  std::promise<std::int64_t> loads_before, loads_after;
  std::thread worker([&] {
    mlir_backend::useTileConfig(TileMachine::Emulated, palette);
    mlir_backend::useTileConfig(TileMachine::Emulated, palette);
    loads_before.set_value(mlir_backend::tileConfigLoads(TileMachine::Emulated));
    released.get_future().wait();
    mlir_backend::useTileConfig(TileMachine::Emulated, palette);
    loads_after.set_value(mlir_backend::tileConfigLoads(TileMachine::Emulated));
    mlir_backend::releaseTiles(TileMachine::Emulated);
  });
  EXPECT_EQ(loads_before.get_future().get(), 1) << "loaded once, then found loaded";
  mlir_backend::useTileConfig(TileMachine::Emulated, palette);
  mlir_backend::releaseTiles(TileMachine::Emulated);
  released.set_value();
  EXPECT_EQ(loads_after.get_future().get(), 2);
  worker.join();
}

// As the CPU checks: C and A rows, C and B widths, A pairs and B rows agree.
TEST_F(TileEmulator, ProductsOfTilesWhoseShapesDisagreeFault) {
  mlir_backend::TilePalette palette;
  palette.setTile(0, 16, 64);
  palette.setTile(1, 8, 64);
  palette.setTile(2, 16, 64);
  mlir_backend::useTileConfig(TileMachine::Emulated, palette);
  using Product = void (*)(std::int64_t, std::int64_t, std::int64_t);
  Product product = nullptr;
  for (const auto& [name, address] : mlir_backend::emulatedTileFunctions())
    if (name.ends_with("tdpbf16ps")) product = reinterpret_cast<Product>(address);
  ASSERT_NE(product, nullptr);
  product(0, 1, 2);
  EXPECT_NE(mlir_backend::takeEmulatedTileFault().value_or("").find("the configured shapes do not fit"),
            std::string::npos);
  product(0, 0, 2);
  EXPECT_NE(mlir_backend::takeEmulatedTileFault().value_or("").find("the tiles must differ"), std::string::npos);
}

// One kernel bound to its operands (an f32 C) and reference, as the runner binds it.
struct BoundTileKernel {
  BoundTileKernel(Backend& backend, const Problem& p, std::uint64_t seed)
      : problem(p), data(makeProblemData(p, FillMode::ExactInteger, seed)), c(data.c_init),
        a(test::exactBf16(data.a)), b(test::exactBf16(data.b)),
        kernel(backend.prepare(p, {a.data(), b.data(), c.data()})),
        reference(referenceGemm(p, data.a.data(), data.b.data(), data.c_init.data())) {
    kernel->pack();
  }
  // From C's initial values (beta 1) or NaN (beta 0, never to be read).
  Verification runOnce() {
    for (std::size_t i = 0; i < c.size(); ++i)
      c[i] = problem.accumulate ? data.c_init[i] : std::numeric_limits<float>::quiet_NaN();
    kernel->compute();
    kernel->unpack();
    return verifyResult(problem, FillMode::ExactInteger, c.data(), reference);
  }
  Problem problem;
  ProblemData data;
  FloatBuffer c;
  BFloat16Buffer a, b;
  std::unique_ptr<Kernel> kernel;
  ReferenceResult reference;
};

std::unique_ptr<Backend> tileBackend(Isa isa) {
  BackendConfig config = test::hostConfig(isa);
  config.mlir_schedule = "amx.bf16.32x32";
  return makeMlirBackend(config);
}

TEST(TileCalls, ARunOfCallsLoadsTheConfigurationOnceAndReleasesItAtTheEnd) {
  if (hostTileLevels().empty()) GTEST_SKIP() << "host lacks avx512-bf16";
  for (Isa isa : hostTileLevels()) {
    SCOPED_TRACE(toString(isa));
    const TileMachine machine = machineOf(isa);
    const std::unique_ptr<Backend> backend = tileBackend(isa);
    BoundTileKernel bound(*backend, tileBrgemm(64, 64, 64, 2, true), 1);
    const std::int64_t before = mlir_backend::tileConfigLoads(machine);
    for (int call = 0; call < 5; ++call) EXPECT_EQ(bound.runOnce().status, VerifyStatus::Passed);
    EXPECT_EQ(mlir_backend::tileConfigLoads(machine), before + 1);
    bound.kernel->finishCalls();
    EXPECT_EQ(bound.runOnce().status, VerifyStatus::Passed);
    EXPECT_EQ(mlir_backend::tileConfigLoads(machine), before + 2);
    bound.kernel->finishCalls();
  }
}

// Kernels of different tile shapes called in turn without a release between
// them: each call finds its configuration loaded, or loads it, and stays exact.
// The 7x33 kernel has two tile shapes (7x16, 7x1): it leaves its second loaded,
// so each of its calls loads both, even right after itself.
TEST(TileCalls, KernelsOfDifferentTileShapesInTurnReloadOnlyOnChangeAndStayExact) {
  if (hostTileLevels().empty()) GTEST_SKIP() << "host lacks avx512-bf16";
  for (Isa isa : hostTileLevels()) {
    SCOPED_TRACE(toString(isa));
    const TileMachine machine = machineOf(isa);
    const std::unique_ptr<Backend> backend = tileBackend(isa);
    BoundTileKernel square(*backend, tileBrgemm(64, 64, 64, 2), 1), ragged(*backend, tileBrgemm(7, 33, 5, 2, true), 2),
        square_again(*backend, tileBrgemm(32, 32, 96, 3, true), 3);
    mlir_backend::releaseTiles(machine);
    const std::int64_t start = mlir_backend::tileConfigLoads(machine);
    const struct {
      BoundTileKernel* kernel;
      std::int64_t loads;  // configurations loaded by this call
    } turns[] = {{&square, 1}, {&ragged, 2}, {&square, 1}, {&square_again, 0}, {&ragged, 2}, {&ragged, 2}};
    std::int64_t expected = start;
    for (const auto& turn : turns) {
      const Verification verification = turn.kernel->runOnce();
      EXPECT_EQ(verification.status, VerifyStatus::Passed) << verification.detail;
      EXPECT_EQ(verification.max_error, 0.0);
      expected += turn.loads;
      EXPECT_EQ(mlir_backend::tileConfigLoads(machine), expected) << turn.kernel->problem.describe();
    }
    mlir_backend::releaseTiles(machine);
  }
}

// A GEMM's blocks shared out among two OpenMP threads: each thread loads the
// configuration before its blocks (emulated tiles fault on a thread that did
// not), and the results stay exact.
TEST(TileCalls, GemmBlocksOnTwoThreadsEachLoadTheirConfigurationAndStayExact) {
  if (hostTileLevels().empty()) GTEST_SKIP() << "host lacks avx512-bf16";
  for (Isa isa : hostTileLevels()) {
    SCOPED_TRACE(toString(isa));
    const std::unique_ptr<Backend> backend = makeMlirBackend(test::hostConfig(isa, 2));
    // Several C blocks each, so that the second thread calls too; 64x128x256
    // fits one B panel, which two threads split into two (gemmBlockingFor).
    for (const Problem& problem : {test::asBf16(test::gemm(512, 256, 64)), test::asBf16(test::gemm(300, 130, 96)),
                                   test::asBf16(test::gemm(256, 256, 64), DType::BF16),
                                   test::asBf16(test::gemm(64, 128, 256))}) {
      ASSERT_EQ(backend->unsupportedReason(problem), std::nullopt) << problem.describe();
      const test::RunOutcome run = test::runAgainstReference(*backend, problem);
      EXPECT_EQ(run.verification.status, VerifyStatus::Passed) << problem.describe() << ": " << run.verification.detail;
      EXPECT_EQ(run.verification.max_error, 0.0) << problem.describe();
      EXPECT_NE(run.info.nanokernel.find("amx-tile-nanokernel"), std::string::npos) << run.info.nanokernel;
      if (problem.m == 64) {
        EXPECT_NE(run.info.packing.find("B -> 256x64 VNNI"), std::string::npos) << run.info.packing;
      }
    }
    EXPECT_EQ(mlir_backend::takeEmulatedTileFault(), std::nullopt);
  }
}

// Real and emulated tiles agree bit for bit on operands that round (not the
// exact fill), kernels of different tile shapes in turn.
TEST(TileCalls, RealAndEmulatedTilesAgreeBitForBit) {
  if (!detectCpuFeatures().has(Isa::Amx)) GTEST_SKIP() << "host lacks AMX: real tiles cannot run here";
  const std::unique_ptr<Backend> real = tileBackend(Isa::Amx), emulated = tileBackend(Isa::AmxEmulated);
  std::mt19937 random(7);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (const Problem& problem : {tileBrgemm(64, 64, 64, 2, true), tileBrgemm(7, 33, 5, 2, true),
                                 tileBrgemm(100, 37, 129, 3, true), tileBrgemm(64, 64, 64, 4, true)}) {
    SCOPED_TRACE(problem.describe());
    BFloat16Buffer a(problem.batch * problem.m * problem.k), b(problem.batch * problem.k * problem.n);
    for (BFloat16& x : a) x = toBFloat16(value(random));
    for (BFloat16& x : b) x = toBFloat16(value(random));
    std::vector<float> c_init(problem.m * problem.n);
    for (float& x : c_init) x = value(random);
    std::vector<float> c_real = c_init, c_emulated = c_init;
    for (auto& [backend, c] : {std::pair{real.get(), &c_real}, std::pair{emulated.get(), &c_emulated}}) {
      const std::unique_ptr<Kernel> kernel = backend->prepare(problem, {a.data(), b.data(), c->data()});
      kernel->pack();
      kernel->compute();
      kernel->unpack();
    }
    EXPECT_EQ(std::memcmp(c_real.data(), c_emulated.data(), c_real.size() * sizeof(float)), 0);
  }
  mlir_backend::releaseTiles(TileMachine::Real);
  mlir_backend::releaseTiles(TileMachine::Emulated);
}

// The runner: one load per run of calls (the verification, then each timed
// repetition with its warm-up), thousands of calls each, and the tiles released after each.
TEST(TileCalls, TheRunnerLoadsOncePerRunOfCallsAndReleasesAfterEach) {
  if (!detectCpuFeatures().has(Isa::AmxEmulated)) GTEST_SKIP() << "host lacks avx512-bf16";
  const Problem problem = tileBrgemm(32, 32, 64, 2);
  Suite suite{.name = "tiles", .description = "", .path = "tiles.yaml", .cases = {{"tiles-32", problem, 1}}};
  RunOptions options;
  options.backends = {"mlir"};
  options.isa = Isa::AmxEmulated;
  options.mlir_schedule = "amx.bf16.32x32";
  options.timing = {.repetitions = 3, .min_time_s = 0.001, .warmup_s = 0.001};
  options.progress = false;
  options.isolate = false;  // the tiles counted are this process's
  const std::int64_t before = mlir_backend::tileConfigLoads(TileMachine::Emulated);
  const RunSummary summary = runSuite(suite, options);
  ASSERT_EQ(summary.rows.size(), 1u);
  EXPECT_EQ(summary.rows[0].status, VerifyStatus::Passed) << summary.rows[0].note;
  EXPECT_EQ(mlir_backend::tileConfigLoads(TileMachine::Emulated), before + 1 + 3);
  // Released at the end: the same configuration loads again.
  const mlir_backend::Schedule& schedule = mlir_backend::selectSchedule(Isa::AmxEmulated, DType::BF16, "amx.bf16.32x32");
  const Problem kernel_problem = mlir_backend::kernelProblemFor(problem, schedule, CacheSizes{});
  mlir_backend::useTileConfig(TileMachine::Emulated, paletteOf(kernel_problem));
  EXPECT_EQ(mlir_backend::tileConfigLoads(TileMachine::Emulated), before + 5);
  mlir_backend::releaseTiles(TileMachine::Emulated);
}

}  // namespace
}  // namespace nkbench
