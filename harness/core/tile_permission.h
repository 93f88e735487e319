// Linux hands out the AMX tile data state (8 KiB per thread) only on request:
// a process that executes a tile instruction without it gets SIGILL.
#pragma once

namespace nkbench {

// Outcome of arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA).
struct TilePermission {
  bool requested = false;  // not asked when the CPU or the OS already rule AMX out
  int error = 0;           // errno when refused, 0 when granted
  bool granted() const { return requested && error == 0; }
};

// Asks Linux once per process; later calls return the first outcome.
TilePermission requestTileDataPermission();

}  // namespace nkbench
