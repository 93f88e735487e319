// Emulated AMX tiles (--isa amx-emulated): this thread's eight tile registers
// and their configuration in memory, and the tile instructions the kernels use,
// as the Intel SDM defines them, called by the emulated kernels in place of the
// instructions (amx_payload_ir.h, AmxTileOps::EmulatorCalls). The kernels'
// indexing, strides and tile configuration protocol run and are verified on
// hosts without AMX: a tile used with no configuration, or with one that does
// not fit the instruction (as the CPU would fault on), is a recorded fault.
// Not AMX performance. Needs avx512f (the amx-emulated level has it).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/mlir/amx/tile_config.h"

namespace nkbench::mlir_backend {

// ldtilecfg and tilerelease of the emulated tiles: both zero all tile data.
void emulatedLoadTileConfig(const TilePalette& palette);
void emulatedReleaseTiles();

// The first fault of the emulated tiles on any thread since the last call, if
// any (later ones are its consequences); the instruction that faulted did nothing.
std::optional<std::string> takeEmulatedTileFault();

// The emulated instructions as the kernels call them, by name (kAmxEmulatorPrefix + instruction).
std::vector<std::pair<std::string, void*>> emulatedTileFunctions();

}  // namespace nkbench::mlir_backend
