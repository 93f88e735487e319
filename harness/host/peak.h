// Measured single-core floating-point peak, the ceiling kernels are judged against.
#pragma once

#include "harness/core/isa.h"

namespace nkbench {

// fp32 FMA throughput of the calling thread's core in GFLOPS: independent FMA
// chains on ZMM registers for Avx512 and above, on YMM for Avx2. Best of a
// few ~50 ms trials. Throws nkbench::Error when the host lacks `isa`.
// Meaningful only in an optimised build (the chains must live in registers).
double measureFp32PeakGflops(Isa isa);

// bf16 dot-product throughput (vdpbf16ps on ZMM) of the calling thread's core
// in GFLOPS, counting 64 FLOPs per instruction (16 lanes x 2 bf16 pairs x
// multiply and add). Same trials as the fp32 peak. Throws nkbench::Error when
// the host lacks Isa::Avx512Bf16.
double measureBf16DotPeakGflops();

}  // namespace nkbench
