#include "kernels/mlir/amx/tile_emulator.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>

namespace nkbench::mlir_backend {
namespace {

constexpr int kRows = 16, kRowBytes = 64, kLanes = kRowBytes / 4;

struct EmulatedTiles {
  bool configured = false;
  TilePalette config;
  alignas(64) std::array<std::array<std::array<std::uint8_t, kRowBytes>, kRows>, kAmxTileRegisters> data{};
};

EmulatedTiles& tiles() {
  thread_local EmulatedTiles state;
  return state;
}

// The first fault on any thread: the threads of a parallel run fault on their
// own tiles, and the thread that started the run reports it.
struct FirstFault {
  std::mutex mutex;
  std::optional<std::string> what;
};

FirstFault& firstFault() {
  static FirstFault first;
  return first;
}

// Records the first fault; returns false so that the instruction does nothing.
bool fault(const std::string& what) {
  FirstFault& first = firstFault();
  const std::lock_guard<std::mutex> lock(first.mutex);
  if (!first.what) first.what = what;
  return false;
}

bool usable(const char* instruction, std::int64_t tile) {
  if (!tiles().configured) return fault(fmt::format("{} with no tile configuration loaded", instruction));
  if (tile < 0 || tile >= kAmxTileRegisters) return fault(fmt::format("{}: no tile register tmm{}", instruction, tile));
  if (tiles().config.rows(int(tile)) == 0)
    return fault(fmt::format("{}: tmm{} is not configured ({})", instruction, tile, tiles().config.describe()));
  return true;
}

float widen(std::uint16_t bf16) {
  const std::uint32_t bits = std::uint32_t(bf16) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// tdpbf16ps treats denormal inputs as zero and flushes denormal results to
// zero, whatever MXCSR says: values strictly between -FLT_MIN and FLT_MIN
// become a zero of their sign.
float flush(float value) { return std::fabs(value) < std::numeric_limits<float>::min() ? value * 0.0f : value; }


void tileZero(std::int64_t tile) {
  if (!usable("tilezero", tile)) return;
  tiles().data[tile] = {};
}

// Rows past the configured ones, and bytes past a row's configured width, are zero.
void tileLoad(std::int64_t tile, const void* base, std::int64_t stride) {
  if (!usable("tileloadd", tile)) return;
  const int rows = tiles().config.rows(int(tile)), bytes = tiles().config.bytesPerRow(int(tile));
  auto& t = tiles().data[tile];
  t = {};
  for (int r = 0; r < rows; ++r) std::memcpy(t[r].data(), static_cast<const std::uint8_t*>(base) + r * stride, bytes);
}

void tileStore(std::int64_t tile, void* base, std::int64_t stride) {
  if (!usable("tilestored", tile)) return;
  const int rows = tiles().config.rows(int(tile)), bytes = tiles().config.bytesPerRow(int(tile));
  for (int r = 0; r < rows; ++r)
    std::memcpy(static_cast<std::uint8_t*>(base) + r * stride, tiles().data[tile][r].data(), bytes);
}

// As the SDM defines tdpbf16ps: per C element, the even products of the
// instruction's pairs are summed into one f32 partial and the odd products
// into another (each step an FMA, from zero), then C += (even + odd); every
// step rounds to nearest even with DAZ and FTZ. The shapes must agree as the
// CPU checks them: C and A have the same rows, C and B the same row width, and
// A's pairs per row are B's rows. Compiled for avx512f (which the amx-emulated
// level implies), so that the row loops are vector FMAs.
__attribute__((target("avx512f,fma"))) void tileProduct(std::int64_t c, std::int64_t a, std::int64_t b) {
  if (!usable("tdpbf16ps", c) || !usable("tdpbf16ps", a) || !usable("tdpbf16ps", b)) return;
  const TilePalette& config = tiles().config;
  if (c == a || c == b || a == b) {
    fault(fmt::format("tdpbf16ps tmm{}, tmm{}, tmm{}: the tiles must differ", c, a, b));
    return;
  }
  const int rows = config.rows(int(c)), columns = config.bytesPerRow(int(c)) / 4,
            pairs = config.bytesPerRow(int(a)) / 4;
  if (config.rows(int(a)) != rows || config.bytesPerRow(int(b)) != config.bytesPerRow(int(c)) ||
      config.rows(int(b)) != pairs) {
    fault(fmt::format("tdpbf16ps tmm{}, tmm{}, tmm{}: the configured shapes do not fit ({})", c, a, b,
                      config.describe()));
    return;
  }
  // The operands widened to f32 (and denormals read as zero) once per instruction.
  auto widened = [&](std::int64_t tile, int row, int element) {
    std::uint16_t value;
    std::memcpy(&value, tiles().data[tile][row].data() + 2 * element, sizeof value);
    return flush(widen(value));
  };
  std::array<std::array<float, kLanes>, kRows> b_even{}, b_odd{};
  for (int p = 0; p < pairs; ++p)
    for (int j = 0; j < columns; ++j) {
      b_even[p][j] = widened(b, p, 2 * j);
      b_odd[p][j] = widened(b, p, 2 * j + 1);
    }
  for (int i = 0; i < rows; ++i) {
    std::array<float, kLanes> even{}, odd{};
    for (int p = 0; p < pairs; ++p) {
      const float a_even = widened(a, i, 2 * p), a_odd = widened(a, i, 2 * p + 1);
      for (int j = 0; j < columns; ++j) {
        even[j] = flush(__builtin_fmaf(a_even, b_even[p][j], even[j]));
        odd[j] = flush(__builtin_fmaf(a_odd, b_odd[p][j], odd[j]));
      }
    }
    std::uint8_t* row = tiles().data[c][i].data();
    for (int j = 0; j < columns; ++j) {
      float acc;
      std::memcpy(&acc, row + 4 * j, sizeof acc);
      const float sum = flush(flush(acc) + flush(even[j] + odd[j]));
      std::memcpy(row + 4 * j, &sum, sizeof sum);
    }
  }
}

}  // namespace

void emulatedLoadTileConfig(const TilePalette& palette) {
  EmulatedTiles& state = tiles();
  state.data = {};
  state.configured = false;
  if (palette.bytes[0] != 1 || palette.bytes[1] != 0) {
    fault(fmt::format("ldtilecfg: palette {} start row {}: only palette 1 from row 0 is emulated", palette.bytes[0],
                      palette.bytes[1]));
    return;
  }
  for (int t = 0; t < kAmxTileRegisters; ++t)
    if (palette.rows(t) > kRows || palette.bytesPerRow(t) > kRowBytes ||
        (palette.rows(t) == 0) != (palette.bytesPerRow(t) == 0)) {
      fault(fmt::format("ldtilecfg: tmm{} configured {} rows of {} bytes", t, palette.rows(t), palette.bytesPerRow(t)));
      return;
    }
  state.config = palette;
  state.configured = true;
}

void emulatedReleaseTiles() {
  tiles().data = {};
  tiles().configured = false;
}

std::optional<std::string> takeEmulatedTileFault() {
  FirstFault& first = firstFault();
  const std::lock_guard<std::mutex> lock(first.mutex);
  return std::exchange(first.what, std::nullopt);
}

std::vector<std::pair<std::string, void*>> emulatedTileFunctions() {
  const std::string prefix = kAmxEmulatorPrefix;
  return {{prefix + "tilezero", reinterpret_cast<void*>(&tileZero)},
          {prefix + "tileloadd64", reinterpret_cast<void*>(&tileLoad)},
          {prefix + "tilestored64", reinterpret_cast<void*>(&tileStore)},
          {prefix + "tdpbf16ps", reinterpret_cast<void*>(&tileProduct)}};
}

}  // namespace nkbench::mlir_backend
