#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/isa_option.h"
#include "harness/cli/number_options.h"
#include "harness/cli/text_options.h"
#include "harness/core/error.h"
#include "harness/run/interrupt.h"
#include "harness/suite/suite.h"
#include "harness/tune/tuner.h"
#include "kernels/mlir/jit/kernel_cache.h"

namespace nkbench::cli {
namespace {

struct TuneArguments {
  std::string suite;
  std::string isa = "auto";
  std::string filter;
  std::string out;
  double budget_s = 600.0;
  std::size_t candidates = 5;
  std::size_t cases_per_class = 3;
  bool isolate = true;
  bool quiet = false;
  std::string kernel_cache = "auto";
};

// The analytic routes of the class's cases, each once.
std::string analyticRoutes(const TunedClass& tuned) {
  std::vector<std::string> routes;
  for (const std::string& route : tuned.analytic_schedules)
    if (std::find(routes.begin(), routes.end(), route) == routes.end()) routes.push_back(route);
  return fmt::format("{}", fmt::join(routes, ", "));
}

std::string gain(const TunedClass& tuned) {
  if (tuned.analytic_gflops <= 0) return "-";
  return fmt::format("{:.3f}x", tuned.gflops / tuned.analytic_gflops);
}

int tune(const TuneArguments& args, const std::string& command_line) {
  TuneOptions options;
  // Runs under NKBENCH_TUNING=none read no file, so one written by default would go unused unsaid.
  if (args.out.empty() && environmentSwitchesTuningOff())
    throw Error("NKBENCH_TUNING=none switches tuning off, so tune has no file to update: name one with --out FILE");
  const Suite suite = loadSuite(args.suite);
  options.isa = parseIsaOption(args.isa);
  options.filter = args.filter;
  options.out = args.out.empty() ? defaultTuningPath() : std::filesystem::path(args.out);
  options.out_is_default = args.out.empty() && !environmentTuningPath();
  options.out_from_environment = args.out.empty() && environmentTuningPath();
  options.budget_s = args.budget_s;
  options.candidates = args.candidates;
  options.cases_per_class = args.cases_per_class;
  options.isolate = args.isolate;
  options.kernel_cache_dir = mlir_backend::kernelCacheDirOf(args.kernel_cache).string();
  options.progress = !args.quiet;
  options.command_line = command_line;

  const TuneSummary summary = tuneSuite(suite, options);
  std::cout << fmt::format("tuned {} shape classes of suite {} on {} in {:.1f} s ({} schedule x case measurements)\n",
                           summary.tuned.size(), suite.name, summary.tuning.host.cpu_model, summary.elapsed_s,
                           summary.measurements);
  std::cout << fmt::format("{:<34} {:<12} {:<36} {:>9} {:<36} {:>9} {:>7}\n", "shape class", "isa", "analytic",
                           "GFLOPS", "tuned", "GFLOPS", "gain");
  for (const TunedClass& t : summary.tuned)
    std::cout << fmt::format("{:<34} {:<12} {:<36} {:>9.1f} {:<36} {:>9.1f} {:>7}\n", t.shape_class, t.isa,
                             analyticRoutes(t), t.analytic_gflops, t.keepsAnalytic() ? "(analytic kept)" : t.schedule,
                             t.gflops, gain(t));
  for (const std::string& skipped : summary.skipped) std::cout << "not tuned: " << skipped << "\n";
  if (!summary.measured_on_one_core.empty())
    std::cout << fmt::format("measured on one core, as every case (a tuning chooses each core's block kernel): {}\n",
                             fmt::join(summary.measured_on_one_core, ", "));
  if (!summary.tuned.empty()) std::cout << "tuning file: " << options.out.string() << "\n";
  return interruptRequested() ? kExitInterrupted : kExitOk;
}

}  // namespace

void addTuneCommand(CLI::App& app, Action& action, const std::string& command_line) {
  auto args = std::make_shared<TuneArguments>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Measure candidate mlir schedules on a suite's cases, per shape class, and write the fastest that "
              "verified to a tuning file that run, list and show use");
  cmd->add_option("--suite", args->suite, "Suite file (YAML) whose cases stand for their shape classes")->required();
  cmd->add_option("--isa", args->isa, kIsaHelp)->capture_default_str();
  cmd->add_option("--filter", args->filter, "Tune only on cases whose id matches this regex");
  cmd->add_option("--out", args->out,
                  "Tuning file to update (default: $NKBENCH_TUNING, else $XDG_CACHE_HOME/nkbench/tuning.json, "
                  "~/.cache/nkbench/tuning.json)")
      ->check(nonEmpty());
  cmd->add_option("--budget", args->budget_s,
                  "Seconds of measurement at most; classes not reached keep the analytic schedules")
      ->capture_default_str()
      ->check(positiveNumber());
  cmd->add_option("--candidates", args->candidates, "Register blocks measured per class besides the analytic one")
      ->capture_default_str()
      ->check(CLI::Range(1, 32));
  cmd->add_option("--cases-per-class", args->cases_per_class, "Cases of each class measured (largest, smallest, ...)")
      ->capture_default_str()
      ->check(CLI::Range(1, 32));
  cmd->add_flag("--isolate,!--no-isolate", args->isolate,
                "Run candidates in child processes, so that one that crashes costs its own measurement (default)");
  cmd->add_option("--kernel-cache", args->kernel_cache, mlir_backend::kKernelCacheHelp)
      ->capture_default_str()
      ->check(nonEmpty());
  cmd->add_flag("--quiet", args->quiet, "No progress bar on stderr (it only shows on a terminal anyway)");
  cmd->footer("Exit status: 0 when done, 2 on bad input, 130 when interrupted (the file keeps the classes done).");
  cmd->callback([args, &action, command_line] { action = [args, command_line] { return tune(*args, command_line); }; });
}

}  // namespace nkbench::cli
