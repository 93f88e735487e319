// Operand memory fenced by no-access pages, so that a kernel reading or writing
// outside its operands faults instead of passing unseen.
//
// Layout of one mapping (pages of the host's size):
//   [leading guard][slack | data | 64 B + <=63 B slack][trailing guard]
// The data's end sits one vector (64 bytes, a zmm register) before the trailing
// guard, plus what 64-byte alignment adds: an overrun faults once it passes
// that. The vector keeps the masked-off lanes of a kernel's edge loads and
// stores (vmovups {k}, vmaskmovps) off the guard: they are no accesses, but a
// core suppresses their faults with a microcode assist of hundreds of cycles,
// which a timed call would pay at every edge that ends an operand (about 250
// ns per call, on the Zen 5 VM) and a real operand, followed by other memory,
// never does. The slack is filled with canary bytes: canaryDamage() finds
// writes the pages cannot (into the slack after the end, or before the start
// within the first data page). Reads of the slack go unseen. Each buffer is
// registered with guard_registry.h, which names the buffer behind a fault
// address.
#pragma once

#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "harness/core/memory/guard_registry.h"

namespace nkbench {

// The operands' alignment, as in aligned_buffer.h.
inline constexpr std::size_t kGuardedAlignment = 64;
// Mapped slack past every operand's end: the widest vector a kernel loads.
inline constexpr std::size_t kVectorSlackBytes = 64;
// Each guard is at least this large, rounded up to whole pages; guards are
// address space only, they cost no memory.
inline constexpr std::size_t kGuardBytes = 64 * 1024;
// What the slack is filled with.
inline constexpr unsigned char kCanaryByte = 0xA5;

// `bytes` of zeroed, guarded memory (none for 0 bytes). Move-only.
class GuardedRegion {
 public:
  GuardedRegion() = default;
  // Throws nkbench::Error when the mapping cannot be made.
  GuardedRegion(std::size_t bytes, BufferName name);
  ~GuardedRegion();
  GuardedRegion(GuardedRegion&& other) noexcept;
  GuardedRegion& operator=(GuardedRegion&& other) noexcept;
  GuardedRegion(const GuardedRegion&) = delete;
  GuardedRegion& operator=(const GuardedRegion&) = delete;

  std::byte* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  const BufferName& name() const { return name_; }
  // nullopt while every canary byte is intact; otherwise one line naming the
  // changed byte farthest from the data on each side that has one, e.g.
  // "out of bounds: a write 4 bytes past the end of C".
  std::optional<std::string> canaryDamage() const;

 private:
  void release() noexcept;

  std::byte* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
  std::byte* slack_begin_ = nullptr;  // the first data page
  std::byte* slack_end_ = nullptr;    // the trailing guard
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  int slot_ = -1;
  BufferName name_;
};

// A guarded array of `size()` trivially copyable elements, zero-initialised;
// it offers what the operand code used of std::vector (data, size, indexing).
template <class T>
class GuardedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "elements are placed in raw mapped memory");

 public:
  GuardedBuffer() = default;
  GuardedBuffer(std::size_t count, BufferName name) : region_(count * sizeof(T), name), size_(count) {}
  GuardedBuffer(std::span<const T> values, BufferName name) : GuardedBuffer(values.size(), name) {
    if (!values.empty()) std::memcpy(data(), values.data(), values.size_bytes());
  }
  GuardedBuffer(GuardedBuffer&& other) noexcept
      : region_(std::move(other.region_)), size_(std::exchange(other.size_, 0)) {}
  GuardedBuffer& operator=(GuardedBuffer&& other) noexcept {
    region_ = std::move(other.region_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  T* data() { return reinterpret_cast<T*>(region_.data()); }
  const T* data() const { return reinterpret_cast<const T*>(region_.data()); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  const BufferName& name() const { return region_.name(); }
  std::optional<std::string> canaryDamage() const { return region_.canaryDamage(); }

 private:
  GuardedRegion region_;
  std::size_t size_ = 0;
};

}  // namespace nkbench
