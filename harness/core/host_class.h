// Host classes: the CPU detected here masked down to a smaller x86-64 class, so
// that one machine runs nkbench and its tests as an AVX2-only, AVX-512 or
// avx512-bf16 host would (NKBENCH_HOST_CLASS). A mask only removes features: a
// class above the host changes nothing, so nothing the host lacks ever runs.
#pragma once

#include <optional>
#include <string_view>

#include "harness/core/isa.h"

namespace nkbench {

inline constexpr const char* kHostClassVariable = "NKBENCH_HOST_CLASS";

// "avx2", "avx512", "avx512-bf16" or "amx" (the host as it is); nullopt otherwise.
std::optional<Isa> parseHostClass(std::string_view text);

// The class NKBENCH_HOST_CLASS names, or nullopt when it is unset or empty.
// Throws nkbench::Error naming the variable and the value when it is not a class.
std::optional<Isa> hostClassFromEnvironment();

// `features` without every CPU feature above the `top` level (CPUID bits only:
// the OS register state stays as detected). The tile permission is dropped with AMX.
CpuFeatures maskToHostClass(CpuFeatures features, Isa top);

}  // namespace nkbench
