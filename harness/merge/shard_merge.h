// Merging the JSON reports of the shards of one run (`nkbench run --shard I/N`)
// into one report, as if a single machine had run the whole selection.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/json/json_reader.h"

namespace nkbench {

struct ShardReport {
  std::string path;  // for messages
  JsonReport report;
};

struct MergedRun {
  RunMetadata metadata;  // the lowest shard's, no longer a shard; thread counts, cores and peaks of all
  std::vector<RunMetadata> shards;          // each shard's own, in shard order
  std::vector<ResultRow> rows;              // in suite order (the shards' "selected_cases")
  std::vector<std::string> missing_shards;  // "I/N" of each shard not given
  // Selected cases without rows (missing shard, or one that stopped early): "ID", or
  // "ID (N threads)" for a thread count the case owes rows for and has none.
  std::vector<std::string> missing_cases;
  std::size_t complete_cases = 0;           // selected cases with rows at each thread count they owe
  std::vector<std::string> notes;           // what differs between shards without breaking the merge

  bool complete() const { return missing_shards.empty() && missing_cases.empty(); }
  // "missing shards: 2/4; selected cases without rows: a, b" (long lists shortened).
  std::string gaps() const;
};

// Throws Error naming the files when a report is not a shard, when the shards
// belong to different partitions, suites, case selections, ISAs, fills, cache
// modes, tunings, requested thread counts or backend versions, when a shard is
// given twice, when a row appears twice or ran on a thread count its case does
// not owe, or when the merge is incomplete (a case without its rows at one of
// its thread counts) and `allow_incomplete` is false.
MergedRun mergeShards(const std::vector<ShardReport>& shards, bool allow_incomplete);

// The JSON report of `run --json`, plus "shards" (each shard's metadata),
// "missing_shards" and "missing_cases".
nlohmann::json mergedJson(const MergedRun& merged);

}  // namespace nkbench
