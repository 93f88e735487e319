// JSON report: run metadata plus every result row, rewritten whole after each row.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/result_row.h"

namespace nkbench {

// Written as "nkbench_version": project(VERSION) of CMakeLists.txt.
inline constexpr std::string_view kNkbenchVersion = NKBENCH_VERSION;

// {"nkbench_version": ..., "metadata": {...}, "rows": [{...}, ...]}. Row keys are
// the CSV columns plus the per-repetition samples; measurements not taken are null (README.md).
nlohmann::json toJson(const RunMetadata& metadata, const std::vector<ResultRow>& rows);
nlohmann::json toJson(const RunMetadata& metadata);
nlohmann::json toJson(const ResultRow& row);

// Replaces `path` atomically (replaceFileAtomically), so a reader or a crash never
// sees a half-written report. Throws Error on failure.
void writeJsonFile(const std::filesystem::path& path, const RunMetadata& metadata,
                   const std::vector<ResultRow>& rows);
void writeJsonFile(const std::filesystem::path& path, const nlohmann::json& report);

}  // namespace nkbench
