#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "harness/cli/commands.h"
#include "harness/cli/isa_option.h"
#include "harness/cli/shard_option.h"
#include "harness/cli/text_options.h"
#include "harness/cli/threads_option.h"
#include "harness/core/host_class.h"
#include "harness/host/cache_info.h"
#include "harness/host/peak.h"
#include "harness/host/pinning.h"
#include "harness/run/runner.h"
#include "harness/suite/suite.h"
#include "harness/tune/tuning_selection.h"
#include "kernels/registry.h"

namespace nkbench::cli {
namespace {

struct ListArguments {
  std::string suite;
  std::vector<std::string> backends = defaultBackendNames();
  std::string isa = "auto";
  std::string filter;
  std::optional<std::string> shard;
  std::string tuning = "auto";
  std::string threads = "1";
};

// "skip: why", or "run" followed by what would run where the backend says.
std::string verdict(const Backend& backend, const Problem& problem) {
  if (const auto reason = backend.unsupportedReason(problem)) return "skip: " + *reason;
  const auto plan = backend.plan(problem);
  return plan ? "run: " + *plan : "run";
}

int list(const ListArguments& args) {
  if (args.suite.empty() && (!args.filter.empty() || args.shard))
    throw Error(fmt::format("{} selects cases of a suite: give --suite", args.shard ? "--shard" : "--filter"));
  const std::optional<Shard> shard = parseShardOption(args.shard);
  const std::vector<int> thread_option = parseThreadsOption(args.threads);
  // Bad input is refused before anything is printed.
  const std::optional<Suite> suite = args.suite.empty() ? std::nullopt : std::optional<Suite>(loadSuite(args.suite));
  const std::vector<SuiteCase> selected = suite ? selectCases(*suite, args.filter) : std::vector<SuiteCase>{};
  if (suite && selected.empty())
    throw Error(fmt::format("--filter '{}' matches no case of suite '{}'", args.filter, suite->name));
  const std::vector<SuiteCase> cases = suite && shard ? casesOfShard(selected, *shard) : selected;
  // As `run` refuses them: counts beyond this process's cores.
  if (suite)
    threadCountsToRun(*suite, selected, cases, thread_option);
  else
    for (int threads : thread_option) coresForThreads(threads);
  const CpuFeatures features = detectCpuFeatures();
  std::string isa_error;
  const auto isa = resolveIsa(parseIsaOption(args.isa), features, &isa_error);
  if (!isa) throw Error(isa_error);
  const TuningSelection tuning = selectTuning(args.tuning, *isa, thisTuningHost(features, hostCacheSizes()));

  std::cout << fmt::format("host: {} ({})\n", features.brand, features.vendor);
  std::cout << fmt::format("features: {}\n", fmt::join(features.flagNames(), " "));
  if (!features.host_class.empty())
    std::cout << fmt::format("host class: {} ({} masks the features above it)\n", features.host_class,
                             kHostClassVariable);
  const auto best = bestIsa(features);
  std::cout << fmt::format("best isa: {}\n", best ? std::string(toString(*best)) : "none (needs AVX2+FMA)");
  std::cout << fmt::format("run isa: {}\n\nbackends:\n", toString(*isa));

  BackendConfig config;
  config.isa = *isa;
  config.host = features;
  if (!tuning.warning.empty()) std::cerr << tuning.warning << "\n";
  std::cout << fmt::format("tuning: {}\n", tuning.file.empty() ? "none (analytic schedules)" : tuning.file);
  config.mlir_tuning_file = tuning.file;
  config.mlir_tuned_schedules = tuning.by_class;
  // The bf16 route depends on two measured peaks, as in `run`.
  const bool any_bf16 = std::any_of(selected.begin(), selected.end(),
                                    [](const SuiteCase& c) { return c.problem.dtype == DType::BF16; });
  const Bf16RoutePeaks peaks = measureBf16RoutePeaks(*isa, any_bf16);
  config.fp32_fma_peak_gflops = peaks.fp32_fma_gflops;
  config.bf16_dot_peak_gflops = peaks.bf16_dot_gflops;
  // One set of backends per thread count a case runs at: what runs can differ
  // (a BRGEMM too short for a row panel per thread).
  std::map<int, std::vector<std::unique_ptr<Backend>>> backends_by_threads;
  auto backendsFor = [&](int threads) -> const std::vector<std::unique_ptr<Backend>>& {
    auto& backends = backends_by_threads[threads];
    if (backends.empty()) {
      BackendConfig thread_config = config;
      thread_config.threads = threads;
      for (const std::string& name : commaItems(args.backends)) backends.push_back(createBackend(name, thread_config));
    }
    return backends;
  };
  const auto& backends = backendsFor(thread_option.front());
  for (const BackendEntry& entry : knownBackends()) {
    auto backend = std::find_if(backends.begin(), backends.end(),
                                [&](const auto& created) { return created->name() == entry.name; });
    std::cout << fmt::format("  {:<14} {:<24} {}\n", entry.name,
                             backend == backends.end() ? "[not selected]" : (*backend)->version(), entry.description);
  }

  if (!suite) return kExitOk;
  std::cout << fmt::format("\nsuite {} ({}){}:\n", suite->name, suite->path.string(),
                           shard ? ", shard " + toString(*shard) : "");
  for (const SuiteCase& c : cases) {
    std::cout << fmt::format("  {:<28} {}\n", c.id, c.problem.describe());
    const std::vector<int> counts = threadCountsOf(c, thread_option);
    for (int threads : counts)
      for (const auto& backend : backendsFor(threads)) {
        // Tagged wherever the run has several counts, a case of its own count too.
        const std::string name = thread_option.size() > 1 || threads > 1
                                     ? fmt::format("{} ({}T)", backend->name(), threads)
                                     : backend->name();
        std::cout << fmt::format("      {:<18} {}\n", name, verdict(*backend, c.problem));
      }
  }
  return kExitOk;
}

}  // namespace

void addListCommand(CLI::App& app, Action& action) {
  auto args = std::make_shared<ListArguments>();
  CLI::App* cmd = app.add_subcommand("list", "Show host ISA features, backends and versions, and which cases would run");
  cmd->add_option("--suite", args->suite, "Suite file: list its cases and, per backend, run or skip and why");
  cmd->add_option("--backends", args->backends, "Comma-separated backends (default: all)")->check(commaListOfNames());
  cmd->add_option("--isa", args->isa, kIsaHelp)->capture_default_str();
  cmd->add_option("--filter", args->filter, "Only cases whose id matches this regex");
  cmd->add_option("--shard", args->shard, kShardHelp);
  cmd->add_option("--tuning", args->tuning, kTuningHelp)->capture_default_str()->check(nonEmpty());
  cmd->add_option("--threads", args->threads, kThreadsHelp)->capture_default_str();
  cmd->callback([args, &action] { action = [args] { return list(*args); }; });
}

}  // namespace nkbench::cli
