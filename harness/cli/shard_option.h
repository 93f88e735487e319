// The --shard option shared by the commands.
#pragma once

#include <optional>
#include <string>

#include "harness/core/error.h"
#include "harness/suite/shard.h"

namespace nkbench::cli {

inline constexpr const char* kShardHelp =
    "Only shard I of N (counted from 1) of the selected cases, e.g. 2/4; the shards of one suite are disjoint, "
    "cover it and are balanced by estimated cost";

// Not given -> nullopt (all selected cases).
inline std::optional<Shard> parseShardOption(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::string why;
  if (auto shard = parseShard(*text, &why)) return shard;
  throw Error("--shard '" + *text + "': " + why);
}

}  // namespace nkbench::cli
