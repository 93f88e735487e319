#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/number_options.h"
#include "harness/cli/text_options.h"
#include "harness/compare/compare_report.h"
#include "harness/compare/run_differences.h"
#include "harness/core/error.h"
#include "harness/report/atomic_file.h"

namespace nkbench::cli {
namespace {

struct CompareArguments {
  std::string base;
  std::string current;
  double threshold = 0.05;
  double alpha = 0.05;
  std::string gate = "relative";
  std::string json_path;
};

// Writes the comparison's JSON; false, with the reason on stderr, when it cannot.
bool writeComparisonJson(const std::string& path, const nlohmann::json& comparison) {
  std::ofstream out(path, std::ios::trunc);
  if (out) {
    out << comparison.dump(2) << "\n";
    out.flush();
  }
  if (out) return true;
  std::cerr << fmt::format("nkbench: error: {}: cannot write the comparison: {}\n", path, std::strerror(errno));
  return false;
}

int compare(const CompareArguments& args) {
  CompareOptions options;
  options.threshold = args.threshold;
  options.alpha = args.alpha;
  const std::optional<Gate> gate = parseGate(args.gate);
  if (!gate) throw Error(fmt::format("--gate '{}': expected relative, absolute or both", args.gate));
  options.gate = *gate;
  requireNotAnInput("--json", args.json_path, {args.base, args.current});
  const StoredRun base = loadStoredRun(args.base);
  const StoredRun current = loadStoredRun(args.current);
  const std::string differences = runDifferences(base, current);
  if (!differences.empty()) std::cerr << "warning: the runs differ in " << differences << "\n";
  const Comparison comparison = compareRuns(base, current, options);
  std::cout << formatComparison(comparison, base, current);
  const int verdict = comparison.failed() ? kExitVerificationFailed : kExitOk;
  // A JSON that cannot be written is bad input (2), but must not hide a regression (1).
  if (!args.json_path.empty() && !writeComparisonJson(args.json_path, comparisonJson(comparison, base, current)))
    return verdict == kExitOk ? kExitUsage : verdict;
  return verdict;
}

}  // namespace

void addCompareCommand(CLI::App& app, Action& action) {
  auto args = std::make_shared<CompareArguments>();
  CLI::App* cmd = app.add_subcommand("compare", "Compare two runs' JSON reports and flag performance regressions");
  cmd->add_option("BASE", args->base, "Baseline report (nkbench run --json)")->required();
  cmd->add_option("NEW", args->current, "New report")->required();
  cmd->add_option("--gate", args->gate,
                  "What decides: relative (speed as a ratio to libxsmm, per repetition), absolute (call times), "
                  "or both")
      ->capture_default_str();
  cmd->add_option("--threshold", args->threshold, "Fall of speed, as a fraction of the baseline's, that a regression must exceed (0.05: 5% less speed, 5.3% more time)")
      ->capture_default_str()
      ->check(fraction());
  cmd->add_option("--alpha", args->alpha, "Significance level of the one-sided rank test over repetitions")
      ->capture_default_str()
      ->check(fraction());
  cmd->add_option("--json", args->json_path, "Also write the comparison as JSON to this file")->check(nonEmpty());
  cmd->footer("Rows match by case, backend, type, ISA and threads. A warning names the suite, fill, cache,\n"
              "tuning or CPU where the runs differ. Exit status: 0 when nothing regressed, 1 when a row\n"
              "regressed, disappeared or stopped passing, or a new row failed; 2 on bad input (also a --json\n"
              "that cannot be written, unless a row regressed).");
  cmd->callback([args, &action] { action = [args] { return compare(*args); }; });
}

}  // namespace nkbench::cli
