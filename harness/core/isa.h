// x86 instruction-set levels nkbench targets, and what the host CPU offers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/tile_permission.h"

namespace nkbench {

// Ordered: each level implies the ones before it. AmxEmulated is not hardware:
// the AMX kernels with each tile instruction emulated (see
// kernels/mlir/amx/tile_emulator.h), so it needs only avx512-bf16 of the host,
// and auto never picks it.
enum class Isa { Avx2, Avx512, Avx512Bf16, AmxEmulated, Amx };

std::string_view toString(Isa isa);
std::optional<Isa> parseIsa(std::string_view text);  // "avx2", "avx512", "avx512-bf16", "amx-emulated", "amx"

// Feature bits read from CPUID and XGETBV: a level counts as present only when
// the CPU has it AND the OS saves its register state.
struct CpuFeatures {
  std::string vendor;
  std::string brand;
  bool fma = false;
  bool avx2 = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512dq = false;
  bool avx512vl = false;
  bool avx512_bf16 = false;
  bool avx512_vnni = false;
  bool amx_tile = false;
  bool amx_bf16 = false;
  bool os_ymm_state = false;  // XCR0 saves YMM
  bool os_zmm_state = false;  // XCR0 saves opmask/ZMM
  bool os_tile_state = false; // XCR0 can hold AMX tile data (permission still needed)
  TilePermission tile_permission;  // asked only when the CPU and XCR0 allow AMX
  std::string host_class;     // the NKBENCH_HOST_CLASS level the CPU was masked to; empty when not masked

  bool has(Isa isa) const;
  std::vector<std::string> flagNames() const;  // e.g. {"avx2", "fma", "avx512f", ...}
};

// Reads CPUID and XCR0, masked to the host class NKBENCH_HOST_CLASS names (see
// host_class.h); on a host whose CPU and OS allow AMX it also requests the tile
// data permission (see tile_permission.h), so a level it reports can run.
// Throws nkbench::Error when NKBENCH_HOST_CLASS is not a class.
CpuFeatures detectCpuFeatures();

// Why AMX cannot run with these features ("CPU lacks amx-tile", "the kernel refused
// XTILEDATA permission: ..."), checked in that order; nullopt when it can.
std::optional<std::string> amxUnavailableReason(const CpuFeatures& features);

// Highest level the features allow, or nullopt when even AVX2+FMA is missing.
std::optional<Isa> bestIsa(const CpuFeatures& features);

// The level a run uses: `requested` (nullopt = auto, i.e. best) capped to the host.
// Returns nullopt and sets `error` when the host lacks what was requested.
std::optional<Isa> resolveIsa(std::optional<Isa> requested, const CpuFeatures& features,
                              std::string* error);

}  // namespace nkbench
