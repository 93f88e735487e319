// A bf16 C on every bf16 route of the MLIR backend: the kernel sums in f32 and
// rounds once, itself, so C must hold the correctly rounded sum bit for bit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "harness/core/error.h"
#include "kernels/mlir/mlir_backend.h"
#include "kernels/mlir/mlir_compiler.h"
#include "kernels/mlir/vector/register_block_plan.h"
#include "tests/backends/baseline_test_support.h"

namespace nkbench {
namespace {

// The bf16 routes: the dot product, and f32 FMAs on AVX-512 and AVX2, with A
// widened when packed (the default) or in registers too (-widen).
struct Route {
  Isa isa;
  const char* nanokernel;  // the kind the `nanokernel` evidence starts with
  const char* schedule;    // "": the cap's default
};
const std::vector<Route> kRoutes = {{Isa::Avx512Bf16, "dot-nanokernel", ""},
                                    {Isa::Avx512, "widen-b-fma-nanokernel", ""},
                                    {Isa::Avx512, "widen-fma-nanokernel", "avx512.bf16-widen.8x32"},
                                    {Isa::Avx2, "widen-b-fma-nanokernel", ""},
                                    {Isa::Avx2, "widen-fma-nanokernel", "avx2.bf16-widen.6x16"}};

std::vector<Route> hostRoutes() {
  std::vector<Route> routes;
  for (const Route& route : kRoutes)
    if (detectCpuFeatures().has(route.isa)) routes.push_back(route);
  return routes;
}

Problem bf16C(Problem problem) { return test::asBf16(problem, DType::BF16); }

class MlirBf16C : public ::testing::TestWithParam<Problem> {};

TEST_P(MlirBf16C, HoldsTheCorrectlyRoundedSumOnEveryRoute) {
  const Problem& problem = GetParam();
  for (const Route& route : hostRoutes()) {
    BackendConfig config = test::hostConfig(route.isa);
    config.mlir_schedule = route.schedule;
    const std::unique_ptr<Backend> backend = makeMlirBackend(config);
    ASSERT_FALSE(backend->unsupportedReason(problem).has_value());
    const test::RunOutcome outcome = test::runAgainstReference(*backend, problem);
    EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed)
        << "--isa " << toString(route.isa) << " " << problem.describe() << ": " << outcome.verification.detail;
    EXPECT_EQ(outcome.info.nanokernel.rfind(route.nanokernel, 0), 0u)
        << "--isa " << toString(route.isa) << ": " << outcome.info.nanokernel;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MlirBf16C,
    ::testing::Values(bf16C(test::brgemm(32, 32, 32, 4, false)), bf16C(test::brgemm(32, 32, 32, 4, true)),
                      bf16C(test::brgemm(7, 33, 5, 3, true)),   // edge rows and columns, odd K, N % 4 != 0
                      bf16C(test::brgemm(8, 36, 7, 2, false)),  // odd K, a 4-wide tail
                      bf16C(test::brgemm(64, 64, 16, 7, true)), // batch chunks: the sum lives in Sum between them
                      bf16C(test::brgemm(50, 70, 40, 3, true)), // loops of blocks, masked edges: rounded at the stores
                      bf16C(test::gemm(100, 37, 129)),
                      bf16C(test::gemm(121, 75, 66))),  // column blocks widened: one of 80
    [](const testing::TestParamInfo<Problem>& param) {
      const Problem& p = param.param;
      return fmt::format("{}_{}x{}x{}_b{}_beta{}", toString(p.kind), p.m, p.n, p.k, p.batch, p.accumulate ? 1 : 0);
    });

// One product per output (the other K is zero) of random bf16 values whose
// exponents lie in [2^min_exponent, 2^30]: each f32 sum has up to 16 significant
// bits, so rounding it to bf16 meets ties, odd and even halves, and carries into
// the exponent. The kernel's rounding must equal toBFloat16.
struct RoundingCase {
  Problem problem = bf16C(test::brgemm(16, 64, 2, 1, false));
  BFloat16Buffer a, b;
  std::vector<BFloat16> expected;
  int ties = 0;
  int denormals = 0;
};

RoundingCase makeRoundingCase(int min_exponent) {
  RoundingCase test;
  const Problem& p = test.problem;
  std::uint64_t state = 11;
  auto randomBf16 = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto bits = static_cast<std::uint32_t>(state >> 33);
    const auto exponent = static_cast<std::uint32_t>(127 + min_exponent) + bits % static_cast<std::uint32_t>(31 - min_exponent);
    return BFloat16{static_cast<std::uint16_t>(((bits >> 8) & 0x8000u) | (exponent << 7) | ((bits >> 16) & 0x7fu))};
  };
  test.a.resize(static_cast<std::size_t>(p.aElements()));
  test.b.resize(static_cast<std::size_t>(p.bElements()));
  for (std::int64_t i = 0; i < p.m; ++i) test.a[static_cast<std::size_t>(i * p.k)] = randomBf16();
  for (BFloat16& value : test.b) value = randomBf16();
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const float sum = toFloat(test.a[static_cast<std::size_t>(i * p.k)]) * toFloat(test.b[static_cast<std::size_t>(j)]);
      test.ties += (std::bit_cast<std::uint32_t>(sum) & 0xffffu) == 0x8000u;
      test.denormals += std::fpclassify(sum) == FP_SUBNORMAL;
      test.expected.push_back(toBFloat16(sum));
    }
  return test;
}

void expectKernelRounding(const RoundingCase& test, Isa isa) {
  const std::unique_ptr<Backend> backend = makeMlirBackend(test::hostConfig(isa));
  BFloat16Buffer c(test.expected.size());
  const std::unique_ptr<Kernel> kernel = backend->prepare(test.problem, {test.a.data(), test.b.data(), c.data()});
  kernel->pack();
  kernel->compute();
  kernel->unpack();
  std::size_t wrong = 0, first_wrong = 0;
  for (std::size_t at = c.size(); at-- > 0;)
    if (c[at].bits != test.expected[at].bits) {
      ++wrong;
      first_wrong = at;
    }
  EXPECT_EQ(wrong, 0u) << "--isa " << toString(isa) << ": C[" << first_wrong << "] = 0x" << std::hex
                       << c[first_wrong].bits << ", expected 0x" << test.expected[first_wrong].bits;
}

TEST(MlirBf16CRounding, MatchesRoundToNearestEvenOnEveryRoute) {
  const RoundingCase test = makeRoundingCase(-30);
  ASSERT_GT(test.ties, 0);
  ASSERT_EQ(test.denormals, 0);
  for (const Route& route : hostRoutes()) expectKernelRounding(test, route.isa);
}

// The integer rounding of the widening routes keeps denormals (vcvtneps2bf16,
// like vdpbf16ps, flushes them: the dot-product route is not held to this).
TEST(MlirBf16CRounding, WideningRoutesKeepDenormals) {
  const RoundingCase test = makeRoundingCase(-75);
  ASSERT_GT(test.denormals, 0);
  for (const Route& route : hostRoutes())
    if (route.isa != Isa::Avx512Bf16) expectKernelRounding(test, route.isa);
}

// The dot-product route rounds with vcvtneps2bf16 (avx512-bf16) and calls
// nothing; its nanokernels are the same as for an f32 C.
TEST(MlirBf16CStructure, DotRouteRoundsWithVcvtneps2bf16AndKeepsItsNanokernels) {
  if (!detectCpuFeatures().has(Isa::Avx512Bf16)) GTEST_SKIP() << "host lacks avx512-bf16";
  mlir_backend::MlirCompiler compiler(Isa::Avx512Bf16, CacheSizes{});
  const mlir_backend::Schedule& schedule = mlir_backend::selectSchedule(Isa::Avx512Bf16, DType::BF16);
  const Problem f32_c = test::asBf16(test::brgemm(32, 32, 32, 4, true));
  mlir_backend::CompilationStages stages;
  auto rounding = compiler.compile(bf16C(f32_c), schedule, mlir_backend::Lowering::Nanokernel, &stages);
  auto plain = compiler.compile(f32_c, schedule, mlir_backend::Lowering::Nanokernel);

  EXPECT_TRUE(rounding->evidence().composed) << rounding->evidence().summary;
  EXPECT_EQ(rounding->evidence().summary,
            plain->evidence().summary + "; bf16 C rounded at 16 accumulator stores, widened at 16 accumulator reads");
  EXPECT_EQ(rounding->registerBlocks(), plain->registerBlocks());
  EXPECT_NE(stages.payload.find("arith.truncf"), std::string::npos);
  EXPECT_NE(stages.payload.find("arith.extf"), std::string::npos);  // beta 1 reads the bf16 C
  EXPECT_NE(stages.assembly.find("vcvtneps2bf16"), std::string::npos);
  EXPECT_FALSE(std::regex_search(stages.llvm_dialect, std::regex(R"(llvm\.call\s)")));
  EXPECT_FALSE(std::regex_search(stages.assembly, std::regex(R"(\bcall)")));
}

// Where the whole batch runs in one pass over C and the target rounds in one
// instruction, the blocks widen their accumulators from C and round them into
// it: no f32 sum on the stack. Batch chunks read the sum back between chunks,
// and integer rounding stays in one loop: there the sum stays. (Compiled only,
// for named CPUs: any host can check the kernels' structure.)
TEST(MlirBf16CStructure, OnePassKernelsRoundAtTheStoresWhereTheTargetRoundsNatively) {
  mlir_backend::MlirCompiler compiler(Isa::Avx512Bf16, CacheSizes{}, "znver4");
  const mlir_backend::Schedule& schedule = mlir_backend::selectSchedule(Isa::Avx512Bf16, DType::BF16);
  for (const Problem& problem : {bf16C(test::brgemm(50, 70, 40, 8, true)), bf16C(test::brgemm(15, 50, 64, 8, false))}) {
    const mlir_backend::CompilationStages stages =
        compiler.generate(problem, schedule, mlir_backend::Lowering::Nanokernel);
    EXPECT_EQ(stages.llvm_dialect.find("llvm.alloca"), std::string::npos) << problem.describe();
    EXPECT_NE(stages.assembly.find("vcvtneps2bf16"), std::string::npos) << problem.describe();
  }
  const Problem chunked = bf16C(test::brgemm(64, 64, 64, 32, true));
  ASSERT_GT(mlir_backend::planRegisterBlocks(chunked, schedule).batch_chunk, 0);
  EXPECT_NE(compiler.generate(chunked, schedule, mlir_backend::Lowering::Nanokernel).llvm_dialect.find("llvm.alloca"),
            std::string::npos);
  mlir_backend::MlirCompiler integer_rounding(Isa::Avx512, CacheSizes{}, "skylake-avx512");
  const mlir_backend::CompilationStages widening =
      integer_rounding.generate(bf16C(test::brgemm(15, 50, 64, 8, true)),
                                mlir_backend::selectSchedule(Isa::Avx512, DType::BF16), mlir_backend::Lowering::Nanokernel);
  EXPECT_NE(widening.llvm_dialect.find("llvm.alloca"), std::string::npos);
}

// Where this host rounds natively, the row names the rounded stores.
TEST(MlirBf16CStructure, TheRowSaysWhereCIsRounded) {
  if (!detectCpuFeatures().has(Isa::Avx512Bf16)) GTEST_SKIP() << "host lacks avx512-bf16";
  mlir_backend::MlirCompiler compiler(Isa::Avx512Bf16, CacheSizes{});
  auto kernel = compiler.compile(bf16C(test::brgemm(15, 50, 64, 8, true)),
                                 mlir_backend::selectSchedule(Isa::Avx512Bf16, DType::BF16),
                                 mlir_backend::Lowering::Nanokernel);
  EXPECT_NE(kernel->evidence().summary.find("; bf16 C rounded at 60 accumulator stores, widened at 60 accumulator reads"),
            std::string::npos)
      << kernel->evidence().summary;
}

// A BRGEMM's f32 sum must fit the kernel's stack; GEMM blocks always do.
// A C too tall for the f32 sum on the stack runs as row panels (bit-exact); only
// a row wider than the stack budget is skipped, saying why.
TEST(MlirBf16CStructure, TallCRunsInRowPanelsAndOverWideRowsAreSkipped) {
  const std::unique_ptr<Backend> backend = makeMlirBackend(test::hostConfig(test::bestHostIsa()));
  const Problem tall = bf16C(test::brgemm(600, 601, 33, 2, true));
  ASSERT_FALSE(backend->unsupportedReason(tall).has_value());
  const test::RunOutcome outcome = test::runAgainstReference(*backend, tall);
  EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
  EXPECT_EQ(outcome.verification.max_error, 0.0);
  EXPECT_NE(outcome.info.packing.find("row panels"), std::string::npos) << outcome.info.packing;
  const std::optional<std::string> reason = backend->unsupportedReason(bf16C(test::brgemm(1, 300000, 2, 1, false)));
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("stack"), std::string::npos) << *reason;
  EXPECT_FALSE(backend->unsupportedReason(bf16C(test::gemm(1024, 1024, 8))).has_value());
}

// Without avx512-bf16 the rounding is integer arithmetic in the kernel, no call.
TEST(MlirBf16CStructure, WideningRoutesRoundWithoutCalls) {
  if (!detectCpuFeatures().has(Isa::Avx512)) GTEST_SKIP() << "host lacks AVX-512";
  mlir_backend::MlirCompiler compiler(Isa::Avx512, CacheSizes{});
  for (const auto& [schedule, kind] : {std::pair{"avx512.bf16-f32a.8x32", "widen-b-fma-nanokernel"},
                                       std::pair{"avx512.bf16-widen.8x32", "widen-fma-nanokernel"}}) {
    mlir_backend::CompilationStages stages;
    auto kernel = compiler.compile(bf16C(test::brgemm(8, 32, 16, 2, true)),
                                   mlir_backend::selectSchedule(Isa::Avx512, DType::BF16, schedule),
                                   mlir_backend::Lowering::Nanokernel, &stages);
    EXPECT_TRUE(kernel->evidence().composed) << kernel->evidence().summary;
    EXPECT_EQ(kernel->evidence().summary.rfind(kind, 0), 0u) << kernel->evidence().summary;
    EXPECT_EQ(stages.assembly.find("vcvtneps2bf16"), std::string::npos);
    EXPECT_FALSE(std::regex_search(stages.assembly, std::regex(R"(\bcall)")));
  }
}

// With A widened when packed, the kernel takes A as f32 and widens only B: the
// broadcasts of A are f32 ones from memory, with no 16-bit shift before them.
TEST(MlirBf16CStructure, PackedARouteWidensOnlyB) {
  mlir_backend::MlirCompiler compiler(Isa::Avx512, CacheSizes{}, "skylake-avx512");
  const mlir_backend::CompilationStages stages =
      compiler.generate(test::asBf16(test::brgemm(8, 32, 16, 2, false), DType::F32),
                        mlir_backend::selectSchedule(Isa::Avx512, DType::BF16, "avx512.bf16-f32a.8x32"),
                        mlir_backend::Lowering::Nanokernel);
  EXPECT_NE(stages.payload.find("%A: memref<2x8x16xf32>"), std::string::npos) << stages.payload;
  EXPECT_NE(stages.payload.find("%B: memref<2x16x32xbf16>"), std::string::npos) << stages.payload;
  EXPECT_EQ(stages.payload.find("%a_bf16_"), std::string::npos);
  EXPECT_NE(stages.payload.find("%b_bf16_0"), std::string::npos);
  // A broadcast as f32 straight from memory (a load port, no shuffle), where
  // the widening route loads each bf16 of A into a GPR, shifts and broadcasts it.
  EXPECT_TRUE(std::regex_search(stages.assembly, std::regex(R"(vbroadcastss\s+-?\d*\(%)"))) << stages.assembly;
  EXPECT_EQ(stages.assembly.find("movzwl"), std::string::npos) << stages.assembly;
  EXPECT_EQ(stages.assembly.find("vpbroadcastd"), std::string::npos) << stages.assembly;
}

}  // namespace
}  // namespace nkbench
