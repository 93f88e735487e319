#include "kernels/mlir/amx/tile_state.h"

#include <immintrin.h>

#include <atomic>
#include <cstring>

#include "kernels/mlir/amx/tile_emulator.h"

namespace nkbench::mlir_backend {
namespace {

struct LoadedConfig {
  bool loaded = false;
  TilePalette palette;
  std::uint64_t epoch = 0;
  std::int64_t loads = 0;
};

LoadedConfig& loadedConfig(TileMachine machine) {
  thread_local LoadedConfig real, emulated;
  return machine == TileMachine::Real ? real : emulated;
}

// Counts the releases of `machine`'s tiles on any thread. A configuration loaded
// before the latest release is loaded again: a run of calls on several OpenMP
// threads releases the tiles of the threads it is given at its end, and OpenMP
// does not promise that they are the threads that ran the calls, so a thread may
// still hold a configuration that other code has since replaced.
std::atomic<std::uint64_t>& releaseEpoch(TileMachine machine) {
  static std::atomic<std::uint64_t> real{0}, emulated{0};
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
  const std::uint64_t epoch = releaseEpoch(machine).load(std::memory_order_acquire);
  if (state.loaded && state.epoch == epoch && state.palette == palette) return;
  if (machine == TileMachine::Real)
    loadRealTiles(palette);
  else
    emulatedLoadTileConfig(palette);
  state = {.loaded = true, .palette = palette, .epoch = epoch, .loads = state.loads + 1};
}

void releaseTiles(TileMachine machine) {
  // Counted whether or not this thread holds tiles: the release may be on
  // another thread than the calls of the run it ends.
  releaseEpoch(machine).fetch_add(1, std::memory_order_acq_rel);
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
