// Compiles real kernels through MLIR 22 and checks their numbers and their structure.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <regex>
#include <sstream>
#include <tuple>
#include <vector>

#include "harness/core/error.h"
#include "harness/core/isa.h"
#include "kernels/mlir/mlir_backend.h"
#include "kernels/mlir/kernel_problem.h"
#include "kernels/mlir/mlir_compiler.h"
#include "kernels/mlir/vector/register_block_plan.h"
#include "reference/compare.h"
#include "operands/fill.h"
#include "operands/bf16.h"
#include "reference/reference_gemm.h"
#include "operands/vnni_packing.h"
#include "tests/backends/baseline_test_support.h"
#include "tests/support/test_problems.h"

namespace nkbench {
namespace {

// Runs the backend on exact-integer data; the result must match bit for bit.
Verification runAndVerify(Backend& backend, const Problem& p) {
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  FloatBuffer c = p.accumulate ? data.c_init
                                      : FloatBuffer(data.c_init.size(), std::numeric_limits<float>::quiet_NaN());
  auto kernel = backend.prepare(p, {data.a.data(), data.b.data(), c.data()});
  kernel->pack();
  kernel->compute();
  kernel->unpack();
  return verifyResult(p, FillMode::ExactInteger, c.data(), referenceGemm(p, data.a.data(), data.b.data(), data.c_init.data()));
}

std::vector<Isa> hostIsas() {
  std::vector<Isa> isas;
  const CpuFeatures features = detectCpuFeatures();
  for (Isa isa : {Isa::Avx2, Isa::Avx512})
    if (features.has(isa)) isas.push_back(isa);
  return isas;
}

BackendConfig configFor(Isa isa) {
  BackendConfig config;
  config.isa = isa;
  config.host = detectCpuFeatures();
  return config;
}

class MlirKernels : public ::testing::TestWithParam<std::tuple<OpKind, std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool>> {};

TEST_P(MlirKernels, MatchReferenceBitForBitOnEveryHostIsaAndBothLowerings) {
  const auto [kind, m, n, k, batch, beta] = GetParam();
  const Problem p = test::makeProblem(m, n, k, batch, beta, kind);
  for (Isa isa : hostIsas()) {
    for (auto make : {makeMlirBackend, makeMlirDefaultBackend}) {
      auto backend = make(configFor(isa));
      const Verification v = runAndVerify(*backend, p);
      EXPECT_EQ(v.status, VerifyStatus::Passed)
          << backend->name() << " --isa " << toString(isa) << " " << p.describe() << ": " << v.detail;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MlirKernels,
    ::testing::Values(std::make_tuple(OpKind::Brgemm, 8, 32, 32, 4, false),
                      std::make_tuple(OpKind::Brgemm, 8, 32, 32, 4, true),
                      std::make_tuple(OpKind::Brgemm, 7, 33, 5, 1, false),
                      std::make_tuple(OpKind::Brgemm, 7, 33, 5, 1, true),
                      std::make_tuple(OpKind::Brgemm, 1, 1, 1, 1, false),
                      std::make_tuple(OpKind::Brgemm, 17, 3, 65, 3, true),
                      std::make_tuple(OpKind::Brgemm, 33, 70, 9, 2, false),
                      // Batches that overflow the cache budget run in chunks, the last one partial.
                      std::make_tuple(OpKind::Brgemm, 64, 64, 16, 7, false),
                      std::make_tuple(OpKind::Brgemm, 64, 64, 16, 7, true),
                      std::make_tuple(OpKind::Brgemm, 64, 64, 64, 3, false),
                      // Blocks too small to hide FMA latency split the batch or K into partial sums.
                      std::make_tuple(OpKind::Brgemm, 4, 16, 32, 8, false),
                      std::make_tuple(OpKind::Brgemm, 4, 16, 30, 1, true),
                      std::make_tuple(OpKind::Brgemm, 2, 5, 7, 3, true),
                      std::make_tuple(OpKind::Gemm, 7, 33, 5, 1, false),
                      std::make_tuple(OpKind::Gemm, 100, 37, 129, 1, false),
                      std::make_tuple(OpKind::Gemm, 128, 96, 64, 1, false),
                      // Column blocks widened to pad N less: one of 80 for 75 (AVX-512), of 112 for 100.
                      std::make_tuple(OpKind::Gemm, 121, 75, 66, 1, false),
                      std::make_tuple(OpKind::Gemm, 100, 100, 100, 1, false)));

TEST(MlirStructure, Avx512KernelIsSixteenFmaNanokernelsWithoutGenericContractions) {
  const CpuFeatures features = detectCpuFeatures();
  if (!features.has(Isa::Avx512)) GTEST_SKIP() << "host lacks AVX-512";
  mlir_backend::MlirCompiler compiler(Isa::Avx512, CacheSizes{});
  mlir_backend::CompilationStages stages;
  const Problem p = test::makeProblem(8, 32, 32, 4, false, OpKind::Brgemm);
  auto kernel = compiler.compile(p, mlir_backend::selectSchedule(Isa::Avx512, DType::F32),
                                 mlir_backend::Lowering::Nanokernel, &stages);
  EXPECT_TRUE(kernel->evidence().composed) << kernel->evidence().summary;
  EXPECT_EQ(kernel->registerBlocks(), "8x32");
  EXPECT_EQ(stages.scheduled.find("vector.contract"), std::string::npos);
  EXPECT_NE(stages.scheduled.find("vector.fma"), std::string::npos);
  EXPECT_NE(stages.scheduled.find("vector<16xf32>"), std::string::npos);
  EXPECT_NE(stages.llvm_dialect.find("llvm.intr.fmuladd"), std::string::npos);
}

TEST(MlirStructure, Avx2CapUsesBlocksOfYmmVectors) {
  mlir_backend::MlirCompiler compiler(Isa::Avx2, CacheSizes{});
  mlir_backend::CompilationStages stages;
  const Problem p = test::makeProblem(8, 32, 16, 2, true, OpKind::Brgemm);
  auto kernel = compiler.compile(p, mlir_backend::selectSchedule(Isa::Avx2, DType::F32, "avx2.f32.4x16"),
                                 mlir_backend::Lowering::Nanokernel, &stages);
  EXPECT_TRUE(kernel->evidence().composed) << kernel->evidence().summary;
  EXPECT_EQ(kernel->registerBlocks(), "4x16");
  EXPECT_NE(stages.scheduled.find("vector<8xf32>"), std::string::npos);
  EXPECT_EQ(stages.scheduled.find("vector<16xf32>"), std::string::npos);
  EXPECT_NE(compiler.targetDescription().find("-avx512f"), std::string::npos);
}

std::size_t occurrences(const std::string& text, const std::string& word) {
  std::size_t count = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
  return count;
}

// Per K step of a 4x16 block: a prefetch of each of its two B lines (the next
// entries' in the first of the two row bands, which walk the batch in turn;
// the second finds it in cache) and one of the next entries' A lines (the K
// loop of 32 steps holds two steps per iteration); none when the schedule says 0.
TEST(MlirStructure, KernelsPrefetchTheEntriesAheadAsTheScheduleSays) {
  mlir_backend::MlirCompiler compiler(Isa::Avx2, CacheSizes{});
  const Problem p = test::makeProblem(8, 16, 32, 4, false, OpKind::Brgemm);
  mlir_backend::Schedule schedule = mlir_backend::selectSchedule(Isa::Avx2, DType::F32, "avx2.f32.4x16");
  mlir_backend::CompilationStages stages = compiler.generate(p, schedule, mlir_backend::Lowering::Nanokernel);
  EXPECT_EQ(occurrences(stages.llvm_dialect, "llvm.intr.prefetch"), 2 * 3u) << stages.llvm_dialect;
  // A and B alike into every level: both are read again (A by the next call, B by the next rows).
  EXPECT_EQ(stages.assembly.find("prefetchnta"), std::string::npos);
  EXPECT_EQ(occurrences(stages.assembly, "prefetcht0"), 2 * 3u) << stages.assembly;
  schedule.prefetch_distance = 0;
  stages = compiler.generate(p, schedule, mlir_backend::Lowering::Nanokernel);
  EXPECT_EQ(occurrences(stages.llvm_dialect, "llvm.intr.prefetch"), 0u);
}

// Beta 0 with one K step (a bf16 pair) and one batch entry unrolls whole, writing C row by
// row: every accumulator still starts as zeros in registers, so the code
// neither stores the fill nor loads C back (a load of a row next to a
// just-written one would wait for that store). C is the third argument
// (%rdx): in the assembly, loads from it are `(%rdx), %zmm` operands.
TEST(MlirStructure, UnrolledBeta0KernelsNeverLoadC) {
  mlir_backend::MlirCompiler compiler(Isa::Avx512Bf16, CacheSizes{}, "znver4");
  const std::regex load_of_c(R"(\(%rdx\), %[xyz]mm)");
  for (const Problem& p : {test::makeProblem(17, 5, 1, 1, false), test::asBf16(test::makeProblem(25, 19, 2, 1, false)),
                           test::asBf16(test::makeProblem(25, 19, 2, 1, false), DType::BF16)}) {
    const mlir_backend::CompilationStages stages = compiler.generate(
        p, mlir_backend::selectSchedule(Isa::Avx512Bf16, p.dtype), mlir_backend::Lowering::Nanokernel);
    EXPECT_FALSE(std::regex_search(stages.assembly, load_of_c)) << p.describe() << "\n" << stages.assembly;
  }
}

// Beta 1 unrolled whole: C's rows of 5 share cache lines, so each row is
// loaded before any row is stored (a load behind a store to its line waits).
TEST(MlirStructure, UnrolledBeta1KernelsLoadEveryRowOfCBeforeStoringOne) {
  mlir_backend::MlirCompiler compiler(Isa::Avx512Bf16, CacheSizes{}, "znver4");
  const mlir_backend::CompilationStages stages =
      compiler.generate(test::makeProblem(17, 5, 1, 1, true), mlir_backend::selectSchedule(Isa::Avx512Bf16, DType::F32),
                        mlir_backend::Lowering::Nanokernel);
  const std::regex load_of_c(R"(\(%rdx\), %zmm)"), store_to_c(R"(%zmm\d+, -?\d*\(%rdx\))");
  std::smatch first_store;
  std::string::const_iterator from = stages.assembly.begin();
  std::size_t loads = 0, last_load_at = 0;
  for (std::smatch match; std::regex_search(from, stages.assembly.end(), match, load_of_c); from = match.suffix().first) {
    ++loads;
    last_load_at = std::size_t(match.suffix().first - stages.assembly.begin());
  }
  ASSERT_TRUE(std::regex_search(stages.assembly, first_store, store_to_c)) << stages.assembly;
  EXPECT_EQ(loads, 17u) << stages.assembly;
  EXPECT_LT(last_load_at, std::size_t(first_store.position(0))) << stages.assembly;
}

// The assembly of the basic block with the most FMAs: a kernel's K loop.
std::string hottestBlock(const std::string& assembly) {
  std::string best, block;
  std::size_t best_fmas = 0;
  std::istringstream lines(assembly);
  for (std::string line; std::getline(lines, line);) {
    const bool label = !line.empty() && line[0] == '.' && line.back() == ':';
    if (label) block.clear();
    block += line + "\n";
    if (label || line.rfind("\tj", 0) != 0) continue;  // a block ends at its first jump
    if (const std::size_t fmas = occurrences(block, "vfmadd"); fmas > best_fmas) {
      best_fmas = fmas;
      best = block;
    }
    block.clear();
  }
  return best;
}

// The prefetch's address of a K step is its walk's start, chosen and bounded
// once outside the K loop, plus the step's line: no compare or select per step,
// whose scalar work had crowded the FMAs' issue slots.
TEST(MlirStructure, PrefetchesAddNoScalarWorkToTheKLoop) {
  mlir_backend::MlirCompiler compiler(Isa::Avx2, CacheSizes{});
  const Problem p = test::makeProblem(64, 64, 64, 16, true, OpKind::Brgemm);  // A's walk wraps past a row block
  const mlir_backend::CompilationStages stages = compiler.generate(
      p, mlir_backend::selectSchedule(Isa::Avx2, DType::F32, "avx2.f32.4x16"), mlir_backend::Lowering::Nanokernel);
  const std::string loop = hottestBlock(stages.assembly);
  ASSERT_EQ(occurrences(loop, "vfmadd"), 2 * 8u) << stages.assembly;  // two K steps per iteration
  EXPECT_EQ(occurrences(loop, "prefetch"), 2 * 3u) << loop;
  EXPECT_EQ(occurrences(loop, "cmov"), 0u) << loop;
  EXPECT_EQ(occurrences(loop, "cmp"), 1u) << loop;  // the loop's own exit test
}

// The same where B's prefetch looks K steps ahead (an entry of 512 steps of
// 4 cycles): its start is chosen and bounded outside the K loop too.
TEST(MlirStructure, KStepPrefetchesAddNoScalarWorkToTheKLoop) {
  mlir_backend::MlirCompiler compiler(Isa::Avx2, CacheSizes{});
  const Problem p = test::makeProblem(16, 32, 512, 2, false, OpKind::Brgemm);
  const mlir_backend::Schedule schedule = mlir_backend::selectSchedule(Isa::Avx2, DType::F32, "avx2.f32.4x16");
  ASSERT_GT(mlir_backend::planRegisterBlocks(p, schedule).prefetch_ahead_fmas, 0);
  const mlir_backend::CompilationStages stages = compiler.generate(p, schedule, mlir_backend::Lowering::Nanokernel);
  const std::string loop = hottestBlock(stages.assembly);
  ASSERT_EQ(occurrences(loop, "vfmadd"), 2 * 8u) << stages.assembly;
  EXPECT_EQ(occurrences(loop, "prefetch"), 2 * 3u) << loop;
  EXPECT_EQ(occurrences(loop, "cmov"), 0u) << loop;
  EXPECT_EQ(occurrences(loop, "cmp"), 1u) << loop;
}

// A 1x64 block (4 accumulators) splits a batch of 16 into 2 partial sums, each
// a run of 8 entries: its K loop reads B at two places 8 entries apart, each a
// stream that runs on into its next entry. Sums of interleaved entries read B
// one entry apart and jumped an entry at every turn (0.81x libxsmm, 1.15x now).
TEST(MlirStructure, PartialSumsOverTheBatchEachStreamARunOfEntries) {
  mlir_backend::MlirCompiler compiler(Isa::Avx512Bf16, CacheSizes{}, "sapphirerapids");
  const Problem p = test::makeProblem(1, 64, 64, 16, false, OpKind::Brgemm);
  const mlir_backend::Schedule schedule =
      mlir_backend::selectSchedule(Isa::Avx512Bf16, DType::F32, "avx512.f32.8x32");
  const mlir_backend::RegisterBlockPlan plan = mlir_backend::planRegisterBlocks(p, schedule);
  ASSERT_EQ(plan.split.dim, mlir_backend::ReductionSplit::Dim::Batch);
  ASSERT_EQ(plan.split.ways, 2);
  const mlir_backend::CompilationStages stages = compiler.generate(p, schedule, mlir_backend::Lowering::Nanokernel);
  EXPECT_NE(stages.payload.find("tensor<2x8x64x64xf32>"), std::string::npos) << "B as [sum][run][K][N]";
  const std::string loop = hottestBlock(stages.assembly);
  const std::regex fma_of_b(R"(vfmadd231ps\t(-?\d*)\(%)");  // no displacement: 0
  std::vector<std::int64_t> offsets;
  for (auto it = std::sregex_iterator(loop.begin(), loop.end(), fma_of_b); it != std::sregex_iterator(); ++it)
    offsets.push_back((*it)[1].length() == 0 ? 0 : std::stoll((*it)[1].str()));
  ASSERT_EQ(offsets.size(), 2 * 2 * 4u) << loop;  // 2 K steps x 2 sums x 4 vectors
  const auto [lowest, highest] = std::minmax_element(offsets.begin(), offsets.end());
  const std::int64_t entry_bytes = 64 * 64 * 4;
  EXPECT_GE(*highest - *lowest, 8 * entry_bytes) << loop;
  EXPECT_LT(*highest - *lowest, 9 * entry_bytes) << loop;
}

// Under beta 0, C split into row bands (one of them a loop over blocks) and a
// masked edge panel: every accumulator starts as zeros in registers, and the
// zero fill is neither stored nor loaded (it was a memset of C, then loads).
TEST(MlirStructure, TheZeroFillOfASplitCStaysInRegisters) {
  mlir_backend::MlirCompiler compiler(Isa::Avx2, CacheSizes{});
  const Problem p = test::makeProblem(23, 37, 8, 2, false, OpKind::Brgemm);
  const mlir_backend::CompilationStages stages = compiler.generate(
      p, mlir_backend::selectSchedule(Isa::Avx2, DType::F32, "avx2.f32.4x16"), mlir_backend::Lowering::Nanokernel);
  ASSERT_NE(stages.scheduled.find("scf.for"), std::string::npos);
  EXPECT_EQ(occurrences(stages.scheduled, "vector.transfer_write %cst"), 0u) << stages.scheduled;
  // A and B are rank 3 (batch first): a read of a rank-2 f32 tensor is a read of C.
  std::size_t reads_of_c = 0;
  std::istringstream lines(stages.scheduled);
  for (std::string line; std::getline(lines, line);)
    if (line.find("vector.transfer_read") != std::string::npos &&
        std::regex_search(line, std::regex(R"(: tensor<\d+x\d+xf32>)")))
      ++reads_of_c;
  EXPECT_EQ(reads_of_c, 0u) << "the accumulators load C's zeros";
}

// N = 35 under bf16 VNNI: B's rows are packed zero-padded to 48 columns, and
// the edge vector (columns 32-47) is read whole from the padding, one load like
// the others: 3 K pairs x 3 vectors. Read from B's 35-column slice, out of
// bounds, it was a gather of the last three columns' pairs (0.86-0.91x libxsmm
// against 0.94-1.1x, Zen 5 VM), and without LLVM's second instcombine it went
// through the stack.
TEST(MlirStructure, ARaggedBf16EdgeReadsTheZeroPaddedBWhole) {
  mlir_backend::MlirCompiler compiler(Isa::Avx512Bf16, CacheSizes{}, "sapphirerapids");
  Problem p = test::makeProblem(5, 35, 6, 1, false, OpKind::Brgemm);
  p.dtype = DType::BF16;
  const mlir_backend::Schedule schedule =
      mlir_backend::selectSchedule(Isa::Avx512Bf16, DType::BF16, "avx512bf16.bf16.8x32");
  const mlir_backend::CompilationStages stages = compiler.generate(
      mlir_backend::kernelProblemFor(p, schedule, CacheSizes{}), schedule, mlir_backend::Lowering::Nanokernel);
  ASSERT_GT(occurrences(stages.assembly, "vdpbf16ps"), 0u);
  EXPECT_EQ(occurrences(stages.assembly, "rsp"), 0u) << stages.assembly;
  // B is the second argument (rsi): every access to it is a whole-vector load.
  std::size_t b_accesses = 0, b_vector_loads = 0;
  const std::regex vector_load(R"(vmov(ups|dqu\d*|aps)\s+-?\d*\(%rsi\), %zmm)");
  std::istringstream lines(stages.assembly);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("(%rsi)") == std::string::npos) continue;
    ++b_accesses;
    if (std::regex_search(line, vector_load)) ++b_vector_loads;
  }
  EXPECT_EQ(b_accesses, 9u) << stages.assembly;
  EXPECT_EQ(b_vector_loads, 9u) << stages.assembly;
}

TEST(MlirStructure, GenericLoweringIsNotReportedAsNanokernel) {
  auto backend = makeMlirDefaultBackend(configFor(hostIsas().back()));
  const Problem p = test::makeProblem(8, 32, 8, 2, false, OpKind::Brgemm);
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  FloatBuffer c(data.c_init.size());
  auto kernel = backend->prepare(p, {data.a.data(), data.b.data(), c.data()});
  EXPECT_EQ(kernel->info().nanokernel.rfind("generic", 0), 0u) << kernel->info().nanokernel;
}

}  // namespace
}  // namespace nkbench

namespace nkbench {
namespace {

// bf16 kernels on exact small integers (exact in bf16, and every f32 partial sum
// exact): the result must equal the reference computed on the widened values.
class MlirBf16Kernels : public ::testing::TestWithParam<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool>> {};

TEST_P(MlirBf16Kernels, DotProductNanokernelsMatchTheReferenceBitForBit) {
  if (!detectCpuFeatures().has(Isa::Avx512Bf16)) GTEST_SKIP() << "host lacks avx512-bf16";
  const auto [m, n, k, batch, beta] = GetParam();
  const Problem exact = test::makeProblem(m, n, k, batch, beta);
  const ProblemData data = makeProblemData(exact, FillMode::ExactInteger);
  const ReferenceResult reference = referenceGemm(exact, data.a.data(), data.b.data(), data.c_init.data());

  BFloat16Buffer a(data.a.size()), b(data.b.size());
  toBFloat16(data.a.data(), data.a.size(), a.data());
  toBFloat16(data.b.data(), data.b.size(), b.data());
  Problem kernel_problem = exact;
  kernel_problem.dtype = DType::BF16;
  kernel_problem.k = vnniPaddedK(k);
  const mlir_backend::Schedule schedule = mlir_backend::selectSchedule(Isa::Avx512Bf16, DType::BF16);
  // B's VNNI rows padded to whole vectors, which a masked N edge reads.
  const std::int64_t b_columns = mlir_backend::vnniBColumns(kernel_problem, schedule);
  BFloat16Buffer a_pairs, b_vnni;
  padAToVnniKBatched(a.data(), batch, m, k, a_pairs);
  packBVnniBatched(b.data(), batch, k, n, kernel_problem.k, b_columns, b_vnni);

  mlir_backend::MlirCompiler compiler(Isa::Avx512Bf16, CacheSizes{});
  mlir_backend::CompilationStages stages;
  auto kernel = compiler.compile(kernel_problem, schedule, mlir_backend::Lowering::Nanokernel, &stages);
  EXPECT_TRUE(kernel->evidence().composed) << kernel->evidence().summary;
  EXPECT_EQ(stages.scheduled.find("vector.fma"), std::string::npos);

  FloatBuffer c = beta ? data.c_init : FloatBuffer(data.c_init.size(), std::numeric_limits<float>::quiet_NaN());
  kernel->function()(a_pairs.data(), b_vnni.data(), c.data());
  const Verification v = verifyResult(exact, FillMode::ExactInteger, c.data(), reference);
  EXPECT_EQ(v.status, VerifyStatus::Passed) << kernel_problem.describe() << ": " << v.detail;
}

INSTANTIATE_TEST_SUITE_P(Shapes, MlirBf16Kernels,
                         ::testing::Values(std::make_tuple(8, 32, 32, 4, false), std::make_tuple(8, 32, 32, 4, true),
                                           std::make_tuple(16, 64, 64, 2, false),
                                           std::make_tuple(32, 32, 32, 8, true),
                                           std::make_tuple(64, 64, 64, 3, false),  // batch chunks
                                           std::make_tuple(7, 48, 7, 1, true),     // odd K, edge rows
                                           std::make_tuple(8, 40, 16, 2, false),   // masked edge of 8
                                           std::make_tuple(5, 36, 6, 2, true),     // masked edge of 4
                                           std::make_tuple(3, 60, 4, 3, false),    // masked edge of 12
                                           std::make_tuple(5, 33, 6, 2, true),     // masked edge of 1
                                           std::make_tuple(9, 18, 10, 4, false)));  // 9 rows, edge of 2

}  // namespace
}  // namespace nkbench
