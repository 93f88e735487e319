// The comparison as a table for people and as JSON for tools.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/compare/regression_check.h"

namespace nkbench {

// One line per row (base and new median, change, p-value, verdict), failures
// first, then a summary line.
std::string formatComparison(const Comparison& comparison, const StoredRun& base, const StoredRun& current);

nlohmann::json comparisonJson(const Comparison& comparison, const StoredRun& base, const StoredRun& current);

}  // namespace nkbench
