#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/text_options.h"
#include "harness/merge/shard_merge.h"
#include "harness/report/atomic_file.h"
#include "harness/report/console_table.h"
#include "harness/report/csv_writer.h"
#include "harness/report/json/json_writer.h"

namespace nkbench::cli {
namespace {

struct MergeArguments {
  std::vector<std::string> shards;
  std::string csv_path;
  std::string json_path;
  bool allow_incomplete = false;
};

int merge(const MergeArguments& args) {
  requireNotAnInput("--json", args.json_path, args.shards);
  requireNotAnInput("--out", args.csv_path, args.shards);
  std::vector<ShardReport> shards;
  for (const std::string& path : args.shards) shards.push_back({path, readJsonReport(path)});
  const MergedRun merged = mergeShards(shards, args.allow_incomplete);

  if (!args.csv_path.empty()) {
    CsvWriter csv(args.csv_path);
    for (const ResultRow& row : merged.rows) csv.write(row);
  }
  if (!args.json_path.empty()) writeJsonFile(args.json_path, mergedJson(merged));

  const std::size_t count = merged.shards.size() + merged.missing_shards.size();
  std::cout << fmt::format("merged {} of {} shards of suite {} (--isa {}), {} cases: {}\n", merged.shards.size(), count,
                           merged.metadata.suite, merged.metadata.isa,
                           merged.complete_cases,
                           formatRowCounts(merged.rows));
  for (const std::string& note : merged.notes) std::cout << "note: " << note << "\n";
  if (!merged.complete()) std::cerr << "warning: incomplete merge: " << merged.gaps() << "\n";
  if (!args.csv_path.empty()) std::cout << "CSV:  " << args.csv_path << "\n";
  if (!args.json_path.empty()) std::cout << "JSON: " << args.json_path << "\n";
  return kExitOk;
}

}  // namespace

void addMergeCommand(CLI::App& app, Action& action) {
  auto args = std::make_shared<MergeArguments>();
  CLI::App* cmd = app.add_subcommand("merge", "Merge the JSON reports of the shards of one run (run --shard I/N)");
  cmd->add_option("SHARDS", args->shards, "Shard reports (nkbench run --shard I/N --json), in any order")
      ->required()
      ->expected(1, -1);
  cmd->add_option("--out", args->csv_path, "Write the merged rows as CSV to this file")->check(nonEmpty());
  cmd->add_option("--json", args->json_path,
                  "Write the merged JSON report (metadata of the first shard, each shard's under \"shards\")")
      ->check(nonEmpty());
  cmd->add_flag("--allow-incomplete", args->allow_incomplete,
                "Merge even when shards or cases are missing; they are listed in the JSON report and on stderr");
  cmd->footer("Rows come in suite order. The shards must share the partition (N), suite, selected cases, ISA, fill,\n"
              "cache, tuning, --threads and backend versions; each shard and each row may appear once, and each\n"
              "case needs its rows at each of its thread counts.\n"
              "Exit status: 0 when merged, 2 on bad input (unreadable or incompatible reports, an incomplete set).");
  cmd->callback([args, &action] { action = [args] { return merge(*args); }; });
}

}  // namespace nkbench::cli
