// Tuning files: what they hold reads back, bad content is an error naming the
// key, and a file is used only on the host it was measured on.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/core/error.h"
#include "harness/tune/tuning_file.h"
#include "harness/tune/tuning_selection.h"
#include "kernels/mlir/route_choice.h"
#include "kernels/mlir/tuning/shape_class.h"

namespace nkbench {
namespace {

namespace fs = std::filesystem;

fs::path tempFile(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("nkbench-tuning-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

TuningHost host() { return {"Some CPU", {"avx2", "fma", "avx512f"}, CacheSizes{48 * 1024, 1 << 20, 32 << 20}}; }
// The build the sample was tuned with; selections below are made as this build's.
TuningBuild build() { return {"0.1", "MLIR 22.1.8"}; }

TunedClass tuned(const std::string& isa, const std::string& shape_class, const std::string& schedule) {
  TunedClass t;
  t.isa = isa;
  t.shape_class = shape_class;
  t.schedule = schedule;
  t.analytic_schedules = {"avx512.f32.8x32", "avx512.f32.8x32"};
  t.gflops = 90;
  t.analytic_gflops = 80;
  t.suite = "s";
  t.cases = {"a", "b"};
  t.measured = {{"avx512.f32.8x32", 80, "passed"}, {schedule, 90, "passed"}, {"avx512.f32.1x16", 0, "failed on a: x"}};
  return t;
}

Tuning sample() {
  Tuning tuning;
  tuning.host = host();
  tuning.llvm_version = build().llvm_version;
  tuning.nkbench_version = build().nkbench_version;
  tuning.created = "2026-12-03T00:00:00Z";
  tuning.put(tuned("avx512", "brgemm f32 m8-31 n16-63 l1", "avx512.f32.12x32"));
  tuning.put(tuned("avx512-bf16", "brgemm f32 m8-31 n16-63 l1", "avx512.f32.16x16"));
  return tuning;
}

// Environment variables the selection reads, set for one test and restored.
// XDG_CACHE_HOME is a fresh, empty directory per test, removed after it: a
// directory named by the process id alone could be a recycled id's, holding
// the tuning file an earlier test process wrote there.
class TuningEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"NKBENCH_TUNING", "XDG_CACHE_HOME"})
      if (const char* value = std::getenv(name)) saved_.emplace_back(name, value);
    std::string xdg = (fs::temp_directory_path() / "nkbench-tuning-xdg-XXXXXX").string();
    ASSERT_NE(mkdtemp(xdg.data()), nullptr);
    xdg_ = xdg;
    unsetenv("NKBENCH_TUNING");
    setenv("XDG_CACHE_HOME", xdg_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("NKBENCH_TUNING");
    unsetenv("XDG_CACHE_HOME");
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
    if (!xdg_.empty()) fs::remove_all(xdg_);
  }
  const fs::path& xdg() const { return xdg_; }

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
  fs::path xdg_;
};

TEST(TuningFile, WhatIsWrittenReadsBack) {
  const fs::path path = tempFile("round-trip/tuning.json");
  writeTuningFile(path, sample());
  const Tuning read = readTuningFile(path);
  EXPECT_EQ(read.host.cpu_model, "Some CPU");
  EXPECT_EQ(read.host.isa_flags, host().isa_flags);
  EXPECT_EQ(read.host.caches.l1d_bytes, 48 * 1024);
  ASSERT_EQ(read.classes.size(), 2u);
  const TunedClass* t = read.find("avx512-bf16", "brgemm f32 m8-31 n16-63 l1");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->schedule, "avx512.f32.16x16");
  ASSERT_EQ(t->measured.size(), 3u);
  EXPECT_EQ(t->measured[2].status, "failed on a: x");
  EXPECT_EQ(read.find("avx2", "brgemm f32 m8-31 n16-63 l1"), nullptr);
}

TEST(TuningFile, PutReplacesTheSameClassOnly) {
  Tuning tuning = sample();
  tuning.put(tuned("avx512", "brgemm f32 m8-31 n16-63 l1", "avx512.f32.4x64"));
  tuning.put(tuned("avx512", "gemm f32 m32+ n64+ mem", "avx512.f32.8x32:gemm=128x32x256"));
  ASSERT_EQ(tuning.classes.size(), 3u);
  EXPECT_EQ(tuning.find("avx512", "brgemm f32 m8-31 n16-63 l1")->schedule, "avx512.f32.4x64");
  EXPECT_EQ(tuning.find("avx512-bf16", "brgemm f32 m8-31 n16-63 l1")->schedule, "avx512.f32.16x16");
}

TEST(TuningFile, BadContentNamesTheFileAndTheKey) {
  auto error = [](const std::string& text) {
    const fs::path path = tempFile("bad.json");
    std::ofstream(path) << text;
    try {
      readTuningFile(path);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error("[]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error(R"({"nkbench_tuning": 3})").find("format 3, this nkbench reads formats 1 to 2"), std::string::npos);
  EXPECT_NE(error(R"({"nkbench_tuning": 1})").find("'host'"), std::string::npos);
  fs::path good = tempFile("good.json");
  writeTuningFile(good, sample());
  std::ifstream in(good);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string wrong_type = std::string(text).replace(text.find("\"gflops\": 90.0"), 14, "\"gflops\": \"90\"");
  const std::string message = error(wrong_type);
  EXPECT_NE(message.find("'gflops' must be a number"), std::string::npos) << message;
  EXPECT_NE(message.find("bad.json"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_NE(error("{}").find("'nkbench_tuning' is missing"), std::string::npos);
  // Speeds are finite and not negative; a number past double's range is no JSON number here.
  const std::string negative = std::string(text).replace(text.find("\"gflops\": 90.0"), 14, "\"gflops\": -1");
  EXPECT_NE(error(negative).find("'gflops' is -1, not a speed"), std::string::npos) << error(negative);
  const std::string huge = std::string(text).replace(text.find("\"gflops\": 90.0"), 14, "\"gflops\": 1e400");
  EXPECT_NE(error(huge).find("number overflow"), std::string::npos) << error(huge);
  const std::string no_cache = std::string(text).replace(text.find("\"l1d_bytes\": 49152"), 18, "\"l1d_bytes\": 0");
  EXPECT_NE(error(no_cache).find("'l1d_bytes' is 0, not a cache size"), std::string::npos) << error(no_cache);
  EXPECT_NE(error(fs::path(good).replace_filename("absent.json").string()).find("not valid JSON"), std::string::npos);
}

// Which of two entries served the class would depend on their order in the file.
TEST(TuningFile, AClassTunedTwiceAtOneLevelIsRefusedByName) {
  Tuning twice = sample();
  twice.classes.push_back(tuned("avx512", "brgemm f32 m8-31 n16-63 l1", "avx512.f32.4x64"));
  try {
    parseTuning(tuningText(twice), "twice.json");
    ADD_FAILURE() << "a class tuned twice was read";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "tuning file twice.json: class 'brgemm f32 m8-31 n16-63 l1' is tuned twice under avx512");
  }
  EXPECT_EQ(parseTuning(tuningText(sample()), "levels.json").classes.size(), 2u);  // one class, two levels
}

TEST(TuningFile, AnotherHostIsAMismatchWithWhy) {
  EXPECT_FALSE(tuningHostMismatch(host(), host()));
  TuningHost other = host();
  other.cpu_model = "Other CPU";
  EXPECT_NE(tuningHostMismatch(host(), other)->find("'Other CPU'"), std::string::npos);
  other = host();
  other.isa_flags.pop_back();  // a host class mask, say
  EXPECT_NE(tuningHostMismatch(host(), other)->find("ISA flags"), std::string::npos);
  other = host();
  other.caches.l2_bytes *= 2;
  EXPECT_NE(tuningHostMismatch(host(), other)->find("caches"), std::string::npos);
}

TEST_F(TuningEnvironment, NoneAndAnAbsentDefaultMeanTheAnalyticSchedules) {
  EXPECT_TRUE(selectTuning("none", Isa::Avx512, host(), build()).file.empty());
  const TuningSelection absent = selectTuning("auto", Isa::Avx512, host(), build());
  EXPECT_TRUE(absent.file.empty());
  EXPECT_TRUE(absent.warning.empty());
}

TEST_F(TuningEnvironment, TheDefaultFileIsFoundAndGivesTheRunsLevel) {
  writeTuningFile(defaultTuningPath(), sample());
  EXPECT_EQ(defaultTuningPath(), xdg() / "nkbench" / "tuning.json");
  const TuningSelection found = selectTuning("auto", Isa::Avx512, host(), build());
  EXPECT_EQ(found.file, defaultTuningPath().string());
  ASSERT_EQ(found.by_class.size(), 1u);
  EXPECT_EQ(found.by_class.at("brgemm f32 m8-31 n16-63 l1"), "avx512.f32.12x32");
  EXPECT_TRUE(selectTuning("auto", Isa::Avx2, host(), build()).by_class.empty());
  // NKBENCH_TUNING=none switches a found file off.
  setenv("NKBENCH_TUNING", "none", 1);
  EXPECT_TRUE(selectTuning("auto", Isa::Avx512, host(), build()).file.empty());
}

TEST_F(TuningEnvironment, AFoundFileOfAnotherHostIsSkippedWithAWarning) {
  Tuning other = sample();
  other.host.cpu_model = "Other CPU";
  writeTuningFile(defaultTuningPath(), other);
  const TuningSelection found = selectTuning("auto", Isa::Avx512, host(), build());
  EXPECT_TRUE(found.file.empty());
  EXPECT_NE(found.warning.find("not used"), std::string::npos);
  EXPECT_NE(found.warning.find("Other CPU"), std::string::npos);
  std::ofstream(defaultTuningPath()) << "{ broken";
  EXPECT_NE(selectTuning("auto", Isa::Avx512, host(), build()).warning.find("not valid JSON"), std::string::npos);
}

TEST_F(TuningEnvironment, AGivenFileOfAnotherHostIsAnError) {
  Tuning other = sample();
  other.host.cpu_model = "Other CPU";
  const fs::path path = tempFile("other.json");
  writeTuningFile(path, other);
  try {
    selectTuning(path.string(), Isa::Avx512, host(), build());
    FAIL() << "a tuning of another host was used";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("--tuning " + path.string() + ": not for this host"), std::string::npos);
  }
  setenv("NKBENCH_TUNING", path.c_str(), 1);
  EXPECT_THROW(selectTuning("auto", Isa::Avx512, host(), build()), Error);
  EXPECT_THROW(selectTuning(tempFile("absent.json").string(), Isa::Avx512, host(), build()), Error);
}

// A file whose class holds `schedule` tuned under `isa`, at the default path.
fs::path withSchedule(const std::string& isa, const std::string& shape_class, const std::string& schedule) {
  Tuning tuning = sample();
  tuning.put(tuned(isa, shape_class, schedule));
  writeTuningFile(defaultTuningPath(), tuning);
  return defaultTuningPath();
}

std::string selectionError(const std::string& option) {
  try {
    selectTuning(option, Isa::Avx512, host(), build());
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST_F(TuningEnvironment, AScheduleThatDoesNotFitItsClassIsNamedWithFileAndClass) {
  const std::string f32 = "brgemm f32 m8-31 n16-63 l1";
  const struct {
    std::string isa, shape_class, schedule, why;
  } bad[] = {
      {"avx512", f32, "avx512.f32.8x32:rows=tall", "the modifiers are"},
      {"avx512", f32, "nonsense", "unknown"},
      {"avx512", f32, "avx512.f32.8x32:prefetch=99", "prefetch=: 0 to 64"},
      {"avx512", f32, "avx512.bf16-widen.8x32", "is for bf16, not f32"},
      {"avx512", f32, "", "the name is empty"},
      {"avx2", "gemm bf16 m32+ n64+ mem", "amx.bf16.32x32", "needs amx, above --isa avx2"},
      {"avx512", "brgemm f32", "avx512.f32.8x32", "is not a shape class"},
      {"avx512", "brgemm f32 m8-31 n16-64 l1", "avx512.f32.8x32", "is not a shape class"},
      {"avx512", "mlp f32 m32+ n64+ mem", "avx512.f32.8x32:epilogue=separate", "not a tuning"},
  };
  for (const auto& [isa, shape_class, schedule, why] : bad) {
    const fs::path path = withSchedule(isa, shape_class, schedule);
    const std::string named = "tuned schedule " + schedule + " (" + path.string() + ", class " + shape_class + ")";
    // Named: an error; found: a warning, and the analytic schedules.
    const std::string error = selectionError(path.string());
    EXPECT_NE(error.find(named), std::string::npos) << error;
    EXPECT_NE(error.find(why), std::string::npos) << error;
    EXPECT_EQ(error.find("--schedule"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    const TuningSelection found = selectTuning("auto", Isa::Avx512, host(), build());
    EXPECT_TRUE(found.file.empty()) << schedule;
    EXPECT_TRUE(found.by_class.empty()) << schedule;
    EXPECT_NE(found.warning.find("warning: tuning file " + path.string() + " not used: " + named), std::string::npos)
        << found.warning;
  }
  // Whatever fits its class is used, at any level the file holds.
  withSchedule("avx2", "gemm bf16 m32+ n64+ mem", "avx2.bf16-widen.6x16:gemm=96x64x256");
  EXPECT_TRUE(selectTuning("auto", Isa::Avx512, host(), build()).warning.empty());
  EXPECT_EQ(selectTuning("auto", Isa::Avx2, host(), build()).by_class.at("gemm bf16 m32+ n64+ mem"),
            "avx2.bf16-widen.6x16:gemm=96x64x256");
}

TEST_F(TuningEnvironment, AFileOfAnotherBuildIsNotUsed) {
  Tuning old = sample();
  old.nkbench_version = "0.0-old";
  old.llvm_version = "MLIR 19.1.0";
  writeTuningFile(defaultTuningPath(), old);
  const std::string why = "tuned with nkbench 0.0-old and MLIR 19.1.0, this is nkbench 0.1 with MLIR 22.1.8";
  const TuningSelection found = selectTuning("auto", Isa::Avx512, host(), build());
  EXPECT_TRUE(found.by_class.empty());
  EXPECT_NE(found.warning.find("not used: " + why), std::string::npos) << found.warning;
  EXPECT_NE(selectionError(defaultTuningPath().string()).find(why), std::string::npos);
  // Either version alone.
  old.nkbench_version = build().nkbench_version;
  writeTuningFile(defaultTuningPath(), old);
  EXPECT_NE(selectTuning("auto", Isa::Avx512, host(), build()).warning.find("MLIR 19.1.0"), std::string::npos);
  old = sample();
  old.nkbench_version = "0.2";
  writeTuningFile(defaultTuningPath(), old);
  EXPECT_NE(selectionError(defaultTuningPath().string()).find("nkbench 0.2"), std::string::npos);
  EXPECT_FALSE(tuningBuildMismatch(build(), build()));
}

TEST(TuningFile, AClassThatKeepsTheAnalyticRoutesSaysSoAndEachCasesRouteReadsBack) {
  Tuning tuning = sample();
  TunedClass kept = tuned("amx-emulated", "brgemm bf16 m32+ n64+ l1", kAnalyticSchedule);
  kept.analytic_schedules = {"amx.bf16.32x32", "avx512bf16.bf16.8x32"};
  tuning.put(kept);
  const std::string text = tuningText(tuning);
  EXPECT_NE(text.find("\"schedule\": \"analytic\""), std::string::npos) << text;
  const Tuning read = parseTuning(text, "t.json");
  const TunedClass* t = read.find("amx-emulated", "brgemm bf16 m32+ n64+ l1");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->keepsAnalytic());
  EXPECT_EQ(t->analytic_schedules, kept.analytic_schedules);
  EXPECT_FALSE(read.find("avx512", "brgemm f32 m8-31 n16-63 l1")->keepsAnalytic());
  // One analytic route per case.
  std::string short_list = text;
  short_list.replace(short_list.find("\"avx512bf16.bf16.8x32\""), 22, "");
  short_list.replace(short_list.rfind(",", short_list.find("\"amx.bf16.32x32\"") + 20), 1, "");
  try {
    parseTuning(short_list, "t.json");
    FAIL() << "read " << short_list;
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("'analytic_schedules' has 1 entries for 2 cases"), std::string::npos)
        << error.what();
  }
}

// Format 1 named one analytic schedule per class; a class whose schedule was it
// kept the analytic choice, and reads so, so that each case takes its own route.
TEST(TuningFile, FormatOneReadsWithTheAnalyticChoiceKept) {
  nlohmann::json document = nlohmann::json::parse(tuningText(sample()));
  document["nkbench_tuning"] = 1;
  for (auto& entry : document["classes"]) {
    entry.erase("analytic_schedules");
    entry["analytic_schedule"] = "avx512.f32.12x32";
  }
  const Tuning read = parseTuning(document.dump(), "old.json");
  const TunedClass* same = read.find("avx512", "brgemm f32 m8-31 n16-63 l1");
  ASSERT_NE(same, nullptr);
  EXPECT_TRUE(same->keepsAnalytic());
  EXPECT_EQ(same->analytic_schedules, (std::vector<std::string>{"avx512.f32.12x32", "avx512.f32.12x32"}));
  EXPECT_EQ(read.find("avx512-bf16", "brgemm f32 m8-31 n16-63 l1")->schedule, "avx512.f32.16x16");
  EXPECT_EQ(tuningText(read).find("\"nkbench_tuning\": 1"), std::string::npos);  // written as the current format
}

// A bf16 class under an AMX cap with a case on the tiles and one the tiles
// would mostly pad: a class that keeps the analytic choice gives no schedule,
// so each case takes its own route, not the tile route of the largest.
TEST_F(TuningEnvironment, AClassThatKeepsTheAnalyticChoiceLeavesEachCaseItsRoute) {
  const CacheSizes caches = host().caches;
  Problem big;
  big.dtype = DType::BF16;
  big.m = big.n = big.k = 64;
  Problem small = big;
  small.m = 33;
  small.n = 65;
  small.k = 2;
  const std::string shape_class = mlir_backend::shapeClassOf(big, caches);
  ASSERT_EQ(shape_class, mlir_backend::shapeClassOf(small, caches));
  Tuning tuning = sample();
  TunedClass kept = tuned("amx-emulated", shape_class, kAnalyticSchedule);
  kept.analytic_schedules = {"amx.bf16.32x32", "avx512bf16.bf16.8x32"};
  tuning.put(kept);
  writeTuningFile(defaultTuningPath(), tuning);
  const TuningSelection selection = selectTuning("auto", Isa::AmxEmulated, host(), build());
  EXPECT_TRUE(selection.warning.empty()) << selection.warning;
  EXPECT_EQ(selection.file, defaultTuningPath().string());
  EXPECT_TRUE(selection.by_class.empty());
  const mlir_backend::TunedSchedules tuned_schedules{selection.file, selection.by_class};
  mlir_backend::RouteRequest request;
  request.tuned = &tuned_schedules;
  request.caches = caches;
  const mlir_backend::RouteChoice small_route = mlir_backend::chooseRoute(Isa::AmxEmulated, small, request);
  EXPECT_EQ(small_route.schedule.name, "avx512bf16.bf16.8x32");
  EXPECT_EQ(small_route.source, "analytic");
  EXPECT_EQ(mlir_backend::chooseRoute(Isa::AmxEmulated, big, request).schedule.name, "amx.bf16.32x32");
}

}  // namespace
}  // namespace nkbench
