// The settings of a run that its metadata records and that decide its numbers
// beyond the code: one table for the two readers that weigh them. `merge`
// refuses shards that differ in one that defines a run; `compare` names the
// ones that set two runs apart (their times differ for reasons other than the code).
#pragma once

#include <string>
#include <vector>

#include "harness/report/result_row.h"

namespace nkbench {

struct RunSetting {
  const char* what;                            // as messages name it, e.g. "--threads"
  std::string (*value)(const RunMetadata&);  // empty: unknown (older reports)
  bool defines_run;                            // every shard of one run has the same
  bool sets_runs_apart;                        // worth a word when two compared runs differ
};

const std::vector<RunSetting>& runSettings();

}  // namespace nkbench
