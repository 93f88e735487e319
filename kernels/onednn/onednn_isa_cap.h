// oneDNN's ISA cap: accepted only before its first primitive, so fixed once per process.
#pragma once

#include <optional>
#include <string>

#include "harness/core/isa.h"

namespace nkbench::onednn {

// Caps oneDNN to `cap` if this is the first call in the process. Returns nullopt
// when oneDNN's effective ISA stays within `cap`, otherwise why it does not.
std::optional<std::string> applyIsaCap(Isa cap);

// The highest ISA oneDNN may use in this process, e.g. "avx2", for the report.
std::string effectiveIsa();

}  // namespace nkbench::onednn
