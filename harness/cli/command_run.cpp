#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "harness/cli/commands.h"
#include "harness/cli/isa_option.h"
#include "harness/cli/number_options.h"
#include "harness/cli/shard_option.h"
#include "harness/cli/text_options.h"
#include "harness/cli/threads_option.h"
#include "harness/report/console_table.h"
#include "harness/run/interrupt.h"
#include "harness/run/runner.h"
#include "harness/tune/tuning_selection.h"
#include "kernels/mlir/jit/kernel_cache.h"
#include "kernels/mlir/schedule/schedule.h"
#include "kernels/registry.h"

namespace nkbench::cli {
namespace {

// A hung kernel is stopped after this long unless --case-timeout says otherwise.
constexpr double kDefaultCaseTimeoutS = 600.0;

struct RunArguments {
  std::string suite;
  std::vector<std::string> backends = defaultBackendNames();
  std::string isa = "auto";
  std::string schedule;
  std::string tuning = "auto";
  std::string kernel_cache = "auto";
  std::string filter;
  std::optional<std::string> shard;
  int repetitions = 5;
  double min_time_s = 0.1;
  std::string fill = "exact";
  std::string csv_path;
  std::string json_path;
  std::string benchmark_json_path;
  bool quiet = false;
  double noisy_iqr = 0.05;
  std::string cache = "hot";
  double cold_mib = 0.0;
  bool isolate = true;
  std::optional<double> case_timeout_s;  // default kDefaultCaseTimeoutS
  std::string threads = "1";
};

std::size_t casesIn(const std::vector<ResultRow>& rows) {
  std::set<std::string> ids;
  for (const ResultRow& row : rows) ids.insert(row.case_id);
  return ids.size();
}

// Which part of the suite a sharded run covered; nothing when not sharded.
std::string shardLine(const RunOptions& options, const RunSummary& summary) {
  if (!options.shard) return "";
  const std::size_t selected = summary.metadata.selected_cases.size();
  if (summary.cases == 0)
    return fmt::format("shard {} has no case ({} selected cases over {} shards): its reports hold no row\n",
                       summary.metadata.shard, selected, options.shard->count);
  return fmt::format("shard {}: {} of {} selected cases\n", summary.metadata.shard, summary.cases, selected);
}

// "1 thread", or "1 and 2 threads on cores 0, 1 (peaks at 2: 460 fp32, 920 bf16)".
std::string threadsLine(const RunMetadata& metadata) {
  const std::vector<int> counts = metadata.thread_counts.empty() ? std::vector<int>{metadata.threads}
                                                                 : metadata.thread_counts;
  if (counts.size() == 1 && counts.front() == 1) return "1 thread";
  std::string line = fmt::format("{} threads, one per core ({})", fmt::join(counts, " and "),
                                 fmt::join(metadata.cores, ", "));
  for (const auto& [threads, peak] : metadata.peaks_by_threads)
    line += fmt::format(", fp32 peak at {}: {:.1f}", threads, peak.fp32_gflops) +
            (peak.bf16_gflops > 0 ? fmt::format(", bf16 {:.1f}", peak.bf16_gflops) : "");
  return line;
}

int run(const RunArguments& args, const std::string& command_line) {
  RunOptions options;
  options.shard = parseShardOption(args.shard);
  const Suite suite = loadSuite(args.suite);
  options.backends = commaItems(args.backends);
  options.isa = parseIsaOption(args.isa);
  options.mlir_schedule = args.schedule;
  options.tuning = args.tuning;
  options.kernel_cache_dir = mlir_backend::kernelCacheDirOf(args.kernel_cache).string();
  options.filter = args.filter;
  options.timing.repetitions = args.repetitions;
  options.timing.min_time_s = args.min_time_s;
  const auto fill = parseFillMode(args.fill);
  if (!fill) throw Error("--fill '" + args.fill + "': expected exact or random");
  options.fill = *fill;
  options.csv_path = args.csv_path;
  options.json_path = args.json_path;
  options.benchmark_json_path = args.benchmark_json_path;
  options.command_line = command_line;
  options.progress = !args.quiet;
  options.noisy_iqr_fraction = args.noisy_iqr;
  const auto cache = parseCacheMode(args.cache);
  if (!cache) throw Error("--cache '" + args.cache + "': expected hot or cold");
  options.cache = *cache;
  options.cold_rotation_bytes = coldRotationBytes(args.cold_mib);
  options.isolate = args.isolate;
  if (!args.isolate && args.case_timeout_s)
    throw Error("--case-timeout needs --isolate: a case run in process (--no-isolate) cannot be stopped");
  options.case_timeout_s = args.case_timeout_s.value_or(kDefaultCaseTimeoutS);
  options.threads = parseThreadsOption(args.threads);

  const RunSummary summary = runSuite(suite, options);
  const RunMetadata& metadata = summary.metadata;
  const std::string bf16_peak = metadata.bf16_peak_gflops > 0
                                    ? fmt::format(", bf16 peak {:.1f} GFLOPS ({})", metadata.bf16_peak_gflops,
                                                  metadata.bf16_peak_instruction)
                                    : "";
  std::cout << fmt::format("{} on {} (--isa {}), measured clock {:.2f} GHz, fp32 peak {:.1f} GFLOPS{} per core, {}, "
                           "{} cache\n",
                           suite.name, metadata.cpu_model, metadata.isa, metadata.measured_clock_ghz,
                           metadata.peak_gflops, bf16_peak, threadsLine(metadata), metadata.cache);
  if (options.isa == Isa::AmxEmulated)
    std::cout << "amx-emulated: mlir's tile kernels run as vector code; their timings are not AMX performance\n";
  if (metadata.tuning != "none") std::cout << "mlir schedules tuned by " << metadata.tuning << " where it has the class\n";
  std::cout << shardLine(options, summary);
  std::cout << formatTable(summary.rows);
  std::cout << formatRowCounts(summary.rows) << "\n";
  if (!args.csv_path.empty()) std::cout << "CSV:  " << args.csv_path << "\n";
  if (!args.json_path.empty()) std::cout << "JSON: " << args.json_path << "\n";
  if (!args.benchmark_json_path.empty()) std::cout << "Google Benchmark JSON: " << args.benchmark_json_path << "\n";
  if (summary.interrupted) {
    std::cout << fmt::format("interrupted: {} of {} cases ran\n", summary.rows.empty() ? 0 : casesIn(summary.rows),
                             summary.cases);
    return kExitInterrupted;
  }
  return summary.failures ? kExitVerificationFailed : kExitOk;
}

}  // namespace

void addRunCommand(CLI::App& app, Action& action, const std::string& command_line) {
  auto args = std::make_shared<RunArguments>();
  CLI::App* cmd = app.add_subcommand("run", "Compile, verify and time every case of a suite on every backend");
  cmd->add_option("--suite", args->suite, "Suite file (YAML)")->required();
  cmd->add_option("--backends", args->backends, "Comma-separated backends (default: all)")->check(commaListOfNames());
  cmd->add_option("--isa", args->isa, kIsaHelp)->capture_default_str();
  cmd->add_option("--schedule", args->schedule,
                  "MLIR schedule to use instead of the tuned or analytic one: " + mlir_backend::scheduleNames() +
                      ", or FAMILY.MxN[:gemm=BMxBNxBK][:rows=short|balanced][:prefetch=D][:epilogue=separate] (e.g. avx512.f32.12x32)")
      ->check(nonEmpty());
  cmd->add_option("--tuning", args->tuning, kTuningHelp)->capture_default_str()->check(nonEmpty());
  cmd->add_option("--kernel-cache", args->kernel_cache, mlir_backend::kKernelCacheHelp)
      ->capture_default_str()
      ->check(nonEmpty());
  cmd->add_option("--filter", args->filter, "Run only cases whose id matches this regex");
  cmd->add_option("--shard", args->shard, kShardHelp);
  cmd->add_option("--reps", args->repetitions, "Timed repetitions per row")->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--min-time", args->min_time_s, "Minimum seconds per repetition")->capture_default_str()
      ->check(positiveNumber());
  cmd->add_option("--fill", args->fill, "Operand data: exact (small integers, bit-exact check) or random")
      ->capture_default_str();
  cmd->add_option("--out", args->csv_path, "Write rows as CSV to this file")->check(nonEmpty());
  cmd->add_option("--json", args->json_path, "Write rows and host metadata as JSON to this file")->check(nonEmpty());
  cmd->add_option("--benchmark-json", args->benchmark_json_path,
                  "Also write the timings of passed rows in Google Benchmark's JSON format (for its compare.py)")
      ->check(nonEmpty());
  cmd->add_option("--noisy-iqr", args->noisy_iqr,
                  "Flag a row noisy when the interquartile range of its call times exceeds this fraction of the median")
      ->capture_default_str()
      ->check(positiveNumber());
  cmd->add_option("--cache", args->cache,
                  "hot: every call on the same operands; cold: calls cycle through operand copies larger than the "
                  "last-level cache")
      ->capture_default_str();
  cmd->add_option("--cold-mib", args->cold_mib,
                  "Cold cache: MiB the operand copies span together (default, or 0: twice the last-level cache)")
      ->check(coldMib());
  cmd->add_flag("--isolate,!--no-isolate", args->isolate,
                "Run each case in a child process, so that a kernel that crashes or hangs costs its own row "
                "(default; --no-isolate runs in process, e.g. under a debugger or profiler)");
  cmd->add_option("--threads", args->threads, kThreadsHelp)->capture_default_str();
  cmd->add_option("--case-timeout", args->case_timeout_s,
                  fmt::format("Seconds a case may take before its running kernel is stopped as hung (isolated "
                              "runs; default {:g}; 0: no limit)",
                              kDefaultCaseTimeoutS))
      ->check(caseTimeout());
  cmd->add_flag("--quiet", args->quiet, "No progress bar on stderr (it only shows on a terminal anyway)");
  cmd->footer("Exit status: 0 when every row passed or was skipped, 1 when a row failed verification, was\n"
              "mistrusted or errored (a crash or a timeout included), 2 on bad input (suite, options), 130\n"
              "when interrupted (SIGINT or SIGTERM: the reports hold the cases that completed).");
  cmd->callback([args, &action, command_line] { action = [args, command_line] { return run(*args, command_line); }; });
}

}  // namespace nkbench::cli
