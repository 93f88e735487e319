// Cache sizes of the host, for tile-size heuristics.
#pragma once

#include <cstdint>

namespace nkbench {

struct CacheSizes {
  std::int64_t l1d_bytes = 32 * 1024;
  std::int64_t l2_bytes = 1024 * 1024;
};

// Per-core data cache sizes as the OS reports them; the defaults where it does not.
CacheSizes hostCacheSizes();

}  // namespace nkbench
