#include "harness/core/tile_permission.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace nkbench {
namespace {

constexpr int kArchReqXcompPerm = 0x1023;  // ARCH_REQ_XCOMP_PERM (asm/prctl.h)
constexpr int kXfeatureXtiledata = 18;     // XFEATURE_XTILEDATA

}  // namespace

TilePermission requestTileDataPermission() {
  static const TilePermission outcome = [] {
    TilePermission permission;
    permission.requested = true;
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) permission.error = errno;
    return permission;
  }();
  return outcome;
}

}  // namespace nkbench
