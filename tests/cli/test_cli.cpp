// Runs the nkbench binary as a user would and checks exit codes, messages and files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <regex>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "harness/core/isa.h"
#include "tests/cli/cli_test_support.h"

namespace {

using namespace cli_test;

// Every row passed verification and its kernel is the named kind of nanokernel.
void expectPassedOnNanokernels(const nlohmann::json& report, std::size_t rows, const std::string& nanokernel) {
  ASSERT_EQ(report.at("rows").size(), rows);
  for (const nlohmann::json& row : report.at("rows")) {
    EXPECT_EQ(row.at("status"), "passed") << row.dump();
    EXPECT_EQ(row.at("nanokernel").get<std::string>().rfind(nanokernel, 0), 0u) << row.dump();
  }
}

TEST(Cli, RunWritesVerifiedRowsAsCsvAndJson) {
  const fs::path csv = tempPath("smoke.csv");
  const fs::path json = tempPath("smoke.json");
  const Outcome run = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --backends mlir,eigen " + kQuick +
                              " --out " + csv.string() + " --json " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("6 rows: 6 passed, 0 failed, 0 skipped"), std::string::npos) << run.output;

  const std::vector<std::string> lines = readLines(csv);
  ASSERT_EQ(lines.size(), 7u);  // header + 3 cases x 2 backends
  EXPECT_EQ(lines[0].rfind("suite,case,kind,dtype,c_dtype,m,n,k,batch", 0), 0u) << lines[0];
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_NE(lines[i].find(",passed,"), std::string::npos) << lines[i];

  const nlohmann::json report = readReport(json);
  ASSERT_EQ(report.at("rows").size(), 6u);
  const nlohmann::json& metadata = report.at("metadata");
  for (const char* key : {"cpu_model", "isa_flags", "measured_clock_ghz", "compiler", "library_versions", "git_commit",
                          "date", "command_line"})
    EXPECT_TRUE(metadata.contains(key)) << key;
  // The build's commit, fixed when it was built: 12 hex digits, "-dirty" for a changed checkout.
  EXPECT_TRUE(std::regex_match(metadata.at("git_commit").get<std::string>(),
                               std::regex("[0-9a-f]{12}(-dirty)?|unknown")))
      << metadata.at("git_commit");
  EXPECT_GT(metadata.at("peak_gflops").get<double>(), 0.0);
  for (const nlohmann::json& row : report.at("rows")) {
    EXPECT_EQ(row.at("status"), "passed");
    EXPECT_GT(row.at("median_gflops").get<double>(), 0.0);
    if (row.at("backend") == "mlir") {
      EXPECT_EQ(row.at("nanokernel").get<std::string>().rfind("fma-nanokernel", 0), 0u);
    }
  }
}

TEST(Cli, IsaCapChangesTheMlirRegisterBlock) {
  const fs::path json = tempPath("avx2.json");
  const Outcome run = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") +
                              " --backends mlir --isa avx2 --filter brgemm-8x32 " + kQuick + " --json " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json report = readReport(json);
  ASSERT_EQ(report.at("rows").size(), 1u);
  EXPECT_EQ(report.at("rows")[0].at("isa"), "avx2");
  // 8 rows of avx2.f32.6x16 blocks: the last 2 rows in 2x32 blocks (AVX-512: one 8x32).
  EXPECT_EQ(report.at("rows")[0].at("register_block"), "6x16+2x32");
}

TEST(Cli, ScheduleOptionSelectsAnotherRegisterBlock) {
  const fs::path json = tempPath("schedule.json");
  const Outcome run = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") +
                              " --backends mlir --isa avx2 --schedule avx2.f32.2x16 --filter brgemm-8x32 " + kQuick +
                              " --json " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(readReport(json).at("rows")[0].at("register_block"), "2x16");
  const Outcome unknown = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --schedule avx3.f32.6x16 " + kQuick);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("avx2.f32.6x16"), std::string::npos) << unknown.output;
  // A family's own blocks run when they fit the register file, and are refused with why when not.
  const Outcome own = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") +
                                 " --backends mlir --isa avx2 --schedule avx2.f32.3x24 --filter brgemm-8x32 " + kQuick +
                                 " --json " + json.string());
  ASSERT_EQ(own.exit_code, 0) << own.output;
  EXPECT_EQ(readReport(json).at("rows")[0].at("register_block"), "4x24+4x8");  // 2 balanced bands, not 3
  EXPECT_EQ(readReport(json).at("rows")[0].at("schedule"), "avx2.f32.3x24");
  EXPECT_EQ(readReport(json).at("rows")[0].at("schedule_source"), "--schedule");
  const Outcome ragged = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --schedule avx2.f32.5x5 " + kQuick);
  EXPECT_EQ(ragged.exit_code, 2);
  EXPECT_NE(ragged.output.find("5 columns are not whole vectors of 8 lanes"), std::string::npos) << ragged.output;
  const Outcome too_big = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --schedule avx2.f32.8x16 " + kQuick);
  EXPECT_EQ(too_big.exit_code, 2);
  EXPECT_NE(too_big.output.find("needs 19 vector registers"), std::string::npos) << too_big.output;
}

TEST(Cli, TinyAndOddShapesVerifyOnEveryBackend) {
  // A single output can cancel to zero under the exact fill; it must still verify, not be mistrusted.
  const fs::path suite = tempPath("tiny.yaml");
  std::ofstream(suite) << "suite: tiny\ncases:\n"
                          "  - {id: one-beta1, kind: brgemm, shape: [1, 1, 1], beta: 1}\n"
                          "  - {id: gemm-one, kind: gemm, shape: [1, 1, 1]}\n"
                          "  - {id: gemm-3x70x1, kind: gemm, shape: [3, 70, 1]}\n";
  const Outcome run = runNkbench("run --suite " + suite.string() + " " + kQuick);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("18 rows: 18 passed, 0 failed, 0 skipped"), std::string::npos) << run.output;
}

TEST(Cli, Bf16BrgemmRunsOnDotProductNanokernels) {
  if (!nkbench::detectCpuFeatures().has(nkbench::Isa::Avx512Bf16)) GTEST_SKIP() << "host lacks avx512-bf16";
  const SuiteRun run = runCases("bf16",
                                "  - {id: b16, kind: brgemm, shape: [16, 64, 32], batch: 4, dtype: bf16}\n"
                                "  - {id: odd-k, kind: brgemm, shape: [7, 36, 5], batch: 2, beta: 1, dtype: bf16}\n"
                                "  - {id: gemm, kind: gemm, shape: [100, 37, 129], dtype: bf16}\n"
                                "  - {id: n33, kind: brgemm, shape: [7, 33, 5], batch: 2, beta: 1, dtype: bf16}\n",
                                "--backends mlir --isa avx512-bf16");
  ASSERT_EQ(run.outcome.exit_code, 0) << run.outcome.output;
  const nlohmann::json report = readReport(run.json);
  expectPassedOnNanokernels(report, 4, "dot-nanokernel");
  EXPECT_GT(report.at("metadata").at("bf16_peak_gflops").get<double>(), 0.0);
  EXPECT_EQ(report.at("metadata").at("bf16_peak_instruction"), "vdpbf16ps");
  for (const nlohmann::json& row : report.at("rows")) EXPECT_EQ(row.at("dtype"), "bf16");
}

TEST(Cli, AmxEmulatedRunsTheTileKernelsAndSaysTheyAreEmulated) {
  if (!nkbench::detectCpuFeatures().has(nkbench::Isa::AmxEmulated)) GTEST_SKIP() << "host lacks avx512-bf16";
  const SuiteRun run =
      runCases("amx-emulated",
               "  - {id: tiles, kind: brgemm, shape: [32, 32, 64], batch: 2, dtype: bf16}\n"
               "  - {id: edge, kind: brgemm, shape: [48, 16, 32], batch: 3, beta: 1, dtype: bf16}\n"
               "  - {id: off-grid, kind: brgemm, shape: [7, 33, 5], batch: 2, beta: 1, dtype: bf16, c_dtype: bf16}\n",
               "--backends mlir --isa amx-emulated --schedule amx.bf16.32x32");
  ASSERT_EQ(run.outcome.exit_code, 0) << run.outcome.output;
  const nlohmann::json report = readReport(run.json);
  expectPassedOnNanokernels(report, 3, "amx-tile-nanokernel");
  EXPECT_NE(run.outcome.output.find("their timings are not AMX performance"), std::string::npos) << run.outcome.output;
  EXPECT_EQ(report.at("metadata").at("bf16_peak_instruction"), "vdpbf16ps");  // not the tiles' peak
  for (const nlohmann::json& row : report.at("rows")) {
    EXPECT_EQ(row.at("isa"), "amx-emulated");
    EXPECT_NE(row.at("implementation").get<std::string>().find("emulated tiles"), std::string::npos) << row.dump();
    EXPECT_EQ(row.at("note").get<std::string>().rfind("emulated AMX: the timing is not AMX performance", 0), 0u)
        << row.dump();
  }
}

TEST(Cli, Bf16WideningRouteRunsFmaNanokernelsWithoutAvx512Bf16) {
  if (!nkbench::detectCpuFeatures().has(nkbench::Isa::Avx512)) GTEST_SKIP() << "host lacks avx512";
  const SuiteRun run = runCases("bf16-widen",
                                "  - {id: b0, kind: brgemm, shape: [32, 32, 32], batch: 4, dtype: bf16}\n"
                                "  - {id: b1, kind: brgemm, shape: [64, 64, 16], batch: 2, beta: 1, dtype: bf16}\n",
                                "--backends mlir --isa avx512 --schedule avx512.bf16-widen.8x32");
  ASSERT_EQ(run.outcome.exit_code, 0) << run.outcome.output;
  const nlohmann::json report = readReport(run.json);
  expectPassedOnNanokernels(report, 2, "widen-fma-nanokernel");
}

TEST(Cli, Bf16RunsUnderAnAvx2CapThroughTheFmaRoutes) {
  const std::string cases = "  - {id: edges, kind: brgemm, shape: [7, 33, 5], batch: 3, beta: 1, dtype: bf16}\n"
                            "  - {id: blocks, kind: brgemm, shape: [32, 32, 16], batch: 2, dtype: bf16}\n"
                            "  - {id: gemm, kind: gemm, shape: [100, 37, 129], dtype: bf16}\n";
  const SuiteRun run = runCases("bf16-avx2", cases, "--backends mlir --isa avx2");
  ASSERT_EQ(run.outcome.exit_code, 0) << run.outcome.output;
  const nlohmann::json report = readReport(run.json);
  expectPassedOnNanokernels(report, 3, "widen-b-fma-nanokernel");
  for (const nlohmann::json& row : report.at("rows")) {
    EXPECT_EQ(row.at("schedule"), "avx2.bf16-f32a.6x16") << row.dump();
    EXPECT_EQ(row.at("note").get<std::string>().rfind("A -> f32", 0), 0u) << row.dump();
  }
  const SuiteRun widen = runCases("bf16-avx2-widen", cases, "--backends mlir --isa avx2 --schedule avx2.bf16-widen.6x16");
  ASSERT_EQ(widen.outcome.exit_code, 0) << widen.outcome.output;
  expectPassedOnNanokernels(readReport(widen.json), 3, "widen-fma-nanokernel");
}

TEST(Cli, MalformedSuiteNamesFileAndLine) {
  const fs::path suite = tempPath("bad.yaml");
  std::ofstream(suite) << "suite: bad\ncases:\n  - id: x\n    kind: brgemm\n    m: 8\n    n: 8\n    k: 8\n    colour: red\n";
  const Outcome run = runNkbench("run --suite " + suite.string() + " " + kQuick);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find(suite.string() + ":8"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("colour"), std::string::npos) << run.output;
}

TEST(Cli, MissingSuiteFileIsAnErrorNotACrash) {
  const Outcome run = runNkbench("run --suite /nonexistent/suite.yaml");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("/nonexistent/suite.yaml"), std::string::npos) << run.output;
}

TEST(Cli, UnknownBackendListsTheKnownOnes) {
  const Outcome run = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --backends mlir,cublas " + kQuick);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("cublas"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("libxsmm"), std::string::npos) << run.output;
}

TEST(Cli, IsaTheHostLacksIsRefusedBeforeAnythingRuns) {
  // Masked to a class below AMX, every host refuses --isa amx, naming what is missing and the mask.
  const Outcome run = nkbenchAs("avx512-bf16", "run --suite " + sourcePath("suites/smoke.yaml") + " --isa amx " + kQuick);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("--isa amx: CPU lacks amx-tile (has: "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("NKBENCH_HOST_CLASS=avx512-bf16 masks the rest)"), std::string::npos) << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
  EXPECT_EQ(run.output.find("passed"), std::string::npos) << run.output;
  // This host as the tests see it, where it lacks AMX: the first missing piece is named.
  std::string expected;
  if (!nkbench::resolveIsa(nkbench::Isa::Amx, nkbench::detectCpuFeatures(), &expected)) {
    const Outcome host = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --isa amx " + kQuick);
    EXPECT_EQ(host.exit_code, 2);
    EXPECT_EQ(host.output, "nkbench: error: " + expected + "\n");
  }
}

TEST(Cli, EveryLevelAboveAMaskedHostClassIsRefused) {
  const std::pair<const char*, const char*> refusals[] = {
      {"avx2", "avx512"}, {"avx2", "avx512-bf16"}, {"avx2", "amx-emulated"}, {"avx512", "avx512-bf16"},
      {"avx512", "amx"}};
  for (const auto& [host_class, isa] : refusals) {
    const Outcome run =
        nkbenchAs(host_class, "run --suite " + sourcePath("suites/smoke.yaml") + " --isa " + isa + " " + kQuick);
    EXPECT_EQ(run.exit_code, 2) << host_class << " --isa " << isa << "\n" << run.output;
    EXPECT_NE(run.output.find(std::string("--isa ") + isa + ": this host lacks "), std::string::npos) << run.output;
    EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
  }
}

TEST(Cli, AutoOnAnAvx2HostClassRunsAvx2Code) {
  const fs::path json = tempPath("avx2-class.json");
  const Outcome run = nkbenchAs("avx2", "run --suite " + sourcePath("suites/smoke.yaml") +
                                            " --backends mlir,libxsmm --filter brgemm-8x32 " + kQuick + " --json " +
                                            json.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json report = readReport(json);
  ASSERT_EQ(report.at("rows").size(), 2u);
  for (const nlohmann::json& row : report.at("rows")) EXPECT_EQ(row.at("isa"), "avx2") << row.dump();
  EXPECT_EQ(report.at("rows")[0].at("register_block"), "6x16+2x32");
  const nlohmann::json& flags = report.at("metadata").at("isa_flags");
  EXPECT_EQ(std::find(flags.begin(), flags.end(), "avx512f"), flags.end()) << flags.dump();
}

TEST(Cli, ListNamesTheMaskedHostClassAndABadClassIsOneLine) {
  const Outcome list = nkbenchAs("avx2", "list");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("host class: avx2 (NKBENCH_HOST_CLASS masks the features above it)"), std::string::npos)
      << list.output;
  EXPECT_EQ(list.output.find("avx512f"), std::string::npos) << list.output;
  const Outcome bad = nkbenchAs("sse4", "list");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("NKBENCH_HOST_CLASS=sse4: not a host class"), std::string::npos) << bad.output;
  EXPECT_EQ(std::count(bad.output.begin(), bad.output.end(), '\n'), 1) << bad.output;
}

std::string showCase(const std::string& arguments) {
  return "show --suite " + sourcePath("suites/default.yaml") + " " + arguments;
}

TEST(Cli, ShowPrintsEveryStageForF32AndBf16Cases) {
  for (const char* id : {"brgemm-32x32x32-b32", "bf16-brgemm-32x32x32-b32"}) {
    const Outcome show = runNkbench(showCase(id) + " --isa avx512 --target-cpu znver4");
    ASSERT_EQ(show.exit_code, 0) << show.output;
    for (const char* stage : {"----- payload", "----- transform", "----- scheduled", "----- llvm", "----- asm"})
      EXPECT_NE(show.output.find(stage), std::string::npos) << id << ": " << stage;
    EXPECT_NE(show.output.find("func.func @nk_brgemm"), std::string::npos) << id;
    EXPECT_NE(show.output.find("llvm.func @nk_brgemm"), std::string::npos) << id;
    EXPECT_NE(show.output.find("nk_brgemm:"), std::string::npos) << id;  // the assembly's label
  }
}

TEST(Cli, ShowCompilesForANamedCpuWithoutRunning) {
  const Outcome show =
      runNkbench(showCase("bf16-brgemm-32x32x32-b32") + " --isa avx512-bf16 --target-cpu sapphirerapids --stage asm");
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("vdpbf16ps"), std::string::npos) << show.output;
  EXPECT_EQ(show.output.find("----- payload"), std::string::npos);
  // AMX code is generated whether or not this host could run it.
  const Outcome amx = runNkbench(showCase("bf16-brgemm-32x32x32-b32") + " --isa amx --target-cpu sapphirerapids --stage asm");
  ASSERT_EQ(amx.exit_code, 0) << amx.output;
  EXPECT_NE(amx.output.find("tdpbf16ps"), std::string::npos) << amx.output;
  EXPECT_EQ(amx.output.find("ldtilecfg"), std::string::npos) << "the caller configures the tiles\n" << amx.output;
  // Off the tile grid: narrower tiles, the kernel switching configurations between tile shapes.
  const Outcome edges =
      runNkbench(showCase("bf16-brgemm-7x36x5-b2-beta1") +
              " --isa amx --schedule amx.bf16.32x32 --target-cpu sapphirerapids --stage llvm");
  ASSERT_EQ(edges.exit_code, 0) << edges.output;
  EXPECT_NE(edges.output.find("llvm.call @nkbench_amx_use_tile_config"), std::string::npos) << edges.output;
  // Without a named schedule the route rule gives this mostly padded shape the vector kernels.
  const Outcome route =
      runNkbench(showCase("bf16-brgemm-7x36x5-b2-beta1") + " --isa amx --target-cpu sapphirerapids --stage asm");
  ASSERT_EQ(route.exit_code, 0) << route.output;
  EXPECT_NE(route.output.find("schedule avx512bf16.bf16.8x32 (analytic; vector route: the tiles would do "),
            std::string::npos)
      << route.output;
  EXPECT_NE(route.output.find("vdpbf16ps"), std::string::npos);
  EXPECT_EQ(route.output.find("tdpbf16ps"), std::string::npos);
  // --isa auto is the named CPU's best level, not this host's.
  for (const auto& [cpu, level] : {std::pair{"haswell", "avx2"}, {"skylake-avx512", "avx512"}, {"sapphirerapids", "amx"}}) {
    const Outcome automatic = runNkbench(showCase("brgemm-32x32x32-b32") + " --target-cpu " + cpu + " --stage payload");
    ASSERT_EQ(automatic.exit_code, 0) << automatic.output;
    EXPECT_NE(automatic.output.find(std::string("--isa ") + level + ", target " + cpu), std::string::npos)
        << automatic.output;
  }
  // On two threads, a BRGEMM's kernel is its first thread's row panel's.
  const Outcome panel =
      runNkbench(showCase("brgemm-32x32x32-b32") + " --threads 2 --target-cpu haswell --stage payload");
  ASSERT_EQ(panel.exit_code, 0) << panel.output;
  EXPECT_EQ(panel.output.rfind("// brgemm-32x32x32-b32: first row panel's kernel brgemm f32 16x32x32 b32 beta=0, ", 0),
            0u)
      << panel.output;
  const Outcome old_cpu = runNkbench(showCase("brgemm-32x32x32-b32") + " --target-cpu core2 --stage payload");
  EXPECT_EQ(old_cpu.exit_code, 2);
  EXPECT_EQ(old_cpu.output, "nkbench: error: target CPU core2 lacks AVX2 and FMA, which every ISA level needs\n");
}

// Without --target-cpu, show compiles for the host by its feature bits, as run does
// (a VM may report a CPU name that lacks features its CPUID has).
TEST(Cli, ShowWithoutATargetCpuCompilesForTheHostFeatures) {
  const Outcome host = runNkbench(showCase("brgemm-32x32x32-b32") + " --isa avx2 --stage asm");
  ASSERT_EQ(host.exit_code, 0) << host.output;
  EXPECT_NE(host.output.find("vfmadd"), std::string::npos) << host.output;
  EXPECT_EQ(host.output.find("zmm"), std::string::npos) << "the avx2 cap holds";
  if (nkbench::detectCpuFeatures().has(nkbench::Isa::Avx512Bf16)) {
    const Outcome bf16 = runNkbench(showCase("bf16-brgemm-32x32x32-b32") + " --isa avx512-bf16 --stage asm");
    ASSERT_EQ(bf16.exit_code, 0) << bf16.output;
    EXPECT_NE(bf16.output.find("vdpbf16ps"), std::string::npos) << bf16.output;
  }
  // A level the (masked) host lacks needs a named CPU.
  const Outcome refused = nkbenchAs("avx512", showCase("bf16-brgemm-32x32x32-b32") + " --isa amx --stage asm");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("name a --target-cpu"), std::string::npos) << refused.output;
  EXPECT_EQ(std::count(refused.output.begin(), refused.output.end(), '\n'), 1) << refused.output;
}

TEST(Cli, ShowRejectsBadInputInOneLine) {
  const std::pair<std::string, std::string> cases[] = {
      {showCase("no-such-case"), "no case 'no-such-case'"},
      {showCase("brgemm-32x32x32-b32 --stage bytecode"), "--stage 'bytecode'"},
      {showCase("brgemm-32x32x32-b32 --target-cpu pentium9000"), "--target-cpu pentium9000"},
      {showCase("bf16-brgemm-32x32x32-b32 --isa amx --target-cpu haswell"), "haswell lacks"},
      // run skips a BRGEMM too short for a row panel per thread: show does not show it as if it ran.
      {showCase("brgemm-8x32x32-b32 --threads 2 --target-cpu haswell"),
       "case 'brgemm-8x32x32-b32' at 2 threads: run skips it (mlir: 2 threads share out a BRGEMM's C rows in "
       "panels of whole multiples of 8 rows (the last the rest), and its 8 rows make one)"},
      // Nor a kernel under a separate epilogue that a BRGEMM does not have.
      {showCase("brgemm-32x32x32-b32 --schedule avx2.f32.6x16:epilogue=separate --target-cpu haswell"),
       "case 'brgemm-32x32x32-b32': run skips it (mlir: :epilogue=separate runs an mlp's bias and activation as "
       "passes, and this brgemm has none)"},
  };
  for (const auto& [arguments, message] : cases) {
    const Outcome show = runNkbench(arguments);
    EXPECT_EQ(show.exit_code, 2) << arguments << "\n" << show.output;
    EXPECT_NE(show.output.find(message), std::string::npos) << show.output;
    EXPECT_EQ(std::count(show.output.begin(), show.output.end(), '\n'), 1) << show.output;
  }
}

// A bf16 C row too wide for the kernel's f32 sum: show refuses it in run's words.
TEST(Cli, ShowRefusesWhatRunSkipsForItsStack) {
  const fs::path suite = tempPath("show-wide-bf16-c.yaml");
  std::ofstream(suite) << "suite: wide\ncases:\n  - {id: wide, kind: brgemm, dtype: bf16, c_dtype: bf16, shape: [9, "
                          "270000, 2]}\n";
  for (const char* threads : {"1", "2"}) {
    const Outcome show = runNkbench("show wide --suite " + suite.string() + " --isa avx512-bf16 --target-cpu "
                                    "sapphirerapids --stage payload --threads " + threads);
    EXPECT_EQ(show.exit_code, 2) << show.output;
    EXPECT_EQ(show.output,
              "nkbench: error: case 'wide': run skips it (mlir: the f32 sum of a bf16 C is kept on the kernel's "
              "stack, at most 1024 KiB; one row of N = 270000 needs more)\n");
  }
}

TEST(Cli, BadFilterAndEmptySelectionAreErrors) {
  EXPECT_EQ(runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --filter '(' " + kQuick).exit_code, 2);
  const Outcome none = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --filter zzz " + kQuick);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.output.find("matches no case"), std::string::npos) << none.output;
}

// A filter this long overflowed the stack of libstdc++'s regex compiler.
TEST(Cli, AVeryLongFilterIsRefusedInOneLine) {
  const Outcome run = runNkbench("list --suite " + sourcePath("suites/smoke.yaml") + " --filter " + std::string(100000, 'a'));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("nkbench: error: --filter is 100000 characters long, above the limit of 1000\n"),
            std::string::npos)
      << run.output.substr(0, 200);
}

TEST(Cli, ListShowsHostBackendsAndWhatWouldRun) {
  const Outcome list = runNkbench("list --suite " + sourcePath("suites/smoke.yaml"));
  ASSERT_EQ(list.exit_code, 0) << list.output;
  for (const char* text : {"features:", "mlir-default", "libxsmm", "onednn", "eigen", "brgemm-7x33x5-b1-beta1", "run"})
    EXPECT_NE(list.output.find(text), std::string::npos) << text << "\n" << list.output;
}

TEST(Cli, ListSaysWhichMlirRouteRunsUnderAnAmxCap) {
  if (!nkbench::detectCpuFeatures().has(nkbench::Isa::AmxEmulated)) GTEST_SKIP() << "host lacks avx512-bf16";
  const fs::path suite = tempPath("routes.yaml");
  std::ofstream(suite) << "suite: routes\ncases:\n"
                          "  - {id: off-grid, kind: brgemm, shape: [7, 33, 5], batch: 1, dtype: bf16}\n"
                          "  - {id: on-grid, kind: brgemm, shape: [32, 32, 32], batch: 8, dtype: bf16}\n";
  const Outcome list = runNkbench("list --backends mlir --isa amx-emulated --suite " + suite.string());
  ASSERT_EQ(list.exit_code, 0) << list.output;
  const std::size_t on_grid = list.output.find("on-grid");
  ASSERT_NE(on_grid, std::string::npos) << list.output;
  const std::string off_grid_rows = list.output.substr(0, on_grid);
  const std::string on_grid_rows = list.output.substr(on_grid);
  EXPECT_NE(off_grid_rows.find("run: avx512bf16.bf16.8x32; vector route: the tiles would do 5% useful work, below 25%"),
            std::string::npos)
      << list.output;
  EXPECT_NE(on_grid_rows.find("run: amx.bf16.32x32\n"), std::string::npos) << list.output;
}

TEST(Cli, EveryCommandHasHelp) {
  for (const char* command :
       {"--help", "run --help", "list --help", "peak --help", "compare --help", "merge --help", "show --help"}) {
    const Outcome help = runNkbench(command);
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_NE(help.output.find("Usage"), std::string::npos) << command;
  }
}

TEST(Cli, PeakReportsEachHostIsa) {
  const Outcome peak = runNkbench("peak");
  ASSERT_EQ(peak.exit_code, 0) << peak.output;
  EXPECT_NE(peak.output.find("avx2"), std::string::npos);
  EXPECT_NE(peak.output.find("GHz"), std::string::npos);
}

TEST(Cli, ColdCacheCyclesThroughVerifiedOperandSets) {
  const fs::path json = tempPath("cold.json");
  const Outcome run = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") +
                              " --backends mlir,libxsmm,eigen --cache cold --cold-mib 4 " + kQuick + " --json " +
                              json.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("cold cache"), std::string::npos) << run.output;
  const nlohmann::json report = readReport(json);
  EXPECT_EQ(report.at("metadata").at("cache"), "cold");
  for (const nlohmann::json& row : report.at("rows")) {
    EXPECT_EQ(row.at("status"), "passed") << row.dump();
    EXPECT_NE(row.at("note").get<std::string>().find("operand sets"), std::string::npos) << row.dump();
  }
  EXPECT_EQ(runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --cache warm " + kQuick).exit_code, 2);
}

// A case too small for 1024 operand sets to span the --cold-mib asked says so
// in its note: its operands may stay in the last-level cache.
TEST(Cli, ColdCacheSaysWhenTheSetsFallShortOfTheSpan) {
  const SuiteRun run = runCases("cold-short", "  - {id: tiny, kind: brgemm, shape: [4, 16, 4]}\n",
                                "--backends eigen --cache cold --cold-mib 64");
  ASSERT_EQ(run.outcome.exit_code, 0) << run.outcome.output;
  const nlohmann::json report = readReport(run.json);
  ASSERT_EQ(report.at("rows").size(), 1u);
  EXPECT_EQ(report.at("rows")[0].at("note"),
            "cold cache: 1024 operand sets (1 MiB, the most sets, short of the 64 MiB asked: they may stay in the "
            "last-level cache) in turn");
}

// A report with one case run by mlir and libxsmm; mlir's calls take `mlir_ms`.
fs::path compareReport(const std::string& name, double mlir_ms) {
  auto row = [](const std::string& backend, double ms) {
    nlohmann::json samples = nlohmann::json::array();
    for (double wobble : {1.0, 1.01, 0.99, 1.005, 0.995}) samples.push_back(ms * wobble);
    return nlohmann::json{{"case", "b"},   {"kind", "brgemm"}, {"dtype", "f32"},     {"c_dtype", "f32"},
                          {"m", 8},        {"n", 32},          {"k", 32},            {"batch", 4},
                          {"beta", 0},     {"isa", "avx512"},  {"backend", backend}, {"status", "passed"},
                          {"median_ms", ms}, {"samples_ms", samples}, {"note", ""}};
  };
  const fs::path path = tempPath(name);
  std::ofstream(path) << nlohmann::json{{"rows", {row("mlir", mlir_ms), row("libxsmm", 0.01)}}}.dump();
  return path;
}

TEST(Cli, CompareExitsZeroWithoutRegression) {
  const fs::path base = compareReport("base.json", 0.01);
  const Outcome same = runNkbench("compare " + base.string() + " " + base.string());
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("0 regressed"), std::string::npos) << same.output;
}

TEST(Cli, CompareExitsOneOnARegressionAndWritesJson) {
  const fs::path base = compareReport("base.json", 0.01);
  const fs::path slower = compareReport("slower.json", 0.0125);
  const fs::path json = tempPath("comparison.json");
  const Outcome outcome = runNkbench("compare " + base.string() + " " + slower.string() + " --json " + json.string());
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_NE(outcome.output.find("REGRESSED"), std::string::npos) << outcome.output;
  const nlohmann::json comparison = readReport(json);
  EXPECT_EQ(comparison.at("failed"), true);
  EXPECT_EQ(comparison.at("summary").at("REGRESSED"), 1);
  // A lenient threshold lets the same 20% slowdown through.
  EXPECT_EQ(runNkbench("compare " + base.string() + " " + slower.string() + " --threshold 0.3").exit_code, 0);
}

TEST(Cli, CompareBadInputExitsTwoNamingTheCulprit) {
  const fs::path base = compareReport("base.json", 0.01);
  const Outcome missing = runNkbench("compare " + base.string() + " /nonexistent/new.json");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("/nonexistent/new.json"), std::string::npos) << missing.output;
  const Outcome gate = runNkbench("compare " + base.string() + " " + base.string() + " --gate median");
  EXPECT_EQ(gate.exit_code, 2);
  EXPECT_NE(gate.output.find("--gate 'median'"), std::string::npos) << gate.output;
}

// An unwritable --json says why; it is bad input (2) unless a row regressed (1).
TEST(Cli, CompareJsonThatCannotBeWrittenSaysWhyAndKeepsARegressionsExit) {
  const fs::path base = compareReport("base.json", 0.01);
  const fs::path slower = compareReport("slower.json", 0.0125);
  const std::string unwritable = " --json /nonexistent/comparison.json";
  const Outcome same = runNkbench("compare " + base.string() + " " + base.string() + unwritable);
  EXPECT_EQ(same.exit_code, 2) << same.output;
  EXPECT_NE(same.output.find("/nonexistent/comparison.json: cannot write the comparison: No such file or directory"),
            std::string::npos)
      << same.output;
  const Outcome regressed = runNkbench("compare " + base.string() + " " + slower.string() + unwritable);
  EXPECT_EQ(regressed.exit_code, 1) << regressed.output;
  EXPECT_NE(regressed.output.find("REGRESSED"), std::string::npos) << regressed.output;
  EXPECT_NE(regressed.output.find("cannot write the comparison: No such file"), std::string::npos) << regressed.output;
}

TEST(Cli, CompareWarnsWhenTheRunsDifferInHowTheyRan) {
  const fs::path base = compareReport("base.json", 0.01);
  nlohmann::json report = readReport(base);
  report["metadata"] = {{"suite", "gate"}, {"fill", "exact-integer"}, {"cache", "hot"}, {"cpu_model", "CPU A"}};
  const fs::path hot = tempPath("hot.json");
  std::ofstream(hot) << report.dump();
  report["metadata"]["cache"] = "cold";
  report["metadata"]["cpu_model"] = "CPU B";
  const fs::path cold = tempPath("cold.json");
  std::ofstream(cold) << report.dump();
  const Outcome outcome = runNkbench("compare " + hot.string() + " " + cold.string());
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("warning: the runs differ in cache (hot then, cold now), host CPU (CPU A then, CPU B "
                                "now)\n"),
            std::string::npos)
      << outcome.output;
  EXPECT_EQ(runNkbench("compare " + hot.string() + " " + hot.string()).output.find("warning"), std::string::npos);
}

// CLI11's number checks let "nan" and "inf" through; --min-time nan aborted the run.
TEST(Cli, NumbersThatAreNotFiniteAreUsageErrors) {
  const std::string suite = " --suite " + sourcePath("suites/smoke.yaml") + " --backends eigen --quiet";
  for (const std::string option : {"--min-time nan", "--noisy-iqr inf", "--cold-mib 1e300"}) {
    const Outcome run = runNkbench("run" + suite + " " + option);
    EXPECT_EQ(run.exit_code, 2) << option << ": " << run.output;
  }
  const fs::path base = compareReport("base.json", 0.01);
  const Outcome compare = runNkbench("compare " + base.string() + " " + base.string() + " --threshold nan");
  EXPECT_EQ(compare.exit_code, 2) << compare.output;
  EXPECT_NE(compare.output.find("not a finite number"), std::string::npos) << compare.output;
}

// CLI11's own refusals came as two lines, a range's with DBL_MAX in 309 digits.
TEST(Cli, OptionsRefusedByTheParserAreOneShortLine) {
  const std::string suite = " --suite " + sourcePath("suites/smoke.yaml") + " --backends eigen --quiet";
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {"run" + suite + " --min-time 0", "nkbench: error: --min-time: Value 0 is not above 0 (see --help)\n"},
      {"run" + suite + " --noisy-iqr -1", "nkbench: error: --noisy-iqr: Value -1 is not above 0 (see --help)\n"},
      {"run" + suite + " --reps 0", "nkbench: error: --reps: "},
      {"run --backends eigen", "nkbench: error: --suite is required (see --help)\n"},
      {"tune" + suite.substr(0, suite.find(" --backends")) + " --budget inf",
       "nkbench: error: --budget: Value inf is not a finite number (see --help)\n"},
      // An empty value would otherwise mean the default, or a file named "".
      {"run" + suite + " --kernel-cache ''", "nkbench: error: --kernel-cache: must not be empty (see --help)\n"},
      {"list" + suite.substr(0, suite.find(" --backends")) + " --backends ''",
       "nkbench: error: --backends: must not be empty (see --help)\n"},
      // CLI11's own splitting would drop the empty name unsaid.
      {"run" + suite.substr(0, suite.find(" --backends")) + " --backends eigen,,libxsmm",
       "nkbench: error: --backends: an empty name in 'eigen,,libxsmm' (see --help)\n"},
      {"run" + suite + " --tuning ''", "nkbench: error: --tuning: must not be empty (see --help)\n"},
      {"run" + suite + " --json ''", "nkbench: error: --json: must not be empty (see --help)\n"},
      {"tune" + suite.substr(0, suite.find(" --backends")) + " --out ''",
       "nkbench: error: --out: must not be empty (see --help)\n"}};
  for (const auto& [arguments, message] : refusals) {
    const Outcome outcome = runNkbench(arguments);
    EXPECT_EQ(outcome.exit_code, 2) << arguments;
    EXPECT_EQ(outcome.output.rfind(message, 0), 0u) << arguments << ": " << outcome.output;
    EXPECT_EQ(std::count(outcome.output.begin(), outcome.output.end(), '\n'), 1) << outcome.output;
  }
}

// The smoke suite, quickly, on two baselines.
const std::string kQuickSmoke =
    "run --suite " + sourcePath("suites/smoke.yaml") + " --backends eigen,libxsmm " + kQuick;

std::vector<std::string> rowKeys(const nlohmann::json& report) {
  std::vector<std::string> keys;
  for (const nlohmann::json& row : report.at("rows"))
    keys.push_back(row.at("case").get<std::string>() + " " + row.at("backend").get<std::string>());
  return keys;
}

TEST(Cli, ShardsOfARunMergeIntoTheWholeRun) {
  std::vector<std::string> shard_paths;
  std::size_t rows = 0;
  for (const char* shard : {"1/2", "2/2"}) {
    const fs::path json = tempPath(std::string("shard-") + shard[0] + ".json");
    const Outcome run = runNkbench(kQuickSmoke + " --shard " + shard + " --json " + json.string());
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find(std::string("shard ") + shard + ": "), std::string::npos) << run.output;
    const nlohmann::json report = readReport(json);
    EXPECT_EQ(report.at("metadata").at("shard"), shard);
    EXPECT_EQ(report.at("metadata").at("selected_cases").size(), 3u);
    rows += report.at("rows").size();
    shard_paths.push_back(json.string());
  }
  EXPECT_EQ(rows, 6u);  // disjoint: every row in one shard

  const fs::path csv = tempPath("merged.csv");
  const fs::path json = tempPath("merged.json");
  // Given in reverse: the merge orders by shard and case, not by argument.
  const Outcome merge = runNkbench("merge --out " + csv.string() + " --json " + json.string() + " " + shard_paths[1] +
                                " " + shard_paths[0]);
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  EXPECT_NE(merge.output.find("merged 2 of 2 shards of suite smoke"), std::string::npos) << merge.output;
  const nlohmann::json merged = readReport(json);
  EXPECT_EQ(rowKeys(merged), (std::vector<std::string>{"brgemm-8x32x16-b2 eigen", "brgemm-8x32x16-b2 libxsmm",
                                                       "brgemm-7x33x5-b1-beta1 eigen", "brgemm-7x33x5-b1-beta1 libxsmm",
                                                       "gemm-40x50x30 eigen", "gemm-40x50x30 libxsmm"}));
  EXPECT_TRUE(merged.at("metadata").at("shard").is_null());
  ASSERT_EQ(merged.at("shards").size(), 2u);
  EXPECT_EQ(merged.at("shards")[0].at("shard"), "1/2");
  EXPECT_TRUE(merged.at("missing_shards").empty());
  EXPECT_EQ(readLines(csv).size(), 7u);  // header + 6 rows
  const Outcome compare = runNkbench("compare " + json.string() + " " + json.string());
  EXPECT_EQ(compare.exit_code, 0) << compare.output;

  const Outcome twice = runNkbench("merge " + shard_paths[0] + " " + shard_paths[0]);
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.output.find("both shard 1/2"), std::string::npos) << twice.output;
  const Outcome incomplete = runNkbench("merge --json " + json.string() + " " + shard_paths[1]);
  EXPECT_EQ(incomplete.exit_code, 2);
  EXPECT_NE(incomplete.output.find("missing shards: 1/2"), std::string::npos) << incomplete.output;
  const Outcome allowed = runNkbench("merge --allow-incomplete --json " + json.string() + " " + shard_paths[1]);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
  EXPECT_NE(allowed.output.find("warning: incomplete merge"), std::string::npos) << allowed.output;
  EXPECT_EQ(readReport(json).at("missing_shards"), nlohmann::json({"1/2"}));
}

TEST(Cli, AShardWithoutCasesWritesEmptyReports) {
  const fs::path csv = tempPath("empty.csv");
  const fs::path json = tempPath("empty.json");
  const fs::path gbench = tempPath("empty-gbench.json");
  const Outcome run = runNkbench(kQuickSmoke + " --shard 4/4 --out " + csv.string() + " --json " + json.string() +
                              " --benchmark-json " + gbench.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("shard 4/4 has no case"), std::string::npos) << run.output;
  EXPECT_EQ(readLines(csv).size(), 1u);
  EXPECT_TRUE(readReport(json).at("rows").empty());
  EXPECT_EQ(readReport(json).at("metadata").at("shard"), "4/4");
  EXPECT_TRUE(readReport(gbench).at("benchmarks").empty());
}

TEST(Cli, BadShardIsOneLineNamingTheOption) {
  for (const char* shard : {"3/2", "0/4", "a/b", "2"}) {
    const Outcome run = runNkbench(kQuickSmoke + " --shard " + shard);
    EXPECT_EQ(run.exit_code, 2) << shard;
    EXPECT_EQ(run.output.rfind(std::string("nkbench: error: --shard '") + shard + "'", 0), 0u) << run.output;
    EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
  }
}

TEST(Cli, ListShowsTheCasesOfAShard) {
  const Outcome list = runNkbench("list --backends eigen --suite " + sourcePath("suites/smoke.yaml") + " --shard 1/3");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("shard 1/3"), std::string::npos) << list.output;
  const int cases = int(list.output.find("brgemm-8x32x16-b2") != std::string::npos) +
                    int(list.output.find("brgemm-7x33x5-b1-beta1") != std::string::npos) +
                    int(list.output.find("gemm-40x50x30") != std::string::npos);
  EXPECT_EQ(cases, 1) << list.output;
}


// Two mlp cases: f32 with bias and ReLU, and bf16 with neither.
constexpr const char* kMlpCases =
    "  - {id: mlp-relu, kind: mlp, layers: [64, 96, 32], batch: 16, bias: true, activation: relu}\n"
    "  - {id: mlp-bf16, kind: mlp, layers: [48, 40, 24, 16], batch: 8, dtype: bf16}\n";

TEST(Cli, MlpCasesRunOnEigenAndReportTheirLayers) {
  const fs::path csv = tempPath("mlp.csv");
  const SuiteRun run = runCases("mlp", kMlpCases, "--backends eigen --out " + csv.string());
  ASSERT_EQ(run.outcome.exit_code, 0) << run.outcome.output;
  EXPECT_NE(run.outcome.output.find("2 rows: 2 passed, 0 failed, 0 skipped"), std::string::npos) << run.outcome.output;

  const std::vector<std::string> lines = readLines(csv);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("suite,case,kind,dtype,c_dtype,m,n,k,batch,beta,layers,epilogue,isa,", 0), 0u) << lines[0];
  // m is the rows, n the last width, k the first; layers and epilogue follow beta.
  EXPECT_EQ(lines[1].rfind("mlp,mlp-relu,mlp,f32,f32,16,32,64,1,0,64-96-32,bias+relu,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("mlp,mlp-bf16,mlp,bf16,bf16,8,16,48,1,0,48-40-24-16,,", 0), 0u) << lines[2];
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_NE(lines[i].find(",passed,"), std::string::npos) << lines[i];

  const nlohmann::json report = readReport(run.json);
  ASSERT_EQ(report.at("rows").size(), 2u);
  const double flops[] = {2.0 * 16 * (64 * 96 + 96 * 32), 2.0 * 8 * (48 * 40 + 40 * 24 + 24 * 16)};
  for (std::size_t i = 0; i < 2; ++i) {
    const nlohmann::json& row = report.at("rows")[i];
    EXPECT_EQ(row.at("status"), "passed") << row.dump();
    EXPECT_EQ(row.at("max_error"), 0.0) << row.dump();  // exact fill: every layer bit for bit
    // GFLOPS count the layers' GEMMs: 2 * batch * sum C_{l-1} C_l per call.
    const double gflops = flops[i] / (row.at("median_ms").get<double>() * 1e6);
    EXPECT_NEAR(row.at("median_gflops").get<double>(), gflops, 0.01 * gflops + 0.01) << row.dump();
  }
  EXPECT_EQ(report.at("rows")[0].at("layers"), "64-96-32");
  EXPECT_EQ(report.at("rows")[0].at("epilogue"), "bias+relu");
  EXPECT_EQ(report.at("rows")[1].at("layers"), "48-40-24-16");
  EXPECT_EQ(report.at("rows")[1].at("epilogue"), "");
  EXPECT_NE(report.at("rows")[1].at("implementation").get<std::string>().find("rounded to bf16"), std::string::npos);
}

// In process and in the isolated child alike, with the random fill and with
// cold-cache operand sets (each with its own biases), every layer verifies.
TEST(Cli, MlpCasesVerifyInEveryRunMode) {
  const struct {
    const char* name;
    const char* options;
  } modes[] = {{"mlp-in-process", "--no-isolate"},
               {"mlp-random", "--fill random"},
               {"mlp-cold", "--cache cold --cold-mib 1"}};
  for (const auto& mode : modes) {
    const SuiteRun run = runCases(mode.name, kMlpCases, std::string("--backends eigen ") + mode.options);
    ASSERT_EQ(run.outcome.exit_code, 0) << mode.name << ": " << run.outcome.output;
    const nlohmann::json report = readReport(run.json);
    ASSERT_EQ(report.at("rows").size(), 2u) << mode.name;
    for (const nlohmann::json& row : report.at("rows")) EXPECT_EQ(row.at("status"), "passed") << row.dump();
  }
}

TEST(Cli, ListDescribesAnMlpByItsRowsAndLayers) {
  const fs::path suite = tempPath("mlp-list.yaml");
  std::ofstream(suite) << "suite: mlp-list\ncases:\n" << kMlpCases;
  const Outcome list = runNkbench("list --backends eigen --suite " + suite.string());
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("mlp f32 16x[64-96-32] bias+relu"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("mlp bf16 8x[48-40-24-16]\n"), std::string::npos) << list.output;
}

TEST(Cli, AMalformedMlpCaseIsOneLine) {
  const SuiteRun run = runCases("mlp-bad", "  - {id: x, kind: mlp, layers: [64, 96], batch: 4, activation: gelu}\n",
                                "--backends eigen");
  EXPECT_EQ(run.outcome.exit_code, 2) << run.outcome.output;
  EXPECT_NE(run.outcome.output.find("mlp-bad.yaml:3: case 'x': unknown activation 'gelu'; known: relu, none"),
            std::string::npos)
      << run.outcome.output;
  EXPECT_EQ(std::count(run.outcome.output.begin(), run.outcome.output.end(), '\n'), 1) << run.outcome.output;
}

}  // namespace
