// This thread's tile configuration, kept out of the kernels' calls: a run of
// calls of tile kernels loads it once (ldtilecfg), reloads it only when a call
// needs another one, and releases the tiles (tilerelease) when the run ends, so
// that nothing stale reaches other code on the thread (oneDNN's AMX kernels
// run in the same process and configure tiles their own way).
#pragma once

#include <cstdint>

#include "kernels/mlir/amx/tile_config.h"

namespace nkbench::mlir_backend {

// Which tiles: the CPU's, or the emulator's (tile_emulator.h).
enum class TileMachine { Real, Emulated };

// Loads `palette` unless this thread's tiles of `machine` hold it now, loaded
// since the last release on any thread. Real tiles need AMX and the process's
// XTILEDATA permission (the caller checked).
void useTileConfig(TileMachine machine, const TilePalette& palette);

// Ends a run of calls: releases this thread's tiles of `machine` if any
// configuration is loaded; the next useTileConfig on any thread loads again.
void releaseTiles(TileMachine machine);

// Configurations this thread has loaded into `machine` so far (the tests count them).
std::int64_t tileConfigLoads(TileMachine machine);

// The function a kernel calls as kAmxUseTileConfig, for `machine`.
using UseTileConfigEntry = void (*)(const void* palette);
UseTileConfigEntry useTileConfigEntry(TileMachine machine);

}  // namespace nkbench::mlir_backend
