#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <memory>
#include <utility>

#include "harness/cli/commands.h"
#include "harness/cli/isa_option.h"
#include "harness/cli/text_options.h"
#include "harness/host/cache_info.h"
#include "harness/host/peak.h"
#include "harness/suite/suite.h"
#include "harness/tune/tuning_selection.h"
#include "kernels/common/thread_split.h"
#include "kernels/mlir/kernel_problem.h"
#include "kernels/mlir/mlir_compiler.h"
#include "kernels/mlir/route_choice.h"

namespace nkbench::cli {
namespace {

using mlir_backend::CompilationStages;

struct ShowArguments {
  std::string suite;
  std::string case_id;
  std::string isa = "auto";
  std::string target_cpu;
  std::string stage = "all";
  std::string schedule;
  std::string tuning = "auto";
  int threads = 0;  // 0: the case's own, else 1
};

// Stage names as --stage takes them, in compilation order.
constexpr std::array<std::pair<const char*, std::string CompilationStages::*>, 5> kStages = {{
    {"payload", &CompilationStages::payload},
    {"transform", &CompilationStages::transform_script},
    {"scheduled", &CompilationStages::scheduled},
    {"llvm", &CompilationStages::llvm_dialect},
    {"asm", &CompilationStages::assembly},
}};

const SuiteCase& findCase(const Suite& suite, const std::string& id) {
  for (const SuiteCase& c : suite.cases)
    if (c.id == id) return c;
  throw Error(fmt::format("show: suite '{}' has no case '{}'", suite.name, id));
}

void checkStage(const std::string& stage) {
  if (stage == "all") return;
  for (const auto& [name, member] : kStages)
    if (stage == name) return;
  throw Error(fmt::format("--stage '{}': expected payload, transform, scheduled, llvm, asm or all", stage));
}

// `auto` is the best level of the CPU the code is for: the host's, or the named
// CPU's. A named level is taken as is for a named CPU (nothing runs; the compiler
// checks the CPU has it); for the host it must be one the host has.
Isa showIsa(const std::string& text, const std::string& target_cpu) {
  const std::optional<Isa> named = parseIsaOption(text);
  if (!target_cpu.empty()) return named ? *named : mlir_backend::bestIsaOfCpu(target_cpu);
  std::string error;
  const std::optional<Isa> isa = resolveIsa(named, detectCpuFeatures(), &error);
  if (!isa) throw Error(named ? error + "; name a --target-cpu (e.g. sapphirerapids) to see another CPU's code" : error);
  return *isa;
}

int show(const ShowArguments& args) {
  checkStage(args.stage);
  const Suite suite = loadSuite(args.suite);
  const SuiteCase& c = findCase(suite, args.case_id);
  const bool for_host = args.target_cpu.empty();
  const Isa isa = showIsa(args.isa, args.target_cpu);
  const CacheSizes caches = hostCacheSizes();
  // Tuned schedules and measured peaks are the host's: a named CPU gets the analytic schedules.
  mlir_backend::TunedSchedules tuned;
  mlir_backend::RouteRequest request;
  request.named_schedule = args.schedule;
  request.caches = caches;
  if (for_host) {
    const TuningSelection tuning = selectTuning(args.tuning, isa, thisTuningHost(detectCpuFeatures(), caches));
    if (!tuning.warning.empty()) std::cerr << tuning.warning << "\n";
    tuned = {tuning.file, tuning.by_class};
    if (!tuned.file.empty()) request.tuned = &tuned;
    const Bf16RoutePeaks peaks = measureBf16RoutePeaks(isa, c.problem.dtype == DType::BF16);
    request.peaks = {peaks.fp32_fma_gflops, peaks.bf16_dot_gflops};
  }
  const mlir_backend::RouteChoice route = mlir_backend::chooseRoute(isa, c.problem, request);
  const mlir_backend::Schedule& schedule = route.schedule;
  const int threads = args.threads > 0 ? args.threads : std::max(c.threads, 1);
  // What run would not compile is not shown as if it would.
  if (auto skipped = brgemmThreadsUnsupported("mlir", c.problem, threads))
    throw Error(fmt::format("case '{}' at {} threads: run skips it ({})", c.id, threads, *skipped));
  if (auto skipped = mlir_backend::separateEpilogueUnsupported("mlir", c.problem, schedule))
    throw Error(fmt::format("case '{}': run skips it ({})", c.id, *skipped));
  if (auto skipped = mlir_backend::bf16CSumUnsupported(c.problem, schedule))
    throw Error(fmt::format("case '{}': run skips it ({})", c.id, *skipped));
  const Problem kernel = mlir_backend::kernelProblemFor(c.problem, schedule, caches, threads);
  // The host by its feature bits, as `run` compiles (a VM's CPU name can lack
  // features its CPUID reports), or a named CPU; generate() never runs the code.
  mlir_backend::MlirCompiler compiler(isa, caches, args.target_cpu);
  const CompilationStages stages = compiler.generate(kernel, schedule, mlir_backend::Lowering::Nanokernel);

  std::cout << fmt::format("// {}: {}kernel {}, schedule {}{}, --isa {}, target {}\n", c.id,
                           c.problem.kind == OpKind::Gemm  ? "block "
                           : c.problem.kind == OpKind::Mlp ? "first layer's block "
                           : kernel.m != c.problem.m        ? "first row panel's "
                                                           : "",
                           kernel.describe(), schedule.name,
                           " (" + route.source + (route.reason.empty() ? "" : "; " + route.reason) + ")", toString(isa),
                           compiler.targetDescription());
  if (c.problem.kind == OpKind::Gemm) {
    // The edge blocks' kernels run too; `show` prints the first block kernel.
    const GemmBlocking blocking = mlir_backend::gemmBlockingFor(c.problem, schedule, caches, threads);
    const std::string edges = edgeBlocksText(c.problem, blocking, mlir_backend::gemmBlockEdgesFor(schedule));
    if (!edges.empty()) std::cout << "// blocks " << blocking.bm << "x" << blocking.bn << edges << " (kernels of their own)\n";
  }
  std::cout << "// compile time per stage (ms, no kernel cache, no JIT link): " << stages.times.describe() << "\n";
  for (const auto& [name, member] : kStages)
    if (args.stage == "all" || args.stage == name)
      std::cout << fmt::format("// ----- {} -----\n{}\n", name, stages.*member);
  return kExitOk;
}

}  // namespace

void addShowCommand(CLI::App& app, Action& action) {
  auto args = std::make_shared<ShowArguments>();
  CLI::App* cmd = app.add_subcommand(
      "show", "Print the MLIR backend's IR at each stage and the assembly for one case, without running anything");
  cmd->add_option("--suite", args->suite, "Suite file (YAML)")->required();
  cmd->add_option("case", args->case_id,
                  "Case id (GEMM cases show their block kernel, mlp cases their first layer's, BRGEMMs on threads "
                  "their first row panel's)")
      ->required();
  cmd->add_option("--isa", args->isa,
                  "ISA level to generate code for (the host need not have it; auto: the best of the CPU it is for): "
                  "auto|avx2|avx512|avx512-bf16|amx-emulated|amx")
      ->capture_default_str();
  cmd->add_option("--target-cpu", args->target_cpu,
                  "LLVM CPU to compile for, e.g. sapphirerapids, znver4, haswell (default: the host, by its CPU features)");
  cmd->add_option("--stage", args->stage, "payload|transform|scheduled|llvm|asm|all")->capture_default_str();
  cmd->add_option("--schedule", args->schedule,
                  "MLIR schedule instead of the tuned or analytic one: " + mlir_backend::scheduleNames() +
                      ", or FAMILY.MxN[:gemm=BMxBNxBK][:rows=short|balanced][:prefetch=D][:epilogue=separate]")
      ->check(nonEmpty());
  cmd->add_option("--tuning", args->tuning, kTuningHelp)->capture_default_str()->check(nonEmpty());
  cmd->add_option("--threads", args->threads,
                  "Threads a GEMM's blocks or a BRGEMM's row panels are shared among, which the kernel's blocks "
                  "depend on (default: the case's own, else 1)")
      ->check(CLI::Range(1, 1024));
  cmd->footer("Exit status: 0 when printed, 2 on bad input (suite, case, stage, ISA, target CPU, threads).");
  cmd->callback([args, &action] { action = [args] { return show(*args); }; });
}

}  // namespace nkbench::cli
