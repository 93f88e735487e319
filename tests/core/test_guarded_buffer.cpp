#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "harness/core/memory/guarded_buffer.h"

namespace nkbench {
namespace {

std::uintptr_t addressOf(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
std::size_t pageBytes() { return std::size_t(sysconf(_SC_PAGESIZE)); }

std::byte* endOf(GuardedBuffer<float>& buffer) { return reinterpret_cast<std::byte*>(buffer.data() + buffer.size()); }

TEST(GuardedBuffer, IsAlignedZeroedAndEndsOneVectorAndAtMostAnAlignmentBeforeTheGuard) {
  for (const std::size_t count : {1u, 16u, 17u, 1000u, 1024u, 5000u}) {
    GuardedBuffer<float> buffer(count, {"A"});
    ASSERT_EQ(buffer.size(), count);
    EXPECT_EQ(addressOf(buffer.data()) % kGuardedAlignment, 0u) << count;
    const std::size_t slack =
        kVectorSlackBytes + (kGuardedAlignment - count * sizeof(float) % kGuardedAlignment) % kGuardedAlignment;
    EXPECT_EQ((addressOf(endOf(buffer)) + slack) % pageBytes(), 0u) << count;
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(buffer[i], 0.0f) << i;
  }
}

TEST(GuardedBuffer, CopiesTheValuesItIsMadeFrom) {
  const std::vector<float> values = {1.5f, -2.0f, 3.25f};
  const GuardedBuffer<float> buffer(std::span<const float>(values), {"B"});
  EXPECT_EQ(std::vector<float>(buffer.begin(), buffer.end()), values);
}

TEST(GuardedBuffer, ItsGuardsNameTheBuffer) {
  GuardedBuffer<float> buffer(17, {"C", 5});
  GuardHit hit;
  ASSERT_TRUE(findGuardHit(endOf(buffer), &hit));
  EXPECT_STREQ(hit.buffer.operand, "C");
  EXPECT_EQ(hit.buffer.operand_set, 5);
  EXPECT_EQ(hit.side, GuardSide::PastEnd);
  EXPECT_EQ(hit.distance, 1u);
  ASSERT_TRUE(findGuardHit(endOf(buffer) + 60 + 100, &hit));  // 60 bytes of slack, then the guard page
  EXPECT_EQ(hit.distance, 161u);
  ASSERT_TRUE(findGuardHit(reinterpret_cast<std::byte*>(buffer.data()) - pageBytes(), &hit));
  EXPECT_EQ(hit.side, GuardSide::BeforeStart);
  EXPECT_EQ(hit.distance, pageBytes());
  EXPECT_FALSE(findGuardHit(buffer.data() + 16, &hit));
}

TEST(GuardedBuffer, IsForgottenOnceFreed) {
  const void* end = nullptr;
  {
    GuardedBuffer<float> buffer(16, {"A"});
    end = endOf(buffer);
  }
  GuardHit hit;
  EXPECT_FALSE(findGuardHit(end, &hit));
}

TEST(GuardedBuffer, MovingKeepsTheRegionAndEmptiesTheSource) {
  GuardedBuffer<float> source(16, {"B"});
  source[3] = 7.0f;
  const float* data = source.data();
  GuardedBuffer<float> moved(std::move(source));
  EXPECT_EQ(moved.data(), data);
  EXPECT_EQ(moved[3], 7.0f);
  EXPECT_TRUE(source.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
  EXPECT_EQ(source.data(), nullptr);
  GuardHit hit;
  ASSERT_TRUE(findGuardHit(endOf(moved), &hit));
  EXPECT_STREQ(hit.buffer.operand, "B");
  GuardedBuffer<float> assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.data(), data);
  EXPECT_TRUE(findGuardHit(endOf(assigned), &hit));
}

TEST(GuardedBuffer, EmptyHasNoMemoryAndNoDamage) {
  const GuardedBuffer<float> buffer(0, {"A"});
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_FALSE(buffer.canaryDamage());
}

TEST(GuardedBufferCanary, AnUntouchedBufferHasNoDamage) {
  GuardedBuffer<float> buffer(17, {"C"});
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = float(i);  // writes inside are fine
  EXPECT_EQ(buffer.canaryDamage(), std::nullopt);
}

TEST(GuardedBufferCanary, CatchesAWriteIntoTheSlackPastTheEnd) {
  GuardedBuffer<float> buffer(17, {"C"});  // 68 bytes: 60 bytes of slack before the guard page
  endOf(buffer)[0] = std::byte{0};
  EXPECT_EQ(buffer.canaryDamage(), "out of bounds: a write 1 byte past the end of C");
  endOf(buffer)[3] = std::byte{0};
  EXPECT_EQ(buffer.canaryDamage(), "out of bounds: a write 4 bytes past the end of C");
}

TEST(GuardedBufferCanary, CatchesTheLastSlackByteBeforeTheGuard) {
  GuardedBuffer<float> buffer(17, {"A", 7});
  endOf(buffer)[59] = std::byte{0x7f};
  EXPECT_EQ(buffer.canaryDamage(), "out of bounds: a write 60 bytes past the end of A of operand set 7");
}

TEST(GuardedBufferCanary, CatchesAWriteBeforeTheStartWithinTheFirstPage) {
  GuardedBuffer<float> buffer(17, {"B"});
  reinterpret_cast<std::byte*>(buffer.data())[-2] = std::byte{0};
  EXPECT_EQ(buffer.canaryDamage(), "out of bounds: a write 2 bytes before the start of B");
  endOf(buffer)[0] = std::byte{1};
  EXPECT_EQ(buffer.canaryDamage(),
            "out of bounds: a write 2 bytes before the start of B; out of bounds: a write 1 byte past the end of B");
}

TEST(GuardedBuffer, ManyBuffersAreEachNamed) {
  // As many as a cold-cache case's A, B and C of 1024 operand sets.
  std::vector<GuardedBuffer<float>> buffers;
  for (int set = 0; set < 3 * 1024; ++set) buffers.emplace_back(std::size_t(1 + set % 40), BufferName{"A", set});
  for (int set = 0; set < 3 * 1024; ++set) {
    GuardHit hit;
    ASSERT_TRUE(findGuardHit(endOf(buffers[std::size_t(set)]), &hit)) << set;
    ASSERT_EQ(hit.buffer.operand_set, set);
  }
}

}  // namespace
}  // namespace nkbench
