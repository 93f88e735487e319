#include "kernels/mlir/amx/tile_state.h"

#include <immintrin.h>

#include <cstring>

#include "kernels/mlir/amx/tile_emulator.h"

namespace nkbench::mlir_backend {
namespace {

struct LoadedConfig {
  bool loaded = false;
  TilePalette palette;
  std::int64_t loads = 0;
};

LoadedConfig& loadedConfig(TileMachine machine) {
  thread_local LoadedConfig real, emulated;
  return machine == TileMachine::Real ? real : emulated;
}

__attribute__((target("amx-tile"))) void loadRealTiles(const TilePalette& palette) {
  _tile_loadconfig(palette.bytes.data());
}

__attribute__((target("amx-tile"))) void releaseRealTiles() { _tile_release(); }

void useRealTileConfig(const void* palette) {
  TilePalette p;
  std::memcpy(p.bytes.data(), palette, TilePalette::kBytes);
  useTileConfig(TileMachine::Real, p);
}

void useEmulatedTileConfig(const void* palette) {
  TilePalette p;
  std::memcpy(p.bytes.data(), palette, TilePalette::kBytes);
  useTileConfig(TileMachine::Emulated, p);
}

}  // namespace

void useTileConfig(TileMachine machine, const TilePalette& palette) {
  LoadedConfig& state = loadedConfig(machine);
  if (state.loaded && state.palette == palette) return;
  if (machine == TileMachine::Real)
    loadRealTiles(palette);
  else
    emulatedLoadTileConfig(palette);
  state = {.loaded = true, .palette = palette, .loads = state.loads + 1};
}

void releaseTiles(TileMachine machine) {
  LoadedConfig& state = loadedConfig(machine);
  if (!state.loaded) return;
  if (machine == TileMachine::Real)
    releaseRealTiles();
  else
    emulatedReleaseTiles();
  state.loaded = false;
}

std::int64_t tileConfigLoads(TileMachine machine) { return loadedConfig(machine).loads; }

UseTileConfigEntry useTileConfigEntry(TileMachine machine) {
  return machine == TileMachine::Real ? &useRealTileConfig : &useEmulatedTileConfig;
}

}  // namespace nkbench::mlir_backend
