// How `tune` updates its file: tunes writing one file at once keep each other's
// classes, and a file that does not hold here is replaced at the default path
// (with why) but refused when named.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/core/error.h"
#include "harness/tune/tuning_update.h"

namespace nkbench {
namespace {

namespace fs = std::filesystem;

TuningHost host() { return {"Some CPU", {"avx2", "fma", "avx512f"}, CacheSizes{48 * 1024, 1 << 20, 32 << 20}}; }
TuningBuild build() { return {"0.1", "MLIR 22.1.8"}; }

TunedClass tuned(const std::string& shape_class, const std::string& schedule = "avx512.f32.12x32") {
  TunedClass t;
  t.isa = "avx512";
  t.shape_class = shape_class;
  t.schedule = schedule;
  t.analytic_schedules = {"avx512.f32.8x32"};
  t.gflops = 90;
  t.analytic_gflops = 80;
  t.suite = "s";
  t.cases = {"a"};
  return t;
}

class TuningUpdate : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = (fs::temp_directory_path() / "nkbench-tuning-update-XXXXXX").string();
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    dir_ = dir;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path path() const { return dir_ / "nkbench" / "tuning.json"; }
  std::string text() const {
    std::ifstream in(path());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  fs::path dir_;
};

// Every f32 shape class (81): kinds, then rows, columns and footprints.
std::vector<std::string> f32ShapeClasses() {
  std::vector<std::string> classes;
  for (const char* kind : {"brgemm", "gemm", "mlp"})
    for (const char* rows : {"m1-7", "m8-31", "m32+"})
      for (const char* columns : {"n1-15", "n16-63", "n64+"})
        for (const char* footprint : {"l1", "l2", "mem"})
          classes.push_back(fmt::format("{} f32 {} {} {}", kind, rows, columns, footprint));
  return classes;
}

TEST_F(TuningUpdate, TunesWritingOneFileAtOnceKeepEachOthersClasses) {
  constexpr int kTunes = 4;
  constexpr int kClassesEach = 20;
  const std::vector<std::string> classes = f32ShapeClasses();
  ASSERT_GE(classes.size(), std::size_t(kTunes * kClassesEach));
  const auto classOf = [&](int tune, int index) { return classes[std::size_t(tune * kClassesEach + index)]; };
  std::vector<pid_t> children;
  for (int t = 0; t < kTunes; ++t) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      int status = 0;
      try {
        std::string replaced;
        for (int i = 0; i < kClassesEach; ++i)
          putTunedClass({path(), false}, tuned(classOf(t, i)), host(), build(), replaced);
      } catch (...) {
        status = 1;
      }
      _exit(status);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const Tuning tuning = readTuningFile(path());
  EXPECT_EQ(tuning.classes.size(), std::size_t(kTunes * kClassesEach));
  for (int t = 0; t < kTunes; ++t)
    EXPECT_NE(tuning.find("avx512", classOf(t, kClassesEach - 1)), nullptr);
}

TEST_F(TuningUpdate, AUsableFileKeepsItsClassesAndTakesThisBuild) {
  std::string replaced = "stale";
  EXPECT_TRUE(tuningToUpdate({path(), false}, host(), build(), replaced).classes.empty());  // no file yet
  EXPECT_TRUE(replaced.empty());
  putTunedClass({path(), false}, tuned("brgemm f32 m8-31 n16-63 l1"), host(), build(), replaced);
  const Tuning written =
      putTunedClass({path(), false}, tuned("gemm f32 m32+ n64+ mem"), host(), build(), replaced);
  EXPECT_EQ(written.classes.size(), 2u);
  const Tuning read = tuningToUpdate({path(), false}, host(), build(), replaced);
  EXPECT_TRUE(replaced.empty());
  ASSERT_EQ(read.classes.size(), 2u);
  EXPECT_EQ(read.host.cpu_model, "Some CPU");
  EXPECT_EQ(read.llvm_version, "MLIR 22.1.8");
  EXPECT_EQ(read.nkbench_version, "0.1");
}

TEST_F(TuningUpdate, AnUnusableFileIsReplacedAtTheDefaultPathAndRefusedWhenNamed) {
  // The file's text, and what the message must say about it.
  Tuning other_host;
  other_host.host = host();
  other_host.host.cpu_model = "Other CPU";
  other_host.nkbench_version = build().nkbench_version;
  other_host.llvm_version = build().llvm_version;
  Tuning old_build = other_host;
  old_build.host = host();
  old_build.nkbench_version = "0.0-old";
  Tuning bad_schedule = other_host;
  bad_schedule.host = host();
  bad_schedule.put(tuned("brgemm f32 m8-31 n16-63 l1", "avx512.f32.8x32:rows=tall"));
  const struct {
    std::string text, why;
  } unusable[] = {
      {R"({"nkbench_tuning": 99})", "format 99"},
      {tuningText(old_build).substr(0, 40), "not valid JSON"},
      {tuningText(other_host), "not for this host: it was tuned on 'Other CPU'"},
      {tuningText(old_build), "tuned with nkbench 0.0-old"},
      {tuningText(bad_schedule), "tuned schedule avx512.f32.8x32:rows=tall (" + path().string()},
  };
  for (const auto& [text, why] : unusable) {
    fs::create_directories(path().parent_path());
    std::ofstream(path()) << text;
    std::string replaced;
    try {
      tuningToUpdate({path(), false}, host(), build(), replaced);
      ADD_FAILURE() << "a named file that does not hold here was updated: " << why;
    } catch (const Error& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.rfind("the tuning file " + path().string() + " cannot be updated: ", 0), 0u) << message;
      EXPECT_NE(message.find(why), std::string::npos) << message;
      EXPECT_NE(message.find("remove it, or tune into another file (--out)"), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
    EXPECT_THROW(putTunedClass({path(), false}, tuned("gemm f32 m32+ n64+ mem"), host(), build(), replaced), Error);
    EXPECT_EQ(this->text(), text) << "a refused file was changed";

    EXPECT_TRUE(tuningToUpdate({path(), true}, host(), build(), replaced).classes.empty());
    EXPECT_EQ(replaced.rfind("replacing the tuning file " + path().string() + ": ", 0), 0u) << replaced;
    EXPECT_NE(replaced.find(why), std::string::npos) << replaced;
    const Tuning written = putTunedClass({path(), true}, tuned("gemm f32 m32+ n64+ mem"), host(), build(), replaced);
    EXPECT_FALSE(replaced.empty());
    ASSERT_EQ(written.classes.size(), 1u);
    EXPECT_EQ(readTuningFile(path()).classes.size(), 1u);
    EXPECT_FALSE(tuningUnusable(readTuningFile(path()), path().string(), host(), build()));
  }
}

}  // namespace
}  // namespace nkbench
