#include "harness/compare/stored_run.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/core/error.h"

namespace nkbench {
namespace {

using nlohmann::json;

std::string text(const json& object, const char* key, const std::string& fallback = "") {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

StoredRow rowFrom(const json& row) {
  StoredRow stored;
  stored.case_id = row.at("case").get<std::string>();
  stored.backend = row.at("backend").get<std::string>();
  stored.dtype = row.at("dtype").get<std::string>();
  stored.c_dtype = text(row, "c_dtype", "f32");
  stored.isa = row.at("isa").get<std::string>();
  stored.status = row.at("status").get<std::string>();
  stored.note = text(row, "note");
  stored.problem = fmt::format("{} {}x{}x{} b{} beta={}", row.at("kind").get<std::string>(), row.at("m").get<long>(),
                               row.at("n").get<long>(), row.at("k").get<long>(), row.at("batch").get<long>(),
                               row.at("beta").get<int>());
  if (const auto median = row.find("median_ms"); median != row.end() && median->is_number())
    stored.median_ms = median->get<double>();
  if (const auto samples = row.find("samples_ms"); samples != row.end() && samples->is_array())
    stored.samples_ms = samples->get<std::vector<double>>();
  return stored;
}

}  // namespace

std::string StoredRow::key() const {
  const std::string type = c_dtype == "f32" ? dtype : dtype + "->" + c_dtype;
  return fmt::format("{} {} {} {}", case_id, backend, type, isa);
}

StoredRun loadStoredRun(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) throw Error(fmt::format("{}: cannot read the report", path.string()));
  json report;
  try {
    report = json::parse(file);
  } catch (const json::exception& error) {
    throw Error(fmt::format("{}: not JSON ({}); compare reads the JSON that `nkbench run --json` writes",
                            path.string(), error.what()));
  }
  if (!report.is_object() || !report.contains("rows") || !report.at("rows").is_array())
    throw Error(fmt::format("{}: not an nkbench JSON report (no \"rows\" list)", path.string()));
  StoredRun run;
  run.path = path.string();
  const json metadata = report.value("metadata", json::object());
  run.origin = fmt::format("{}, {}, commit {}", text(metadata, "cpu_model", "unknown CPU"),
                           text(metadata, "date", "unknown date"), text(metadata, "git_commit", "unknown"));
  std::set<std::string> keys;
  for (const json& row : report.at("rows")) {
    try {
      run.rows.push_back(rowFrom(row));
    } catch (const json::exception& error) {
      throw Error(fmt::format("{}: row {} is malformed: {}", path.string(), run.rows.size() + 1, error.what()));
    }
    if (!keys.insert(run.rows.back().key()).second)
      throw Error(fmt::format("{}: row '{}' appears twice", path.string(), run.rows.back().key()));
  }
  if (run.rows.empty()) throw Error(fmt::format("{}: the report has no rows", path.string()));
  return run;
}

}  // namespace nkbench
