#include "reference/bf16.h"

#include <algorithm>

namespace nkbench {

void toBFloat16(const float* in, std::size_t n, BFloat16* out) {
  std::transform(in, in + n, out, [](float value) { return toBFloat16(value); });
}

void toFloat(const BFloat16* in, std::size_t n, float* out) {
  std::transform(in, in + n, out, [](BFloat16 value) { return toFloat(value); });
}

}  // namespace nkbench
