#include "harness/merge/shard_merge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <set>

#include "harness/core/error.h"
#include "harness/report/json/json_writer.h"
#include "harness/report/run_settings.h"
#include "harness/suite/shard.h"

namespace nkbench {
namespace {

struct Part {
  const ShardReport* report;
  Shard shard;
};

Shard shardOf(const ShardReport& report) {
  const std::string& text = report.report.metadata.shard;
  if (text.empty())
    throw Error(fmt::format("{}: not a shard report (its run had no --shard); merge combines the shards of one run",
                            report.path));
  std::string why;
  const std::optional<Shard> shard = parseShard(text, &why);
  if (!shard) throw Error(fmt::format("{}: bad shard '{}' in its metadata: {}", report.path, text, why));
  return *shard;
}

void checkSameRun(const Part& first, const Part& other) {
  const RunMetadata& a = first.report->report.metadata;
  const RunMetadata& b = other.report->report.metadata;
  const std::string& a_path = first.report->path;
  const std::string& b_path = other.report->path;
  if (first.shard.count != other.shard.count)
    throw Error(fmt::format("{} is shard {} but {} is shard {}: shards of different partitions do not merge", a_path,
                            a.shard, b_path, b.shard));
  // What every shard of one run shares; shards that differ in one cannot be merged.
  for (const RunSetting& setting : runSettings())
    if (setting.defines_run && setting.value(a) != setting.value(b))
      throw Error(fmt::format("{} and {} differ in {}: '{}' against '{}'", a_path, b_path, setting.what,
                              setting.value(a), setting.value(b)));
  if (a.selected_cases != b.selected_cases)
    throw Error(fmt::format("{} and {} selected different cases of suite '{}' ({} cases against {}): "
                            "another --filter or suite file",
                            a_path, b_path, a.suite, a.selected_cases.size(), b.selected_cases.size()));
}

// "a, b, c and 4 more": keeps one-line messages short for large suites.
std::string listed(const std::vector<std::string>& items) {
  constexpr std::size_t kShown = 5;
  if (items.size() <= kShown) return fmt::format("{}", fmt::join(items, ", "));
  return fmt::format("{} and {} more", fmt::join(items.begin(), items.begin() + kShown, ", "), items.size() - kShown);
}

std::vector<std::string> pathsOf(const std::vector<Part>& parts) {
  std::vector<std::string> paths;
  for (const Part& part : parts) paths.push_back(part.report->path);
  return paths;
}

// The thread counts a selected case owes rows for: its own, or the run's
// --threads; none known in reports from before requested_threads.
std::vector<int> threadCountsOwed(const RunMetadata& metadata, const std::string& id) {
  if (const auto own = metadata.case_threads.find(id); own != metadata.case_threads.end()) return {own->second};
  return metadata.requested_threads;
}

// Rows of all shards, each (case, backend, threads) once, in the order of the selected cases.
std::vector<ResultRow> rowsInSuiteOrder(const std::vector<Part>& parts, const std::vector<std::string>& selected) {
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < selected.size(); ++i) position.emplace(selected[i], i);
  std::map<std::tuple<std::string, std::string, int>, std::string> seen_in;
  std::vector<ResultRow> rows;
  for (const Part& part : parts)
    for (const ResultRow& row : part.report->report.rows) {
      const std::string& path = part.report->path;
      if (!position.count(row.case_id))
        throw Error(fmt::format("{}: row '{} {}' is of a case its run did not select", path, row.case_id, row.backend));
      const std::vector<int> owed = threadCountsOwed(part.report->report.metadata, row.case_id);
      if (!owed.empty() && std::find(owed.begin(), owed.end(), row.threads) == owed.end())
        throw Error(fmt::format("{}: row '{} {}' ran on {} threads, which its run did not ask of that case ({})", path,
                                row.case_id, row.backend, row.threads, fmt::join(owed, ",")));
      const auto [it, inserted] = seen_in.emplace(std::tuple(row.case_id, row.backend, row.threads), path);
      if (!inserted)
        throw Error(fmt::format("row '{} {}{}' appears twice: in {} and in {}", row.case_id, row.backend,
                                row.threads > 1 ? fmt::format(" ({} threads)", row.threads) : "", it->second, path));
      rows.push_back(row);
    }
  std::stable_sort(rows.begin(), rows.end(), [&position](const ResultRow& a, const ResultRow& b) {
    return position.at(a.case_id) < position.at(b.case_id);
  });
  return rows;
}

// Differences that do not break the merge but matter when reading it.
std::vector<std::string> notesOn(const std::vector<Part>& parts) {
  std::set<std::string> machines, commits;
  std::vector<std::string> where;
  for (const Part& part : parts) {
    const RunMetadata& metadata = part.report->report.metadata;
    machines.insert(metadata.hostname + "\n" + metadata.cpu_model);
    commits.insert(metadata.git_commit);
    where.push_back(fmt::format("{} on {} ({}, commit {})", metadata.shard, metadata.hostname, metadata.cpu_model,
                                metadata.git_commit));
  }
  std::vector<std::string> notes;
  if (machines.size() > 1)
    notes.push_back(fmt::format("the shards ran on {} machines; each row's peak_fraction is relative to its own "
                                "shard's measured peak",
                                machines.size()));
  if (commits.size() > 1) notes.push_back(fmt::format("the shards ran {} different commits", commits.size()));
  if (!notes.empty()) notes.push_back(fmt::format("shards: {}", fmt::join(where, "; ")));
  return notes;
}

// Each shard used the thread counts of its own cases: the merge used them all.
void mergeThreadMetadata(const std::vector<Part>& parts, RunMetadata& merged) {
  std::set<int> counts;
  for (const Part& part : parts) {
    const RunMetadata& shard = part.report->report.metadata;
    if (shard.thread_counts.empty()) counts.insert(shard.threads);
    counts.insert(shard.thread_counts.begin(), shard.thread_counts.end());
    if (shard.threads > merged.threads) {
      merged.threads = shard.threads;
      merged.cores = shard.cores;
    }
  }
  merged.thread_counts.assign(counts.begin(), counts.end());
}

// A shard measures a peak only where its cases need it (a bf16 peak for bf16
// cases, a count's peaks for cases at that count): each peak is the first
// shard's that measured it, not the first shard's zero.
void mergePeaks(const std::vector<Part>& parts, RunMetadata& merged) {
  const auto first = [](double& into, double value) {
    if (into <= 0 && value > 0) into = value;
  };
  merged.peak_gflops = merged.bf16_peak_gflops = 0;
  merged.peaks_by_threads.clear();
  for (const Part& part : parts) {
    const RunMetadata& shard = part.report->report.metadata;
    first(merged.peak_gflops, shard.peak_gflops);
    if (merged.bf16_peak_gflops <= 0 && shard.bf16_peak_gflops > 0) {
      merged.bf16_peak_gflops = shard.bf16_peak_gflops;
      merged.bf16_peak_instruction = shard.bf16_peak_instruction;
    }
    for (const auto& [threads, peaks] : shard.peaks_by_threads) {
      ThreadPeaks& into = merged.peaks_by_threads[threads];
      first(into.fp32_gflops, peaks.fp32_gflops);
      first(into.bf16_gflops, peaks.bf16_gflops);
    }
  }
}

}  // namespace

MergedRun mergeShards(const std::vector<ShardReport>& shards, bool allow_incomplete) {
  if (shards.empty()) throw Error("merge needs at least one shard report");
  std::vector<Part> parts;
  for (const ShardReport& report : shards) parts.push_back({&report, shardOf(report)});
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Part& a, const Part& b) { return a.shard.index < b.shard.index; });
  for (std::size_t i = 1; i < parts.size(); ++i) {
    checkSameRun(parts.front(), parts[i]);
    if (parts[i - 1].shard.index == parts[i].shard.index)
      throw Error(fmt::format("{} and {} are both shard {}", parts[i - 1].report->path, parts[i].report->path,
                              toString(parts[i].shard)));
  }

  MergedRun merged;
  merged.metadata = parts.front().report->report.metadata;
  merged.metadata.shard.clear();
  for (const Part& part : parts) merged.shards.push_back(part.report->report.metadata);
  merged.rows = rowsInSuiteOrder(parts, merged.metadata.selected_cases);
  merged.notes = notesOn(parts);

  const int count = parts.front().shard.count;
  for (int index = 1, next = 0; index <= count; ++index) {
    if (next < int(parts.size()) && parts[std::size_t(next)].shard.index == index)
      ++next;
    else
      merged.missing_shards.push_back(toString(Shard{index, count}));
  }
  mergeThreadMetadata(parts, merged.metadata);
  mergePeaks(parts, merged.metadata);
  std::set<std::pair<std::string, int>> with_rows;
  for (const ResultRow& row : merged.rows) with_rows.emplace(row.case_id, row.threads);
  for (const std::string& id : merged.metadata.selected_cases) {
    const std::vector<int> owed = threadCountsOwed(merged.metadata, id);
    bool whole = true;
    for (int threads : owed)
      if (!with_rows.count({id, threads})) {
        merged.missing_cases.push_back(threads > 1 ? fmt::format("{} ({} threads)", id, threads) : id);
        whole = false;
      }
    // Older reports do not say which counts were asked for: any row will do.
    if (owed.empty() && std::none_of(merged.rows.begin(), merged.rows.end(),
                                     [&id](const ResultRow& row) { return row.case_id == id; })) {
      merged.missing_cases.push_back(id);
      whole = false;
    }
    if (whole) ++merged.complete_cases;
  }

  if (!merged.complete() && !allow_incomplete)
    throw Error(fmt::format("{}: incomplete: {} (--allow-incomplete merges them anyway)",
                            fmt::join(pathsOf(parts), ", "), merged.gaps()));
  return merged;
}

std::string MergedRun::gaps() const {
  return fmt::format("missing shards: {}; selected cases without rows: {}",
                     missing_shards.empty() ? "none" : listed(missing_shards),
                     missing_cases.empty() ? "none" : listed(missing_cases));
}

nlohmann::json mergedJson(const MergedRun& merged) {
  nlohmann::json report = toJson(merged.metadata, merged.rows);
  report["shards"] = nlohmann::json::array();
  for (const RunMetadata& shard : merged.shards) report["shards"].push_back(toJson(shard));
  report["missing_shards"] = merged.missing_shards;
  report["missing_cases"] = merged.missing_cases;
  return report;
}

}  // namespace nkbench
