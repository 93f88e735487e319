// Report files are replaced whole; links and pipes given as the path are kept.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include "harness/core/error.h"
#include "harness/report/atomic_file.h"
#include "tests/support/file_text.h"

namespace nkbench {
namespace {

namespace fs = std::filesystem;
using test::fileText;

struct TemporaryFolder {
  fs::path path = fs::temp_directory_path() / ("nk-atomic-" + std::to_string(::getpid()));
  TemporaryFolder() { fs::create_directories(path); }
  ~TemporaryFolder() { fs::remove_all(path); }
};

TEST(AtomicFile, ALinkStaysAndItsTargetIsReplaced) {
  const TemporaryFolder folder;
  const fs::path target = folder.path / "report.json", link = folder.path / "latest.json";
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  replaceFileAtomically(link, "new", "JSON report");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fileText(target), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(folder.path), fs::directory_iterator()), 2);  // no leftovers
}

TEST(AtomicFile, AFifoIsWrittenThroughNotReplaced) {
  const TemporaryFolder folder;
  const fs::path fifo = folder.path / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::future<std::string> reader = std::async(std::launch::async, [&] { return fileText(fifo); });
  replaceFileAtomically(fifo, "through the pipe", "JSON report");
  EXPECT_EQ(reader.get(), "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
}

// A merged or compared report written over one of its inputs destroyed it.
TEST(AtomicFile, AnOutputThatIsAnInputIsRefused) {
  const TemporaryFolder folder;
  const fs::path shard = folder.path / "s1.json", other = folder.path / "s2.json";
  std::ofstream(shard) << "{}";
  std::ofstream(other) << "{}";
  const std::vector<std::string> inputs = {shard.string(), other.string()};
  EXPECT_NO_THROW(requireNotAnInput("--json", (folder.path / "merged.json").string(), inputs));
  EXPECT_NO_THROW(requireNotAnInput("--json", "", inputs));
  const std::string same_file_elsewhere = (folder.path / "." / "s2.json").string();
  try {
    requireNotAnInput("--json", same_file_elsewhere, inputs);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "--json " + same_file_elsewhere + " is an input of this command: writing "
                                         "it would destroy it");
  }
}

TEST(AtomicFile, AFailureNamesThePathGiven) {
  const TemporaryFolder folder;
  const fs::path missing = folder.path / "no-such-folder" / "x.json";
  try {
    replaceFileAtomically(missing, "text", "JSON report");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind(missing.string() + ": cannot write JSON report: ", 0), 0u) << error.what();
  }
}

}  // namespace
}  // namespace nkbench
