#include <fmt/format.h>

#include <array>
#include <iostream>
#include <memory>
#include <utility>

#include "harness/cli/commands.h"
#include "harness/cli/isa_option.h"
#include "harness/host/cache_info.h"
#include "harness/suite/suite.h"
#include "kernels/mlir/kernel_problem.h"
#include "kernels/mlir/mlir_compiler.h"

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

// `auto` is the host's best level; a named level is taken as is: nothing runs.
Isa showIsa(const std::string& text) {
  if (auto isa = parseIsaOption(text)) return *isa;
  std::string error;
  const std::optional<Isa> best = resolveIsa(std::nullopt, detectCpuFeatures(), &error);
  if (!best) throw Error(error);
  return *best;
}

int show(const ShowArguments& args) {
  checkStage(args.stage);
  const Suite suite = loadSuite(args.suite);
  const SuiteCase& c = findCase(suite, args.case_id);
  const Isa isa = showIsa(args.isa);
  const mlir_backend::Schedule& schedule = mlir_backend::selectSchedule(isa, c.problem.dtype, args.schedule);
  const Problem kernel = mlir_backend::kernelProblemFor(c.problem, schedule);
  // Always a named CPU (the host's by default): such a compiler never runs what it generates.
  const std::string cpu = args.target_cpu.empty() ? mlir_backend::hostCpuName() : args.target_cpu;
  mlir_backend::MlirCompiler compiler(isa, hostCacheSizes(), cpu);
  const CompilationStages stages = compiler.generate(kernel, schedule, mlir_backend::Lowering::Nanokernel);

  std::cout << fmt::format("// {}: {}kernel {}, schedule {}, --isa {}, target {}\n", c.id,
                           c.problem.kind == OpKind::Gemm ? "block " : "", kernel.describe(), schedule.name,
                           toString(isa), compiler.targetDescription());
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
  cmd->add_option("case", args->case_id, "Case id (GEMM cases show their block kernel)")->required();
  cmd->add_option("--isa", args->isa,
                  "ISA level to generate code for (the host need not have it): auto|avx2|avx512|avx512-bf16|amx-emulated|amx")
      ->capture_default_str();
  cmd->add_option("--target-cpu", args->target_cpu,
                  "LLVM CPU to compile for, e.g. sapphirerapids, znver4, haswell (default: the host's)");
  cmd->add_option("--stage", args->stage, "payload|transform|scheduled|llvm|asm|all")->capture_default_str();
  cmd->add_option("--schedule", args->schedule,
                  "MLIR schedule instead of the ISA's default: " + mlir_backend::scheduleNames());
  cmd->footer("Exit status: 0 when printed, 2 on bad input (suite, case, stage, ISA, target CPU).");
  cmd->callback([args, &action] { action = [args] { return show(*args); }; });
}

}  // namespace nkbench::cli
