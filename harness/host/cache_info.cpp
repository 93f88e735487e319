#include "harness/host/cache_info.h"

#include <unistd.h>

namespace nkbench {

CacheSizes hostCacheSizes() {
  CacheSizes sizes;
  if (const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE); l1 > 0) sizes.l1d_bytes = l1;
  if (const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE); l2 > 0) sizes.l2_bytes = l2;
  sizes.last_level_bytes = sizes.l2_bytes;
  if (const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE); l3 > 0) sizes.last_level_bytes = l3;
  return sizes;
}

}  // namespace nkbench
