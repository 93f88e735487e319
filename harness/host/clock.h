// The core clock, measured by timing instructions of known latency.
#pragma once

namespace nkbench {

// Core clock in GHz of the calling thread's CPU: a chain of dependent
// single-cycle integer adds timed with steady_clock, best of a few trials.
// Not the TSC rate: on these VMs the TSC ticks at the nominal rate while the
// cores boost well above it.
double measureCoreClockGhz();

}  // namespace nkbench
