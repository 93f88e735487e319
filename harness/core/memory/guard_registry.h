// The live guard regions of guarded buffers (guarded_buffer.h), so that a
// fault address can be named as "16 bytes past the end of A". The lookup and
// its formatting are async-signal-safe: a SIGSEGV handler may call them. The
// table is fixed-size and lock-free; only registration (outside signal context)
// writes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace nkbench {

// Names a guarded buffer in reports: its operand, and its operand set where a
// case has several.
struct BufferName {
  const char* operand = "buffer";  // static storage: read from signal handlers, and after fork
  int operand_set = -1;            // -1: the case's only set
};

enum class GuardSide { BeforeStart, PastEnd };
enum class GuardAccess { Unknown, Read, Write };

// Where an address lies relative to the guarded buffer it falls next to.
// Trivially copyable, and `buffer.operand` points into the binary's static
// data, so a forked child can hand a hit to its parent as raw bytes.
struct GuardHit {
  BufferName buffer;
  GuardSide side = GuardSide::PastEnd;
  // Bytes from the buffer's edge: 1 is the first byte past the end, or the
  // last byte before the start.
  std::size_t distance = 0;
  GuardAccess access = GuardAccess::Unknown;  // the address alone does not tell; see faultAccess
};

// The whole mapping [region_begin, region_end) of a guarded buffer and its
// data [data_begin, data_end) inside it.
struct GuardRegion {
  std::uintptr_t region_begin = 0;
  std::uintptr_t data_begin = 0;
  std::uintptr_t data_end = 0;
  std::uintptr_t region_end = 0;
  BufferName name;
};

// How many regions can be live at once: cold-cache runs keep 1024 operand sets
// (A, B) and one C per set and backend. A region past this still has its guard
// pages; only its faults go unnamed.
inline constexpr std::size_t kGuardRegionSlots = 16384;

// Returns the slot to unregister with, or -1 when the table is full.
int registerGuardRegion(const GuardRegion& region);
void unregisterGuardRegion(int slot);

// True, with `hit` filled, when `fault_address` lies in a live region outside
// its data (a guard page or the canary slack). Async-signal-safe: no
// allocation, no lock.
bool findGuardHit(const void* fault_address, GuardHit* hit) noexcept;

// Whether the fault a SIGSEGV handler is handling was a read or a write, from
// the handler's third argument (the ucontext_t); Unknown where the CPU does not
// say (x86-64 Linux does). Async-signal-safe.
GuardAccess faultAccess(const void* signal_context) noexcept;

// "out of bounds: 16 bytes past the end of A of operand set 3" (Unknown access;
// "a read 16 bytes ...", "a write 16 bytes ..." where known), written into
// `out` (cut short to fit, always NUL-terminated); returns its length.
// Async-signal-safe.
std::size_t formatGuardHit(const GuardHit& hit, std::span<char> out) noexcept;
std::string describeGuardHit(const GuardHit& hit);

}  // namespace nkbench
