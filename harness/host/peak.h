// Measured single-core floating-point peak, the ceiling kernels are judged against.
#pragma once

#include <vector>

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

// bf16 AMX tile throughput (tdpbf16ps on four 16x16 f32 accumulator tiles) of
// the calling thread's core in GFLOPS, 16384 FLOPs per instruction. Same
// trials. Throws nkbench::Error, executing nothing, when the host lacks Isa::Amx
// (CPU features, XCR0 tile state or the OS's tile permission).
double measureAmxBf16PeakGflops();

// The same peaks for a run of one thread per core of `cores`: each core's
// measured at once on a thread pinned to it, and summed (cores that share an
// FPU, as hyperthreads do, show it). One core: the calling thread's, as above.
double measureFp32PeakGflops(Isa isa, const std::vector<int>& cores);
double measureBf16DotPeakGflops(const std::vector<int>& cores);
double measureAmxBf16PeakGflops(const std::vector<int>& cores);

// The bf16 peak a run measures and judges its bf16 rows against: the tiles
// under --isa amx, the dot product from avx512-bf16 up (amx-emulated runs vector
// code), none below avx512-bf16 or for a run without bf16 cases (it costs a
// measurement).
enum class Bf16Peak { None, DotProduct, Tiles };
Bf16Peak bf16PeakFor(Isa run_isa, bool any_bf16_case);

// The two peaks that choose the bf16 vector route (mlir's route_choice.h: the
// dot product, or f32 FMAs where vdpbf16ps is slower), measured only where
// they decide something: bf16 cases under a cap of avx512-bf16 or above
// (amx-emulated and amx included: their vector route). 0 and 0 otherwise.
struct Bf16RoutePeaks {
  double fp32_fma_gflops = 0.0;
  double bf16_dot_gflops = 0.0;
};
Bf16RoutePeaks measureBf16RoutePeaks(Isa run_isa, bool any_bf16_case);

}  // namespace nkbench
