#include "kernels/onednn/onednn_isa_level.h"

#include <array>
#include <utility>

namespace nkbench::onednn {

std::string isaUsed(std::string_view implementation, Isa cap) {
  // Highest first: each oneDNN name contains the names of the levels below it.
  constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kLevels = {{
      {"amx", "amx"},
      {"avx512_core_bf16", "avx512-bf16"},
      {"avx512", "avx512"},
      {"avx2", "avx2"},
      {"avx", ""},
      {"sse", ""},
  }};
  for (const auto& [token, level] : kLevels)
    if (implementation.find(token) != std::string_view::npos) return std::string(level);
  return std::string(toString(cap));
}

}  // namespace nkbench::onednn
