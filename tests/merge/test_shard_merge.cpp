#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "harness/core/error.h"
#include "harness/merge/shard_merge.h"

namespace nkbench {
namespace {

const std::vector<std::string> kSelected = {"a", "b", "c", "d"};

ResultRow rowOf(const std::string& case_id, const std::string& backend) {
  ResultRow row;
  row.suite = "s";
  row.case_id = case_id;
  row.isa = "avx512";
  row.isa_used = backend == "eigen" ? "avx2" : "avx512";  // each row's own level, below the cap or at it
  row.backend = backend;
  row.status = VerifyStatus::Passed;
  return row;
}

// Shard `shard` of a run of cases a..d, holding the rows of `cases` (eigen and libxsmm each).
ShardReport shardReport(const std::string& shard, const std::vector<std::string>& cases) {
  ShardReport report;
  report.path = "shard-" + shard.substr(0, shard.find('/')) + ".json";
  RunMetadata& metadata = report.report.metadata;
  metadata.suite = "s";
  metadata.selected_cases = kSelected;
  metadata.shard = shard;
  metadata.isa = "avx512";
  metadata.fill = "exact";
  metadata.library_versions = {{"eigen", "3.4.0"}, {"libxsmm", "1.17"}};
  metadata.cpu_model = "CPU A";
  metadata.hostname = "host-" + shard.substr(0, shard.find('/'));
  metadata.git_commit = "abc";
  for (const std::string& c : cases)
    for (const char* backend : {"eigen", "libxsmm"}) report.report.rows.push_back(rowOf(c, backend));
  return report;
}

std::vector<std::string> caseOrder(const MergedRun& merged) {
  std::vector<std::string> order;
  for (const ResultRow& row : merged.rows) order.push_back(row.case_id + "/" + row.backend);
  return order;
}

// The message of the Error that merging throws, or "" when it merges.
std::string mergeError(const std::vector<ShardReport>& shards, bool allow_incomplete = false) {
  try {
    mergeShards(shards, allow_incomplete);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

void expectMessage(const std::string& message, std::initializer_list<std::string> parts) {
  EXPECT_FALSE(message.empty());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const std::string& part : parts) EXPECT_NE(message.find(part), std::string::npos) << part << ": " << message;
}

TEST(ShardMerge, RowsComeInSuiteOrderWhateverTheShardOrder) {
  const MergedRun merged =
      mergeShards({shardReport("2/3", {"a", "d"}), shardReport("3/3", {}), shardReport("1/3", {"b", "c"})}, false);
  EXPECT_EQ(caseOrder(merged), (std::vector<std::string>{"a/eigen", "a/libxsmm", "b/eigen", "b/libxsmm", "c/eigen",
                                                         "c/libxsmm", "d/eigen", "d/libxsmm"}));
  EXPECT_TRUE(merged.complete());
  EXPECT_EQ(merged.metadata.shard, "");  // the merge is not a shard
  EXPECT_EQ(merged.metadata.hostname, "host-1");  // the lowest shard's metadata
  ASSERT_EQ(merged.shards.size(), 3u);
  EXPECT_EQ(merged.shards[0].shard, "1/3");
  EXPECT_EQ(merged.shards[2].shard, "3/3");
}

TEST(ShardMerge, JsonKeepsTheRunFormatAndAddsTheShards) {
  const MergedRun merged = mergeShards({shardReport("1/2", {"a", "b"}), shardReport("2/2", {"c", "d"})}, false);
  const nlohmann::json report = mergedJson(merged);
  EXPECT_EQ(report.at("rows").size(), 8u);
  EXPECT_TRUE(report.at("metadata").at("shard").is_null());
  EXPECT_EQ(report.at("metadata").at("selected_cases"), nlohmann::json(kSelected));
  ASSERT_EQ(report.at("shards").size(), 2u);
  EXPECT_EQ(report.at("shards")[1].at("shard"), "2/2");
  EXPECT_EQ(report.at("shards")[1].at("hostname"), "host-2");
  EXPECT_TRUE(report.at("missing_shards").empty());
  EXPECT_TRUE(report.at("missing_cases").empty());
  EXPECT_EQ(report.at("rows")[0].at("isa_used"), "avx2");  // a/eigen
  EXPECT_EQ(report.at("rows")[1].at("isa_used"), "avx512");  // a/libxsmm
}

TEST(ShardMerge, NotesSeveralMachines) {
  ShardReport other = shardReport("2/2", {"c", "d"});
  other.report.metadata.cpu_model = "CPU B";
  const MergedRun merged = mergeShards({shardReport("1/2", {"a", "b"}), other}, false);
  ASSERT_FALSE(merged.notes.empty());
  EXPECT_NE(merged.notes[0].find("2 machines"), std::string::npos) << merged.notes[0];
  EXPECT_NE(merged.notes.back().find("CPU B"), std::string::npos) << merged.notes.back();
  EXPECT_TRUE(mergeShards({shardReport("1/1", kSelected)}, false).notes.empty());
}

TEST(ShardMerge, AMissingShardIsAnErrorNamingIt) {
  const std::vector<ShardReport> shards = {shardReport("1/3", {"a"}), shardReport("3/3", {"c", "d"})};
  expectMessage(mergeError(shards), {"shard-1.json", "shard-3.json", "incomplete", "2/3", "b", "--allow-incomplete"});
}

TEST(ShardMerge, AnIncompleteMergeIsAllowedOnRequestAndSaysSo) {
  const MergedRun merged = mergeShards({shardReport("1/3", {"a"}), shardReport("3/3", {"c", "d"})}, true);
  EXPECT_FALSE(merged.complete());
  EXPECT_EQ(merged.missing_shards, (std::vector<std::string>{"2/3"}));
  EXPECT_EQ(merged.missing_cases, (std::vector<std::string>{"b"}));
  EXPECT_EQ(mergedJson(merged).at("missing_shards"), nlohmann::json({"2/3"}));
}

TEST(ShardMerge, AShardThatStoppedEarlyIsIncomplete) {
  expectMessage(mergeError({shardReport("1/2", {"a"}), shardReport("2/2", {"c", "d"})}), {"without rows: b"});
}

TEST(ShardMerge, IncompatibleShardsAreRefusedNamingBothFiles) {
  const ShardReport first = shardReport("1/2", {"a", "b"});
  const auto refused = [&first](ShardReport other, std::initializer_list<std::string> parts) {
    expectMessage(mergeError({first, other}), parts);
    expectMessage(mergeError({first, other}), {first.path, other.path});
  };
  refused(shardReport("1/2", {"c", "d"}), {"both shard 1/2"});
  expectMessage(mergeError({shardReport("2/3", {"b"}), shardReport("1/3", {"a"}), shardReport("2/3", {"c"})}),
                {"both shard 2/3"});
  refused(shardReport("2/3", {"c", "d"}), {"different partitions"});
  ShardReport other = shardReport("2/2", {"c", "d"});
  other.report.metadata.suite = "t";
  refused(other, {"suite", "'s'", "'t'"});
  other = shardReport("2/2", {"c", "d"});
  other.report.metadata.isa = "avx2";
  refused(other, {"isa", "avx2"});
  other = shardReport("2/2", {"c", "d"});
  other.report.metadata.fill = "random";
  refused(other, {"fill"});
  other = shardReport("2/2", {"c", "d"});
  other.report.metadata.library_versions["libxsmm"] = "1.16";
  refused(other, {"library versions", "libxsmm 1.16"});
  other = shardReport("2/2", {"c", "d"});
  other.report.metadata.selected_cases.pop_back();
  refused(other, {"different cases", "--filter"});
}

TEST(ShardMerge, DuplicateRowsAreRefused) {
  expectMessage(mergeError({shardReport("1/2", {"a", "b"}), shardReport("2/2", {"b", "c", "d"})}),
                {"'b eigen' appears twice", "shard-1.json", "shard-2.json"});
  ShardReport twice = shardReport("1/1", kSelected);
  twice.report.rows.push_back(rowOf("a", "eigen"));
  expectMessage(mergeError({twice}), {"'a eigen' appears twice"});
}

TEST(ShardMerge, OnlyShardReportsMerge) {
  ShardReport unsharded = shardReport("1/1", kSelected);
  unsharded.report.metadata.shard.clear();
  expectMessage(mergeError({unsharded}), {"shard-1.json", "not a shard report"});
  ShardReport bad = shardReport("1/1", kSelected);
  bad.report.metadata.shard = "0/2";
  expectMessage(mergeError({bad}), {"bad shard '0/2'"});
  ShardReport stranger = shardReport("1/1", kSelected);
  stranger.report.rows.push_back(rowOf("z", "eigen"));
  expectMessage(mergeError({stranger}), {"'z eigen'", "did not select"});
}


// Shard `shard` of a run with --threads 1,2 where case "d" sets its own 4 threads:
// rows of `cases` at each count they owe, unless `short_of` names one left out.
ShardReport threadedShard(const std::string& shard, const std::vector<std::string>& cases,
                          const std::string& short_of = "") {
  ShardReport report = shardReport(shard, {});
  RunMetadata& metadata = report.report.metadata;
  metadata.requested_threads = {1, 2};
  metadata.case_threads = {{"d", 4}};
  std::set<int> used;
  for (const std::string& c : cases)
    for (int threads : c == "d" ? std::vector<int>{4} : std::vector<int>{1, 2}) {
      if (short_of == c + " " + std::to_string(threads)) continue;
      used.insert(threads);
      for (const char* backend : {"eigen", "libxsmm"}) {
        ResultRow row = rowOf(c, backend);
        row.threads = threads;
        report.report.rows.push_back(row);
      }
    }
  metadata.thread_counts.assign(used.begin(), used.end());
  metadata.threads = metadata.thread_counts.back();
  metadata.cores = std::vector<int>(std::size_t(metadata.threads), int(shard[0] - '0'));
  for (int threads : used)
    if (threads > 1) metadata.peaks_by_threads[threads] = {100.0 * threads, 0.0};
  return report;
}

// Cases that set their own threads give shards different thread counts: still one run.
TEST(ShardMerge, ShardsOfCasesWithTheirOwnThreadsMerge) {
  const MergedRun merged = mergeShards({threadedShard("1/2", {"a", "b"}), threadedShard("2/2", {"c", "d"})}, false);
  EXPECT_TRUE(merged.complete()) << merged.gaps();
  EXPECT_EQ(merged.complete_cases, 4u);
  EXPECT_EQ(merged.rows.size(), 2u * (3 * 2 + 1));
  EXPECT_EQ(merged.metadata.thread_counts, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(merged.metadata.threads, 4);
  EXPECT_EQ(merged.metadata.cores, (std::vector<int>{2, 2, 2, 2}));  // those of the shard that ran 4
  ASSERT_EQ(merged.metadata.peaks_by_threads.size(), 2u);
  EXPECT_EQ(merged.metadata.peaks_by_threads.at(2).fp32_gflops, 200.0);
  EXPECT_EQ(merged.metadata.peaks_by_threads.at(4).fp32_gflops, 400.0);
  const nlohmann::json metadata = mergedJson(merged).at("metadata");
  EXPECT_EQ(metadata.at("thread_counts"), nlohmann::json({1, 2, 4}));
  EXPECT_EQ(metadata.at("requested_threads"), nlohmann::json({1, 2}));
}

// A shard of fp32 cases measures no bf16 peak: the merged run keeps the one a bf16 shard measured.
TEST(ShardMerge, EachPeakIsTheOneAShardMeasured) {
  ShardReport fp32 = shardReport("1/2", {"a", "b"}), bf16 = shardReport("2/2", {"c", "d"});
  fp32.report.metadata.peak_gflops = 150;
  fp32.report.metadata.peaks_by_threads[2] = {300, 0};
  bf16.report.metadata.peak_gflops = 151;
  bf16.report.metadata.bf16_peak_gflops = 310;
  bf16.report.metadata.bf16_peak_instruction = "vdpbf16ps";
  bf16.report.metadata.peaks_by_threads[2] = {301, 620};
  const MergedRun merged = mergeShards({fp32, bf16}, false);
  EXPECT_EQ(merged.metadata.peak_gflops, 150);
  EXPECT_EQ(merged.metadata.bf16_peak_gflops, 310);
  EXPECT_EQ(merged.metadata.bf16_peak_instruction, "vdpbf16ps");
  EXPECT_EQ(merged.metadata.peaks_by_threads.at(2).fp32_gflops, 300);
  EXPECT_EQ(merged.metadata.peaks_by_threads.at(2).bf16_gflops, 620);
}

TEST(ShardMerge, ACaseWithoutOneOfItsThreadCountsIsIncomplete) {
  const std::vector<ShardReport> shards = {threadedShard("1/2", {"a", "b"}, "b 2"), threadedShard("2/2", {"c", "d"})};
  expectMessage(mergeError(shards), {"incomplete", "without rows: b (2 threads)"});
  const MergedRun merged = mergeShards(shards, true);
  EXPECT_EQ(merged.missing_cases, (std::vector<std::string>{"b (2 threads)"}));
  EXPECT_EQ(merged.complete_cases, 3u);
  EXPECT_EQ(mergeShards({threadedShard("1/2", {"a", "b"}, "a 1"), threadedShard("2/2", {"c", "d"})}, true)
                .missing_cases,
            (std::vector<std::string>{"a"}));
  EXPECT_EQ(mergeShards({threadedShard("1/2", {"a", "b"}), threadedShard("2/2", {"c", "d"}, "d 4")}, true)
                .missing_cases,
            (std::vector<std::string>{"d (4 threads)"}));
}

TEST(ShardMerge, ShardsOfOtherThreadRequestsCacheOrTuningAreRefused) {
  const ShardReport first = threadedShard("1/2", {"a", "b"});
  ShardReport other = threadedShard("2/2", {"c", "d"});
  other.report.metadata.requested_threads = {1};
  expectMessage(mergeError({first, other}), {"--threads", "'1,2' against '1'", first.path, other.path});
  other = threadedShard("2/2", {"c", "d"});
  other.report.metadata.case_threads = {{"d", 8}};
  expectMessage(mergeError({first, other}), {"thread counts cases set", "'d 4' against 'd 8'"});
  other = threadedShard("2/2", {"c", "d"});
  other.report.metadata.cache = "cold";
  expectMessage(mergeError({first, other}), {"cache", "'hot' against 'cold'"});
  other = threadedShard("2/2", {"c", "d"});
  other.report.metadata.tuning = "tuning/zen5.json";
  expectMessage(mergeError({first, other}), {"tuning", "'none' against 'tuning/zen5.json'"});
  // How the rows were timed and which schedule they ran.
  other = threadedShard("2/2", {"c", "d"});
  other.report.metadata.schedule_option = "avx2.f32.4x16";
  expectMessage(mergeError({first, other}), {"--schedule", "'' against 'avx2.f32.4x16'"});
  other = threadedShard("2/2", {"c", "d"});
  other.report.metadata.repetitions = 7;
  expectMessage(mergeError({first, other}), {"--reps", "'' against '7'"});
  other = threadedShard("2/2", {"c", "d"});
  other.report.metadata.min_time_s = 0.2;
  expectMessage(mergeError({first, other}), {"--min-time", "'' against '0.2'"});
}

TEST(ShardMerge, ARowOfAThreadCountItsCaseDoesNotOweIsRefused) {
  ShardReport stray = threadedShard("1/1", kSelected);
  ResultRow row = rowOf("a", "eigen");
  row.threads = 8;
  stray.report.rows.push_back(row);
  expectMessage(mergeError({stray}), {"shard-1.json", "'a eigen' ran on 8 threads", "(1,2)"});
}

}  // namespace
}  // namespace nkbench
