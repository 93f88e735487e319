// The JSON report reader on arbitrary bytes, then what `compare` and `merge`
// do with the report it returns.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "harness/compare/compare_report.h"
#include "harness/compare/stored_run.h"
#include "harness/merge/shard_merge.h"
#include "harness/report/json/json_reader.h"
#include "harness/report/json/json_writer.h"

using namespace nkbench;

namespace {

// The reader inverts the writer: what it read, written and read again, is unchanged.
// Compared as text: a verified row's unknown error is NaN, unequal to itself, and null in JSON.
void checkRoundTrip(const JsonReport& report) {
  const nlohmann::json written = toJson(report.metadata, report.rows);
  const JsonReport again = parseJsonReport(written.dump(), "written.json");
  const nlohmann::json rewritten = toJson(again.metadata, again.rows);
  if (rewritten.dump() != written.dump())
    fuzz::fail("a report that changes when written and read again", nlohmann::json::diff(written, rewritten).dump());
}

// Every value the input gives for a key the writer writes is read as it was,
// unless the writer itself leaves that key null (a row not timed, a shard not given).
void checkValuesKept(const nlohmann::json& input, const nlohmann::json& written, const std::string& where) {
  for (const auto& [key, value] : written.items()) {
    const auto given = input.find(key);
    if (given == input.end() || given->is_null() || value.is_null()) continue;
    if (*given != value)
      fuzz::fail("a value read as another", where + "." + key + ": " + given->dump() + " read as " + value.dump());
  }
}

void checkReadAsGiven(const std::string& text, const JsonReport& report) {
  const nlohmann::json input = nlohmann::json::parse(text);
  const nlohmann::json written = toJson(report.metadata, report.rows);
  if (const auto metadata = input.find("metadata"); metadata != input.end() && !metadata->is_null()) {
    fuzz::check(metadata->is_object(), "metadata that is not an object read as empty", metadata->dump());
    checkValuesKept(*metadata, written.at("metadata"), "metadata");
  }
  for (std::size_t i = 0; i < report.rows.size(); ++i)
    checkValuesKept(input.at("rows").at(i), written.at("rows").at(i), "rows[" + std::to_string(i) + "]");
}

void compareWithItself(const JsonReport& report) {
  const StoredRun run = storedRunOf(report, "fuzz.json");
  for (Gate gate : {Gate::Relative, Gate::Absolute, Gate::Both}) {
    CompareOptions options;
    options.gate = gate;
    const Comparison comparison = compareRuns(run, run, options);
    formatComparison(comparison, run, run);
    comparisonJson(comparison, run, run).dump();
  }
}

void mergeAsOneShard(const JsonReport& report) {
  const std::vector<ShardReport> shards = {{"fuzz.json", report}};
  mergedJson(mergeShards(shards, /*allow_incomplete=*/true)).dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  JsonReport report;
  bool read = false;
  fuzz::parseOrError([&] {
    report = parseJsonReport(text, "fuzz.json");
    read = true;
  });
  if (!read) return 0;
  checkRoundTrip(report);
  checkReadAsGiven(text, report);
  fuzz::parseOrError([&] { compareWithItself(report); });
  fuzz::parseOrError([&] { mergeAsOneShard(report); });
  return 0;
}
