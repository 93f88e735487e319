// Human-readable results: one fixed-width table per suite, for the terminal.
#pragma once

#include <string>
#include <vector>

#include "harness/report/result_row.h"

namespace nkbench {

// Suites appear in order of first appearance, rows in the order given, with a
// blank line between cases. A row that did not pass has its note (skip reason,
// error, verification detail) on a short line below it.
std::string formatTable(const std::vector<ResultRow>& rows);

// "6 rows: 4 passed, 1 failed, 0 skipped, 1 mistrusted": passed, failed (wrong
// results) and skipped always, then mistrusted and errors where there are any.
std::string formatRowCounts(const std::vector<ResultRow>& rows);

}  // namespace nkbench
