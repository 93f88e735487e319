// The nkbench ISA level a oneDNN implementation runs at, read from its name.
// Pure string work, so it is built and tested with or without oneDNN.
#pragma once

#include <string>
#include <string_view>

#include "harness/core/isa.h"

namespace nkbench::onednn {

// The level named by `implementation` (impl_info_str(), e.g. "brg:avx512_core_amx"
// -> "amx", "brg:avx512_core_bf16" -> "avx512-bf16", "brg:avx512_core" -> "avx512",
// "jit:avx2" -> "avx2"); the highest one when it names several. A name without an
// ISA ("gemm:jit") gives `cap`, the bound oneDNN ran under: its code is at or below
// it. A name of an ISA below AVX2 ("sse41") gives "", which no nkbench level names.
std::string isaUsed(std::string_view implementation, Isa cap);

}  // namespace nkbench::onednn
