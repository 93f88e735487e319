// Measured single-core floating-point peak, the ceiling kernels are judged against.
#pragma once

#include "harness/core/isa.h"

namespace nkbench {

// fp32 FMA throughput of the calling thread's core in GFLOPS: independent FMA
// chains on ZMM registers for Avx512 and above, on YMM for Avx2. Best of a
// few ~50 ms trials. Throws nkbench::Error when the host lacks `isa`.
// Meaningful only in an optimised build (the chains must live in registers).
double measureFp32PeakGflops(Isa isa);

}  // namespace nkbench
