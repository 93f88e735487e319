// Out-of-bounds accesses on purpose, each in a death-test child: the access
// must fault, and a SIGSEGV handler (as the runner's crash isolation installs)
// must name the buffer, the side and the distance.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "harness/core/memory/guarded_buffer.h"

namespace nkbench {
namespace {

// Writes the guard hit of the fault to stderr; SA_RESETHAND then lets the
// faulting access, run again on return, end the process with SIGSEGV.
void reportGuardHit(int /*signal*/, siginfo_t* info, void* context) {
  std::array<char, 160> line{};
  std::size_t length = 0;
  GuardHit hit;
  if (findGuardHit(info->si_addr, &hit)) {
    hit.access = faultAccess(context);
    length = formatGuardHit(hit, line);
  } else {
    static constexpr char kNoHit[] = "no guard hit";
    std::memcpy(line.data(), kNoHit, sizeof kNoHit - 1);
    length = sizeof kNoHit - 1;
  }
  line[length] = '\n';
  (void)!write(STDERR_FILENO, line.data(), length + 1);
}

void installGuardReporter() {
  struct sigaction action {};
  action.sa_sigaction = reportGuardHit;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, nullptr);
}

std::size_t pageBytes() { return std::size_t(sysconf(_SC_PAGESIZE)); }

// The byte `offset` bytes from the start of the buffer's data (negative: before it).
volatile std::byte* byteAt(GuardedBuffer<float>& buffer, std::ptrdiff_t offset) {
  return reinterpret_cast<volatile std::byte*>(buffer.data()) + offset;
}

void writeAt(std::size_t floats, BufferName name, std::ptrdiff_t offset) {
  installGuardReporter();
  GuardedBuffer<float> buffer(floats, name);
  *byteAt(buffer, offset) = std::byte{0};
  std::fputs("no fault\n", stderr);
  std::exit(0);
}

void readAt(std::size_t floats, BufferName name, std::ptrdiff_t offset) {
  installGuardReporter();
  GuardedBuffer<float> buffer(floats, name);
  const std::byte value = *byteAt(buffer, offset);
  std::fprintf(stderr, "no fault (read %d)\n", int(value));
  std::exit(0);
}

class GuardFaultDeathTest : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(GuardFaultDeathTest, AWriteOneBytePastTheVectorSlackFaults) {
  // 16 floats end one vector (64 bytes) before the guard page.
  EXPECT_EXIT(writeAt(16, {"C"}, 64 + 64), testing::KilledBySignal(SIGSEGV),
              "out of bounds: a write 65 bytes past the end of C\n");
}

TEST_F(GuardFaultDeathTest, AWriteOneBytePastTheAlignmentSlackFaults) {
  // 17 floats end 60 + 64 bytes before the guard page; those are the canary's.
  EXPECT_EXIT(writeAt(17, {"C", 4}, 68 + 60 + 64), testing::KilledBySignal(SIGSEGV),
              "out of bounds: a write 125 bytes past the end of C of operand set 4\n");
}

TEST_F(GuardFaultDeathTest, AWriteOneByteBeforeTheStartFaults) {
  // A page less the vector slack: the data starts right after the leading guard.
  EXPECT_EXIT(writeAt((pageBytes() - kVectorSlackBytes) / sizeof(float), {"A", 2}, -1), testing::KilledBySignal(SIGSEGV),
              "out of bounds: a write 1 byte before the start of A of operand set 2\n");
}

TEST_F(GuardFaultDeathTest, AReadPastTheEndFaults) {
  EXPECT_EXIT(readAt(16, {"B"}, 64 + 64 + 15), testing::KilledBySignal(SIGSEGV),
              "out of bounds: a read 80 bytes past the end of B\n");
}

TEST_F(GuardFaultDeathTest, AReadBeforeTheStartFaults) {
  EXPECT_EXIT(readAt((2 * pageBytes() - kVectorSlackBytes) / sizeof(float), {"A"}, -8), testing::KilledBySignal(SIGSEGV),
              "out of bounds: a read 8 bytes before the start of A\n");
}

TEST_F(GuardFaultDeathTest, AnOverrunFarIntoTheGuardIsStillNamed) {
  EXPECT_EXIT(writeAt(16, {"B", 0}, 64 + 40000), testing::KilledBySignal(SIGSEGV),
              "out of bounds: a write 40001 bytes past the end of B of operand set 0\n");
}

TEST_F(GuardFaultDeathTest, AnAccessInsideTheDataDoesNotFault) {
  // The helpers exit normally when nothing faults: a death test of them can fail.
  EXPECT_EXIT(writeAt(16, {"C"}, 63), testing::ExitedWithCode(0), "no fault\n");
  EXPECT_EXIT(readAt(16, {"C"}, 0), testing::ExitedWithCode(0), "no fault");
}

TEST_F(GuardFaultDeathTest, AVectorPastTheEndStaysMapped) {
  // Where the masked-off lanes of an edge vector land: slack, not guard.
  EXPECT_EXIT(readAt(16, {"C"}, 64 + 63), testing::ExitedWithCode(0), "no fault");
}

}  // namespace
}  // namespace nkbench
