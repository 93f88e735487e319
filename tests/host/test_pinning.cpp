#include <gtest/gtest.h>

#include <sched.h>

#include "harness/host/pinning.h"

namespace nkbench {
namespace {

TEST(Pinning, PinsToTheCurrentCpu) {
  const int cpu = currentCpu();
  ASSERT_GE(cpu, 0);
  std::string error;
  ASSERT_TRUE(pinCurrentThreadToCpu(cpu, &error)) << error;
  EXPECT_EQ(currentCpu(), cpu);
}

TEST(Pinning, ExplainsAnImpossibleCpu) {
  std::string error;
  EXPECT_FALSE(pinCurrentThreadToCpu(-1, &error));
  EXPECT_NE(error.find("CPU -1"), std::string::npos) << error;
  EXPECT_FALSE(pinCurrentThreadToCpu(CPU_SETSIZE - 1, &error));
  EXPECT_NE(error.find("cannot pin to CPU"), std::string::npos) << error;
  EXPECT_FALSE(pinCurrentThreadToCpu(CPU_SETSIZE - 1, nullptr));  // error is optional
}

}  // namespace
}  // namespace nkbench
