#include "harness/core/memory/guard_registry.h"

#include <ucontext.h>

#include <array>
#include <atomic>

namespace nkbench {
namespace {

// One region, written under a sequence lock: `version` is odd while a writer
// changes the fields, so that a lookup (perhaps a signal handler interrupting
// the writer) skips a slot it could read half-written.
struct Slot {
  std::atomic<bool> claimed{false};
  std::atomic<std::uint32_t> version{0};
  std::atomic<std::uintptr_t> region_begin{0};
  std::atomic<std::uintptr_t> data_begin{0};
  std::atomic<std::uintptr_t> data_end{0};
  std::atomic<std::uintptr_t> region_end{0};
  std::atomic<const char*> operand{nullptr};
  std::atomic<int> operand_set{-1};
};
static_assert(std::atomic<std::uintptr_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free &&
                  std::atomic<const char*>::is_always_lock_free && std::atomic<int>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free,
              "the lookup runs in signal handlers: its atomics must not lock");

std::array<Slot, kGuardRegionSlots> g_slots;
std::atomic<std::size_t> g_slots_used{0};  // one past the highest slot ever claimed: lookups stop there

void writeSlot(Slot& slot, const GuardRegion& region) {
  slot.version.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  slot.region_begin.store(region.region_begin, std::memory_order_relaxed);
  slot.data_begin.store(region.data_begin, std::memory_order_relaxed);
  slot.data_end.store(region.data_end, std::memory_order_relaxed);
  slot.region_end.store(region.region_end, std::memory_order_relaxed);
  slot.operand.store(region.name.operand, std::memory_order_relaxed);
  slot.operand_set.store(region.name.operand_set, std::memory_order_relaxed);
  slot.version.fetch_add(1, std::memory_order_release);
}

// False when a writer was busy with the slot.
bool readSlot(const Slot& slot, GuardRegion* region) noexcept {
  const std::uint32_t before = slot.version.load(std::memory_order_acquire);
  if (before % 2 != 0) return false;
  region->region_begin = slot.region_begin.load(std::memory_order_relaxed);
  region->data_begin = slot.data_begin.load(std::memory_order_relaxed);
  region->data_end = slot.data_end.load(std::memory_order_relaxed);
  region->region_end = slot.region_end.load(std::memory_order_relaxed);
  region->name.operand = slot.operand.load(std::memory_order_relaxed);
  region->name.operand_set = slot.operand_set.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return slot.version.load(std::memory_order_relaxed) == before;
}

// Appends to a fixed buffer, dropping what does not fit; no allocation, no locale.
class LineWriter {
 public:
  explicit LineWriter(std::span<char> out) : out_(out) {}
  void text(const char* text) noexcept {
    for (; *text != '\0'; ++text) put(*text);
  }
  void number(std::size_t value) noexcept {
    char digits[24];
    std::size_t count = 0;
    do {
      digits[count++] = char('0' + value % 10);
      value /= 10;
    } while (value != 0);
    while (count > 0) put(digits[--count]);
  }
  std::size_t finish() noexcept {
    if (out_.empty()) return 0;
    out_[length_] = '\0';
    return length_;
  }

 private:
  void put(char c) noexcept {
    if (length_ + 1 < out_.size()) out_[length_++] = c;
  }
  std::span<char> out_;
  std::size_t length_ = 0;
};

}  // namespace

int registerGuardRegion(const GuardRegion& region) {
  for (std::size_t i = 0; i < g_slots.size(); ++i) {
    bool expected = false;
    if (g_slots[i].claimed.load(std::memory_order_relaxed) ||
        !g_slots[i].claimed.compare_exchange_strong(expected, true, std::memory_order_acquire))
      continue;
    writeSlot(g_slots[i], region);
    std::size_t used = g_slots_used.load(std::memory_order_relaxed);
    while (used < i + 1 && !g_slots_used.compare_exchange_weak(used, i + 1, std::memory_order_release)) {
    }
    return int(i);
  }
  return -1;
}

void unregisterGuardRegion(int slot) {
  if (slot < 0 || std::size_t(slot) >= g_slots.size()) return;
  writeSlot(g_slots[std::size_t(slot)], GuardRegion{});
  g_slots[std::size_t(slot)].claimed.store(false, std::memory_order_release);
}

bool findGuardHit(const void* fault_address, GuardHit* hit) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(fault_address);
  const std::size_t used = g_slots_used.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < used; ++i) {
    GuardRegion region;
    if (!readSlot(g_slots[i], &region) || region.region_begin == 0) continue;
    if (address >= region.region_begin && address < region.data_begin) {
      *hit = {region.name, GuardSide::BeforeStart, region.data_begin - address, GuardAccess::Unknown};
      return true;
    }
    if (address >= region.data_end && address < region.region_end) {
      *hit = {region.name, GuardSide::PastEnd, address - region.data_end + 1, GuardAccess::Unknown};
      return true;
    }
  }
  return false;
}

GuardAccess faultAccess(const void* signal_context) noexcept {
#if defined(__x86_64__) && defined(__linux__)
  // The page-fault error code's bit 1 is set for a write.
  constexpr greg_t kWriteBit = 0x2;
  const auto* context = static_cast<const ucontext_t*>(signal_context);
  if (context == nullptr) return GuardAccess::Unknown;
  return (context->uc_mcontext.gregs[REG_ERR] & kWriteBit) != 0 ? GuardAccess::Write : GuardAccess::Read;
#else
  (void)signal_context;
  return GuardAccess::Unknown;
#endif
}

std::size_t formatGuardHit(const GuardHit& hit, std::span<char> out) noexcept {
  LineWriter line(out);
  line.text("out of bounds: ");
  if (hit.access == GuardAccess::Read) line.text("a read ");
  if (hit.access == GuardAccess::Write) line.text("a write ");
  line.number(hit.distance);
  line.text(hit.distance == 1 ? " byte " : " bytes ");
  line.text(hit.side == GuardSide::PastEnd ? "past the end of " : "before the start of ");
  line.text(hit.buffer.operand != nullptr ? hit.buffer.operand : "buffer");
  if (hit.buffer.operand_set >= 0) {
    line.text(" of operand set ");
    line.number(std::size_t(hit.buffer.operand_set));
  }
  return line.finish();
}

std::string describeGuardHit(const GuardHit& hit) {
  std::array<char, 160> line{};
  return std::string(line.data(), formatGuardHit(hit, line));
}

}  // namespace nkbench
