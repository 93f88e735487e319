#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "harness/core/memory/guard_registry.h"

namespace nkbench {
namespace {

// A made-up region: a 4 KiB guard, 100 data bytes at 0x11040, a guard after.
GuardRegion sampleRegion(BufferName name) { return {0x10000, 0x11040, 0x110a4, 0x13000, name}; }

class RegisteredRegion {
 public:
  explicit RegisteredRegion(const GuardRegion& region) : slot_(registerGuardRegion(region)) {}
  ~RegisteredRegion() { unregisterGuardRegion(slot_); }
  RegisteredRegion(const RegisteredRegion&) = delete;
  RegisteredRegion& operator=(const RegisteredRegion&) = delete;
  int slot() const { return slot_; }

 private:
  int slot_;
};

const void* at(std::uintptr_t address) { return reinterpret_cast<const void*>(address); }

TEST(GuardRegistry, FindsTheSideAndDistanceOfAnAddressOutsideTheData) {
  const RegisteredRegion region(sampleRegion({"A", 2}));
  ASSERT_GE(region.slot(), 0);
  GuardHit hit;
  ASSERT_TRUE(findGuardHit(at(0x110a4), &hit));
  EXPECT_STREQ(hit.buffer.operand, "A");
  EXPECT_EQ(hit.buffer.operand_set, 2);
  EXPECT_EQ(hit.side, GuardSide::PastEnd);
  EXPECT_EQ(hit.distance, 1u);
  ASSERT_TRUE(findGuardHit(at(0x12fff), &hit));
  EXPECT_EQ(hit.distance, 0x12fffu - 0x110a4u + 1);
  ASSERT_TRUE(findGuardHit(at(0x1103f), &hit));
  EXPECT_EQ(hit.side, GuardSide::BeforeStart);
  EXPECT_EQ(hit.distance, 1u);
  ASSERT_TRUE(findGuardHit(at(0x10000), &hit));
  EXPECT_EQ(hit.distance, 0x1040u);
}

TEST(GuardRegistry, IgnoresTheDataAndAddressesOutsideTheRegion) {
  const RegisteredRegion region(sampleRegion({"B"}));
  GuardHit hit;
  EXPECT_FALSE(findGuardHit(at(0x11040), &hit));
  EXPECT_FALSE(findGuardHit(at(0x110a3), &hit));
  EXPECT_FALSE(findGuardHit(at(0xffff), &hit));
  EXPECT_FALSE(findGuardHit(at(0x13000), &hit));
}

TEST(GuardRegistry, ForgetsAnUnregisteredRegion) {
  GuardHit hit;
  {
    const RegisteredRegion region(sampleRegion({"C"}));
    EXPECT_TRUE(findGuardHit(at(0x110a4), &hit));
  }
  EXPECT_FALSE(findGuardHit(at(0x110a4), &hit));
}

TEST(GuardRegistry, ReusesFreedSlots) {
  const int first = RegisteredRegion(sampleRegion({"A"})).slot();
  const RegisteredRegion again(sampleRegion({"A"}));
  EXPECT_EQ(again.slot(), first);
}

TEST(GuardRegistry, FormatsAHitAsOneLine) {
  EXPECT_EQ(describeGuardHit({{"A", -1}, GuardSide::PastEnd, 16, GuardAccess::Unknown}),
            "out of bounds: 16 bytes past the end of A");
  EXPECT_EQ(describeGuardHit({{"C", 3}, GuardSide::BeforeStart, 1, GuardAccess::Write}),
            "out of bounds: a write 1 byte before the start of C of operand set 3");
  EXPECT_EQ(describeGuardHit({{"B", 0}, GuardSide::PastEnd, 4096, GuardAccess::Read}),
            "out of bounds: a read 4096 bytes past the end of B of operand set 0");
}

TEST(GuardRegistry, FormattingCutsShortToFitAndTerminates) {
  std::array<char, 12> line;
  line.fill('x');
  const std::size_t length = formatGuardHit({{"A"}, GuardSide::PastEnd, 1, GuardAccess::Unknown}, line);
  EXPECT_EQ(length, 11u);
  EXPECT_STREQ(line.data(), "out of boun");
  EXPECT_EQ(formatGuardHit({}, std::span<char>()), 0u);
}

TEST(GuardRegistry, AccessIsUnknownWithoutASignalContext) { EXPECT_EQ(faultAccess(nullptr), GuardAccess::Unknown); }

}  // namespace
}  // namespace nkbench
