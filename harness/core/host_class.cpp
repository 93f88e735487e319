#include "harness/core/host_class.h"

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace nkbench {

std::optional<Isa> parseHostClass(std::string_view text) {
  const std::optional<Isa> level = parseIsa(text);
  if (level == Isa::AmxEmulated) return std::nullopt;  // a way to run kernels, not a CPU
  return level;
}

std::optional<Isa> hostClassFromEnvironment() {
  const char* value = std::getenv(kHostClassVariable);
  if (value == nullptr || *value == '\0') return std::nullopt;
  const std::optional<Isa> level = parseHostClass(value);
  if (!level)
    throw Error(fmt::format("{}={}: not a host class (expected avx2, avx512, avx512-bf16 or amx)", kHostClassVariable,
                            value));
  return level;
}

CpuFeatures maskToHostClass(CpuFeatures f, Isa top) {
  if (top < Isa::Avx512) f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = f.avx512_vnni = false;
  if (top < Isa::Avx512Bf16) f.avx512_bf16 = false;
  if (top < Isa::Amx) {
    f.amx_tile = f.amx_bf16 = false;
    f.tile_permission = {};
    f.host_class = std::string(toString(top));
  }
  return f;
}

}  // namespace nkbench
