// What sets two runs apart beyond their rows: under another suite, ISA, fill,
// cache mode, tuning, schedule, library, compiler or CPU, times differ for
// reasons other than the code (run_settings.h). Host names are not compared:
// CI's runners are other machines of one CPU model each time.
#pragma once

#include <string>

#include "harness/compare/stored_run.h"

namespace nkbench {

// "fill (exact-integer then, random now), cache (hot then, cold now)"; empty when
// those settings agree, or a report does not say (older ones).
std::string runDifferences(const StoredRun& base, const StoredRun& current);

}  // namespace nkbench
