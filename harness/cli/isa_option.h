// The --isa option shared by the commands.
#pragma once

#include <optional>
#include <string>

#include "harness/core/error.h"
#include "harness/core/isa.h"

namespace nkbench::cli {

inline constexpr const char* kIsaHelp = "ISA cap for every backend: auto|avx2|avx512|avx512-bf16|amx-emulated|amx";

// "auto" -> nullopt (the best the host has).
inline std::optional<Isa> parseIsaOption(const std::string& text) {
  if (text == "auto") return std::nullopt;
  if (auto isa = parseIsa(text)) return isa;
  throw Error("--isa '" + text + "': expected auto, avx2, avx512, avx512-bf16, amx-emulated or amx");
}

}  // namespace nkbench::cli
