// Reads a JSON report back into the rows and metadata it was written from.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/result_row.h"

namespace nkbench {

struct JsonReport {
  RunMetadata metadata;
  std::vector<ResultRow> rows;
};

// The inverse of json_writer's toJson: toJson(readJsonReport(f)) equals what was
// written. Reports from older nkbench versions load too: keys added since then take
// their defaults. Throws Error naming the file when it cannot be read, is not JSON,
// has no "rows" list, or row N lacks a key every version wrote or holds a bad value.
JsonReport readJsonReport(const std::filesystem::path& path);
// The same for a report's text; `display_name` stands for the file in messages.
JsonReport parseJsonReport(const std::string& text, const std::string& display_name);

// The same for one row and for the metadata; throw Error.
ResultRow rowFromJson(const nlohmann::json& row);
RunMetadata metadataFromJson(const nlohmann::json& metadata);

}  // namespace nkbench
