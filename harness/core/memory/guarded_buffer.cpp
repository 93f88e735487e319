#include "harness/core/memory/guarded_buffer.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "harness/core/error.h"

namespace nkbench {
namespace {

std::size_t roundUp(std::size_t value, std::size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

std::size_t pageBytes() {
  static const std::size_t bytes = std::size_t(sysconf(_SC_PAGESIZE));
  return bytes;
}

std::string nameOf(const BufferName& name) {
  return name.operand_set >= 0 ? fmt::format("{} of operand set {}", name.operand, name.operand_set)
                               : std::string(name.operand);
}

std::string canaryLine(const BufferName& name, GuardSide side, std::size_t distance) {
  return describeGuardHit(GuardHit{name, side, distance, GuardAccess::Write});
}

}  // namespace

GuardedRegion::GuardedRegion(std::size_t bytes, BufferName name) : bytes_(bytes), name_(name) {
  if (bytes == 0) return;
  const std::size_t page = pageBytes();
  const std::size_t guard = roundUp(kGuardBytes, page);
  const std::size_t padded = roundUp(bytes, kGuardedAlignment) + kVectorSlackBytes;
  const std::size_t data_pages_bytes = roundUp(padded, page);
  mapping_bytes_ = guard + data_pages_bytes + guard;
  // All no-access first; only the data pages are opened, so the guards are never committed.
  void* mapping = mmap(nullptr, mapping_bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED)
    throw Error(fmt::format("cannot map {} guarded bytes for {}: {}", bytes, nameOf(name), std::strerror(errno)));
  mapping_ = static_cast<std::byte*>(mapping);
  slack_begin_ = mapping_ + guard;
  slack_end_ = slack_begin_ + data_pages_bytes;
  if (mprotect(slack_begin_, data_pages_bytes, PROT_READ | PROT_WRITE) != 0) {
    const int error = errno;
    release();
    throw Error(fmt::format("cannot open {} guarded bytes for {}: {}", bytes, nameOf(name), std::strerror(error)));
  }
  data_ = slack_end_ - padded;
  std::memset(slack_begin_, kCanaryByte, std::size_t(data_ - slack_begin_));
  std::memset(data_ + bytes_, kCanaryByte, std::size_t(slack_end_ - (data_ + bytes_)));
  const auto address = [](const std::byte* p) { return reinterpret_cast<std::uintptr_t>(p); };
  slot_ = registerGuardRegion(
      {address(mapping_), address(data_), address(data_ + bytes_), address(mapping_ + mapping_bytes_), name_});
}

GuardedRegion::~GuardedRegion() { release(); }

GuardedRegion::GuardedRegion(GuardedRegion&& other) noexcept
    : mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_bytes_(std::exchange(other.mapping_bytes_, 0)),
      slack_begin_(std::exchange(other.slack_begin_, nullptr)),
      slack_end_(std::exchange(other.slack_end_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      slot_(std::exchange(other.slot_, -1)),
      name_(other.name_) {}

GuardedRegion& GuardedRegion::operator=(GuardedRegion&& other) noexcept {
  if (this != &other) {
    release();
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
    slack_begin_ = std::exchange(other.slack_begin_, nullptr);
    slack_end_ = std::exchange(other.slack_end_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    slot_ = std::exchange(other.slot_, -1);
    name_ = other.name_;
  }
  return *this;
}

void GuardedRegion::release() noexcept {
  // Unregistered first: the address range may be mapped again at once.
  unregisterGuardRegion(slot_);
  slot_ = -1;
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
  mapping_ = slack_begin_ = slack_end_ = data_ = nullptr;
  mapping_bytes_ = bytes_ = 0;
}

std::optional<std::string> GuardedRegion::canaryDamage() const {
  if (mapping_ == nullptr) return std::nullopt;
  const auto intact = [](std::byte b) { return b == std::byte{kCanaryByte}; };
  std::vector<std::string> lines;
  for (const std::byte* p = slack_begin_; p < data_; ++p)
    if (!intact(*p)) {
      lines.push_back(canaryLine(name_, GuardSide::BeforeStart, std::size_t(data_ - p)));
      break;
    }
  const std::byte* end = data_ + bytes_;
  for (const std::byte* p = slack_end_; p > end; --p)
    if (!intact(p[-1])) {
      lines.push_back(canaryLine(name_, GuardSide::PastEnd, std::size_t(p - end)));
      break;
    }
  if (lines.empty()) return std::nullopt;
  return lines.size() == 1 ? lines[0] : lines[0] + "; " + lines[1];
}

}  // namespace nkbench
