// Cache sizes of the host, for tile-size heuristics.
#pragma once

#include <cstdint>

namespace nkbench {

struct CacheSizes {
  std::int64_t l1d_bytes = 32 * 1024;
  std::int64_t l2_bytes = 1024 * 1024;
  std::int64_t last_level_bytes = 32 * 1024 * 1024;  // L3 as the OS reports it (in a VM, maybe the whole socket's)
};

// Data cache sizes as the OS reports them; the defaults where it does not.
CacheSizes hostCacheSizes();

}  // namespace nkbench
