// Host and build facts recorded with every run.
#pragma once

#include <string>

#include "harness/core/isa.h"
#include "harness/report/result_row.h"

namespace nkbench {

// Fills CPU model, ISA flags, compiler, git commit, date and host name.
// Clock, peak, library versions and the command line are added by the caller.
RunMetadata collectRunMetadata(const CpuFeatures& features);

}  // namespace nkbench
