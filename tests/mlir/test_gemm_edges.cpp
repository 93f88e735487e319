// A GEMM whose M and N are not whole numbers of its blocks: the edge blocks
// run kernels of their own extent (no zeros computed), on every vector route,
// and the results are bit for bit the reference's.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/mlir/kernel_problem.h"
#include "kernels/mlir/mlir_backend.h"
#include "kernels/mlir/schedule/schedule.h"
#include "tests/backends/baseline_test_support.h"

namespace nkbench {
namespace {

using mlir_backend::NanokernelKind;
using mlir_backend::selectSchedule;

struct EdgeRoute {
  Isa isa;
  DType dtype;
  DType c_dtype;
  const char* schedule;    // "": the cap's default
  const char* nanokernel;  // the kind the `nanokernel` evidence starts with
};

// 4 row blocks and 5 column blocks, both with an edge, and odd K; N = 141
// leaves the dot product's blocks of 32 an edge of 13 columns, whose VNNI B
// rows are one whole vector of 16, narrower than the block.
std::vector<Problem> raggedGemms(const EdgeRoute& route) {
  std::vector<Problem> problems = {test::gemm(203, 157, 91), test::gemm(203, 141, 91)};
  if (route.dtype == DType::BF16)
    for (Problem& problem : problems) problem = test::asBf16(problem, route.c_dtype);
  return problems;
}

TEST(GemmEdges, EdgeBlocksRunKernelsOfTheirOwnOnEveryVectorRoute) {
  const std::vector<EdgeRoute> routes = {
      {Isa::Avx2, DType::F32, DType::F32, "", "fma-nanokernel"},
      {Isa::Avx512, DType::F32, DType::F32, "", "fma-nanokernel"},
      {Isa::Avx512Bf16, DType::BF16, DType::F32, "", "dot-nanokernel"},
      {Isa::Avx512Bf16, DType::BF16, DType::BF16, "", "dot-nanokernel"},
      {Isa::Avx512, DType::BF16, DType::F32, "", "widen-b-fma-nanokernel"},
      {Isa::Avx512, DType::BF16, DType::BF16, "avx512.bf16-widen.8x32", "widen-fma-nanokernel"},
      {Isa::Avx2, DType::BF16, DType::F32, "", "widen-b-fma-nanokernel"},
  };
  int ran = 0;
  for (const EdgeRoute& route : routes) {
    if (!detectCpuFeatures().has(route.isa)) continue;
    // On two threads too: the blocks, edges among them, are shared out.
    for (const int threads : {1, 2}) {
      BackendConfig config = test::hostConfig(route.isa, threads);
      config.mlir_schedule = route.schedule;
      const std::unique_ptr<Backend> backend = makeMlirBackend(config);
      for (const Problem& problem : raggedGemms(route)) {
        SCOPED_TRACE(fmt::format("--isa {} --threads {} {}", toString(route.isa), threads, problem.describe()));
        ASSERT_EQ(backend->unsupportedReason(problem), std::nullopt);
        const test::RunOutcome outcome = test::runAgainstReference(*backend, problem);
        EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
        EXPECT_NE(outcome.info.packing.find(", edge blocks "), std::string::npos) << outcome.info.packing;
        EXPECT_EQ(outcome.info.nanokernel.rfind(route.nanokernel, 0), 0u) << outcome.info.nanokernel;
        ++ran;
      }
    }
  }
  EXPECT_GT(ran, 0);
}

// The tile route's kernels take whole tiles: its edge blocks stay padded.
TEST(GemmEdges, OnlyTheTileRoutePadsItsEdgeBlocks) {
  EXPECT_EQ(mlir_backend::gemmBlockEdgesFor(selectSchedule(Isa::Amx, DType::BF16)), BlockEdges::Padded);
  for (const Isa isa : {Isa::Avx2, Isa::Avx512, Isa::Avx512Bf16})
    for (const DType dtype : {DType::F32, DType::BF16})
      EXPECT_EQ(mlir_backend::gemmBlockEdgesFor(selectSchedule(isa, dtype)), BlockEdges::Exact) << toString(isa);
  // An edge block's VNNI columns are whole vectors where the dot product reads them masked.
  const auto& dot = selectSchedule(Isa::Avx512Bf16, DType::BF16);
  ASSERT_EQ(dot.nanokernel, NanokernelKind::Bf16Dot);
  EXPECT_EQ(mlir_backend::vnniBColumnMultiple(dot), 16);
  EXPECT_EQ(mlir_backend::vnniBColumnMultiple(selectSchedule(Isa::Avx512, DType::BF16)), 1);
}

}  // namespace
}  // namespace nkbench
