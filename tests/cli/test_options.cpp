// The option parsers shared by the commands, on bad values.
#include <gtest/gtest.h>

#include <string>

#include "harness/cli/isa_option.h"
#include "harness/cli/shard_option.h"
#include "harness/core/error.h"

namespace nkbench::cli {
namespace {

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

}  // namespace
}  // namespace nkbench::cli
