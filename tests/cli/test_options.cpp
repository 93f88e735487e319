// The option parsers shared by the commands, on bad values.
#include <gtest/gtest.h>

#include <string>

#include "harness/cli/isa_option.h"
#include "harness/cli/number_options.h"
#include "harness/cli/shard_option.h"
#include "harness/core/error.h"

namespace nkbench::cli {
namespace {

// What `check` says of `text`: "" when it accepts it.
std::string refusal(const CLI::Validator& check, std::string text) { return check(text); }

// The message of the Error that `parse` throws, or "" when it throws none.
template <typename Parse>
std::string errorOf(Parse&& parse) {
  try {
    parse();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(Options, AnIsaWithControlCharactersIsRefusedInOneLine) {
  const std::string text("\n\0\0\0" "12", 6);
  const std::string message = errorOf([&] { parseIsaOption(text); });
  EXPECT_EQ(message, "--isa '\\n\\x00\\x00\\x0012': expected auto, avx2, avx512, avx512-bf16, amx-emulated or amx");
}

TEST(Options, AShardWithANewlineIsRefusedInOneLine) {
  const std::string message = errorOf([] { parseShardOption(std::string("1/\n2")); });
  EXPECT_EQ(message.rfind("--shard '1/\\n2': ", 0), 0u) << message;
}

// "nan" passed CLI11's PositiveNumber: --min-time nan aborted in google/benchmark.
TEST(Options, PositiveNumbersAreFinite) {
  for (const char* bad : {"nan", "-nan", "inf", "infinity", "1e400", "0", "-1"})
    EXPECT_NE(refusal(positiveNumber(), bad), "") << bad;
  for (const char* good : {"0.1", "1e-9", "5", "1e300"}) EXPECT_EQ(refusal(positiveNumber(), good), "") << good;
  EXPECT_NE(refusal(positiveNumber(), "nan").find("not a finite number"), std::string::npos);
}

TEST(Options, FractionsAreFiniteAndWithinZeroAndOne) {
  for (const char* bad : {"nan", "inf", "-0.01", "1.01"}) EXPECT_NE(refusal(fraction(), bad), "") << bad;
  for (const char* good : {"0", "0.05", "1"}) EXPECT_EQ(refusal(fraction(), good), "") << good;
}

// 2.6e62 MiB overflowed the conversion to bytes (undefined behaviour).
TEST(Options, ColdMibIsBoundedSoItsBytesFit) {
  for (const char* bad : {"266666666666666666666666666666666666666666666666666666666666666", "inf", "nan", "-1",
                          "1048577"})
    EXPECT_NE(refusal(coldMib(), bad), "") << bad;
  for (const char* good : {"0", "64", "1048576"}) EXPECT_EQ(refusal(coldMib(), good), "") << good;
  EXPECT_EQ(coldRotationBytes(0), 0);
  EXPECT_EQ(coldRotationBytes(64), 64 << 20);
  EXPECT_EQ(coldRotationBytes(kMaxColdMib), std::int64_t{1} << 40);
}

// 1e16 s overflowed the deadline's milliseconds: every case timed out at once.
TEST(Options, CaseTimeoutIsBoundedSoItsDeadlineFits) {
  for (const char* bad : {"1e16", "inf", "nan", "-1", "604801"}) EXPECT_NE(refusal(caseTimeout(), bad), "") << bad;
  for (const char* good : {"0", "2", "600", "604800"}) EXPECT_EQ(refusal(caseTimeout(), good), "") << good;
}

}  // namespace
}  // namespace nkbench::cli
