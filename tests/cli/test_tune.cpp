// `nkbench tune` end to end: it writes a tuning file of verified measurements,
// and `run` uses it, naming the schedule and where it came from in each row.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "harness/core/isa.h"
#include "tests/cli/cli_test_support.h"

namespace {

using namespace cli_test;

// Two shape classes (a 64x64 BRGEMM block, and a 9-row one), three cases.
fs::path tuneSuite() {
  const fs::path suite = tempPath("tune.yaml");
  std::ofstream(suite) << "suite: tune\ncases:\n"
                          "  - {id: big, kind: brgemm, shape: [64, 64, 16], batch: 2}\n"
                          "  - {id: big-beta1, kind: brgemm, shape: [48, 80, 16], batch: 2, beta: 1}\n"
                          "  - {id: narrow, kind: brgemm, shape: [9, 20, 16], batch: 2}\n";
  return suite;
}

const char* kQuickTune = " --isa avx2 --candidates 2 --cases-per-class 2 --quiet";

// A suite `name` of `cases` (YAML list items, one per line).
fs::path writeSuite(const std::string& name, const std::string& cases) {
  const fs::path suite = tempPath(name + ".yaml");
  std::ofstream(suite) << "suite: " << name << "\ncases:\n" << cases;
  return suite;
}

// A path for a tuning file, with nothing there yet.
fs::path freshTuningPath(const std::string& name) {
  const fs::path tuning = tempPath(name);
  fs::remove(tuning);
  return tuning;
}

TEST(Tune, WritesVerifiedMeasurementsPerShapeClassAndRunUsesThem) {
  const fs::path tuning = tempPath("tuning.json");
  fs::remove(tuning);
  const Outcome tune = runNkbench("tune --suite " + tuneSuite().string() + " --out " + tuning.string() + kQuickTune);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("tuned 2 shape classes"), std::string::npos) << tune.output;
  const nlohmann::json file = readReport(tuning);
  ASSERT_EQ(file.at("classes").size(), 2u);
  std::map<std::string, std::string> chosen;
  for (const auto& tuned : file.at("classes")) {
    EXPECT_EQ(tuned.at("isa"), "avx2");
    for (const auto& route : tuned.at("analytic_schedules")) EXPECT_EQ(route, "avx2.f32.6x16");
    EXPECT_EQ(tuned.at("analytic_schedules").size(), tuned.at("cases").size());
    // The analytic routes and two more were measured, every one verified.
    ASSERT_GE(tuned.at("measured").size(), 3u);
    EXPECT_EQ(tuned.at("measured")[0].at("schedule"), "analytic");
    for (const auto& m : tuned.at("measured")) {
      EXPECT_EQ(m.at("status"), "passed") << m;
      EXPECT_GT(m.at("gflops").get<double>(), 0.0);
    }
    EXPECT_GT(tuned.at("gflops").get<double>(), 0.0);
    // The footprint part of the class depends on the host's caches.
    const std::string shape_class = tuned.at("shape_class");
    if (shape_class.rfind("brgemm f32 m32+ n64+ ", 0) == 0) chosen["big"] = tuned.at("schedule");
    if (shape_class.rfind("brgemm f32 m8-31 n16-63 ", 0) == 0) chosen["narrow"] = tuned.at("schedule");
  }
  ASSERT_EQ(chosen.size(), 2u) << file.dump(1);

  const fs::path json = tempPath("tuned-run.json");
  const Outcome run = runNkbench("run --suite " + tuneSuite().string() + " --backends mlir --isa avx2 --tuning " +
                                 tuning.string() + " " + kQuick + " --json " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json report = readReport(json);
  EXPECT_EQ(report.at("metadata").at("tuning"), tuning.string());
  for (const auto& row : report.at("rows")) {
    EXPECT_EQ(row.at("status"), "passed");
    // A class that kept the analytic choice names no schedule: the case takes its own route.
    const std::string& schedule = chosen.at(row.at("case") == "narrow" ? "narrow" : "big");
    EXPECT_EQ(row.at("schedule_source"), schedule == "analytic" ? "analytic" : "tuned: " + tuning.string());
    EXPECT_EQ(row.at("schedule"), schedule == "analytic" ? "avx2.f32.6x16" : schedule) << row.at("case");
  }
  // --tuning none: the analytic schedules.
  const Outcome analytic = runNkbench("run --suite " + tuneSuite().string() + " --backends mlir --isa avx2 --tuning none " +
                                      kQuick + " --json " + json.string());
  ASSERT_EQ(analytic.exit_code, 0) << analytic.output;
  const nlohmann::json analytic_report = readReport(json);
  for (const auto& row : analytic_report.at("rows")) {
    EXPECT_EQ(row.at("schedule"), "avx2.f32.6x16");
    EXPECT_EQ(row.at("schedule_source"), "analytic");
  }
  // A second tuning of one class keeps the other.
  const Outcome again = runNkbench("tune --suite " + tuneSuite().string() + " --filter narrow --out " +
                                   tuning.string() + kQuickTune);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(readReport(tuning).at("classes").size(), 2u);
}

TEST(Tune, TheDefaultLocationIsFoundAndAnotherHostsFileIsNotUsedOrUpdated) {
  const fs::path cache_home = tempPath("xdg");
  fs::remove_all(cache_home);
  const std::string environment = "-u NKBENCH_TUNING XDG_CACHE_HOME=" + cache_home.string();
  const Outcome tune = runNkbench("tune --suite " + tuneSuite().string() + " --filter narrow" + kQuickTune, environment);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  const fs::path found = cache_home / "nkbench" / "tuning.json";
  ASSERT_TRUE(fs::exists(found)) << tune.output;
  const Outcome list = runNkbench("list --isa avx2 --backends mlir --suite " + tuneSuite().string(), environment);
  EXPECT_NE(list.output.find("tuning: " + found.string()), std::string::npos) << list.output;
  // With a tuning in use, every schedule says where it came from.
  std::istringstream lines(list.output);
  int schedules = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.find("mlir ") != std::string::npos && line.find("run: ") != std::string::npos) {
      ++schedules;
      EXPECT_TRUE(line.find("(tuned: " + found.string() + ")") != std::string::npos ||
                  line.find("(analytic)") != std::string::npos)
          << line;
    }
  EXPECT_GT(schedules, 1) << list.output;
  EXPECT_NE(list.output.find("(analytic)"), std::string::npos) << list.output;  // the two untuned "big" cases

  // The same file claimed for another CPU: refused when given, skipped with a warning when found.
  std::ifstream in(found);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t model = text.find("\"cpu_model\": \"") + 14;
  text.insert(model, "Another ");
  std::ofstream(found) << text;
  const Outcome given = runNkbench("run --suite " + tuneSuite().string() + " --isa avx2 --backends mlir --tuning " +
                                   found.string() + " " + kQuick);
  EXPECT_EQ(given.exit_code, 2);
  EXPECT_NE(given.output.find("not for this host: it was tuned on 'Another "), std::string::npos) << given.output;
  const fs::path json = tempPath("found-run.json");
  const Outcome skipped = runNkbench("run --suite " + tuneSuite().string() + " --isa avx2 --backends mlir " + kQuick +
                                         " --json " + json.string(),
                                     environment);
  EXPECT_EQ(skipped.exit_code, 0) << skipped.output;
  EXPECT_NE(skipped.output.find("warning: tuning file " + found.string() + " not used"), std::string::npos)
      << skipped.output;
  const nlohmann::json skipped_report = readReport(json);
  for (const auto& row : skipped_report.at("rows")) EXPECT_EQ(row.at("schedule_source"), "analytic");
  // Named by --out, tune refuses to update it, saying why and how to go on.
  const Outcome named = runNkbench("tune --suite " + tuneSuite().string() + " --filter narrow --out " +
                                   found.string() + kQuickTune);
  EXPECT_EQ(named.exit_code, 2);
  EXPECT_NE(named.output.find("the tuning file " + found.string() + " cannot be updated: not for this host"),
            std::string::npos)
      << named.output;
  EXPECT_EQ(named.output.find("--out " + found.string()), std::string::npos) << named.output;
  // At the default path it replaces it, saying so.
  const Outcome replaced = runNkbench("tune --suite " + tuneSuite().string() + " --filter narrow" + kQuickTune, environment);
  EXPECT_EQ(replaced.exit_code, 0) << replaced.output;
  EXPECT_NE(replaced.output.find("warning: replacing the tuning file " + found.string() + ": not for this host"),
            std::string::npos)
      << replaced.output;
  EXPECT_EQ(readReport(found).at("host").at("cpu_model").get<std::string>().rfind("Another ", 0), std::string::npos);
}

// bf16 under amx-emulated: one class with a case on the tiles and one the tiles
// would mostly pad. Each is measured on its own analytic route, and a class
// that keeps the analytic choice leaves each case its route in `run`.
TEST(Tune, EachCaseOfAnAmxClassIsMeasuredOnItsOwnAnalyticRoute) {
  if (!nkbench::detectCpuFeatures().has(nkbench::Isa::AmxEmulated)) GTEST_SKIP() << "host lacks avx512-bf16";
  const fs::path suite = writeSuite("tune-amx",
                                    "  - {id: tiles, kind: brgemm, dtype: bf16, shape: [64, 64, 64]}\n"
                                    "  - {id: padded, kind: brgemm, dtype: bf16, shape: [33, 65, 2]}\n");
  const fs::path tuning = freshTuningPath("tuning-amx.json");
  const Outcome tune = runNkbench("tune --suite " + suite.string() + " --out " + tuning.string() +
                                  " --isa amx-emulated --candidates 1 --cases-per-class 2 --quiet");
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  const nlohmann::json file = readReport(tuning);
  ASSERT_EQ(file.at("classes").size(), 1u) << file.dump(1);
  const auto& tuned = file.at("classes")[0];
  EXPECT_EQ(tuned.at("cases"), (nlohmann::json{"tiles", "padded"}));
  // The vector route of the padded case is the dot product or, where the host's is slow, the FMAs.
  ASSERT_EQ(tuned.at("analytic_schedules").size(), 2u) << tuned;
  EXPECT_EQ(tuned.at("analytic_schedules")[0], "amx.bf16.32x32");
  const std::string vector_route = tuned.at("analytic_schedules")[1];
  EXPECT_EQ(vector_route.rfind("avx512", 0), 0u) << tuned;
  EXPECT_EQ(tuned.at("measured")[0].at("schedule"), "analytic");
  EXPECT_NE(tune.output.find("amx.bf16.32x32, " + vector_route), std::string::npos) << tune.output;

  const fs::path json = tempPath("tuned-amx-run.json");
  const Outcome run = runNkbench("run --suite " + suite.string() + " --backends mlir --isa amx-emulated --tuning " +
                                 tuning.string() + " " + kQuick + " --json " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json report = readReport(json);  // a range-for over .at() of a temporary dangles
  for (const auto& row : report.at("rows")) {
    EXPECT_EQ(row.at("status"), "passed") << row;
    if (tuned.at("schedule") == "analytic") {
      EXPECT_EQ(row.at("schedule_source"), "analytic");
      EXPECT_EQ(row.at("schedule"), row.at("case") == "tiles" ? "amx.bf16.32x32" : vector_route);
    } else {
      EXPECT_EQ(row.at("schedule"), tuned.at("schedule"));
    }
  }
}

// An mlp runs the f32-A route's blocks on the widening route (its activations
// stay bf16): tune measures each mlp kernel once, under the name that runs, and
// `run` takes the class it wrote for the mlp.
TEST(Tune, AnMlpClassIsMeasuredAndWrittenAsTheMlpRunsIt) {
  if (!nkbench::detectCpuFeatures().has(nkbench::Isa::Avx512)) GTEST_SKIP() << "host lacks avx512";
  const fs::path suite = writeSuite("tune-mlp",
                                    "  - {id: mlp, kind: mlp, dtype: bf16, c_dtype: bf16, batch: 32, "
                                    "layers: [64, 64, 64], bias: true, activation: relu}\n");
  const fs::path tuning = freshTuningPath("tuning-mlp.json");
  const Outcome tune = runNkbench("tune --suite " + suite.string() + " --out " + tuning.string() +
                                  " --isa avx512 --candidates 3 --quiet");
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  const nlohmann::json file = readReport(tuning);
  ASSERT_EQ(file.at("classes").size(), 1u) << file.dump(1);
  const auto& tuned = file.at("classes")[0];
  EXPECT_EQ(tuned.at("shape_class").get<std::string>().rfind("mlp bf16 ", 0), 0u) << tuned;
  EXPECT_EQ(tuned.at("analytic_schedules")[0], "avx512.bf16-widen.8x32");
  std::set<std::string> measured;
  for (const auto& m : tuned.at("measured")) {
    const std::string schedule = m.at("schedule");
    EXPECT_EQ(schedule.find("bf16-f32a"), std::string::npos) << schedule;
    EXPECT_NE(schedule, "avx512.bf16-widen.8x32");  // the analytic route, measured as "analytic"
    EXPECT_TRUE(measured.insert(schedule).second) << schedule << " measured twice";
  }
  EXPECT_GE(measured.size(), 3u) << tuned;

  const fs::path json = tempPath("tuned-mlp-run.json");
  const Outcome run = runNkbench("run --suite " + suite.string() + " --backends mlir --isa avx512 --tuning " +
                                 tuning.string() + " " + kQuick + " --json " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json report = readReport(json);
  ASSERT_EQ(report.at("rows").size(), 1u);
  const auto& row = report.at("rows")[0];
  EXPECT_EQ(row.at("status"), "passed") << row;
  if (tuned.at("schedule") == "analytic") {
    EXPECT_EQ(row.at("schedule"), "avx512.bf16-widen.8x32");
    EXPECT_EQ(row.at("schedule_source"), "analytic");
  } else {
    EXPECT_EQ(row.at("schedule"), tuned.at("schedule"));
    EXPECT_EQ(row.at("schedule_source"), "tuned: " + tuning.string());
  }
}

// Tuning chooses the block kernel of one core: a case the suite runs on two
// threads is measured on one, and tune says so.
TEST(Tune, ACaseOfSeveralThreadsIsSaidToBeMeasuredOnOneCore) {
  const fs::path suite = writeSuite("tune-threads", "  - {id: one, kind: gemm, shape: [64, 64, 32]}\n"
                                                    "  - {id: two, kind: gemm, shape: [64, 64, 32], threads: 2}\n");
  const fs::path tuning = freshTuningPath("tuning-threads.json");
  const Outcome tune = runNkbench("tune --suite " + suite.string() + " --out " + tuning.string() + kQuickTune);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("measured on one core, as every case (a tuning chooses each core's block kernel): "
                             "two (threads: 2)\n"),
            std::string::npos)
      << tune.output;
  EXPECT_EQ(tune.output.find("one (threads"), std::string::npos) << tune.output;
}

// A found file whose schedule does not fit its class, from another build: one
// warning, and the rows run the analytic schedules.
TEST(Tune, AFoundFileWithABadScheduleIsNotUsed) {
  const fs::path cache_home = tempPath("xdg-bad");
  fs::remove_all(cache_home);
  const std::string environment = "-u NKBENCH_TUNING XDG_CACHE_HOME=" + cache_home.string();
  const Outcome tune = runNkbench("tune --suite " + tuneSuite().string() + " --filter narrow" + kQuickTune, environment);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  const fs::path found = cache_home / "nkbench" / "tuning.json";
  nlohmann::json file = readReport(found);
  ASSERT_EQ(file.at("classes").size(), 1u);
  file["classes"][0]["schedule"] = "avx2.f32.6x16:rows=tall";
  const std::string shape_class = file["classes"][0]["shape_class"];
  std::ofstream(found) << file.dump(1);
  const fs::path json = tempPath("bad-schedule-run.json");
  const Outcome run = runNkbench("run --suite " + tuneSuite().string() + " --isa avx2 --backends mlir " + kQuick +
                                     " --json " + json.string(),
                                 environment);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("warning: tuning file " + found.string() + " not used: tuned schedule avx2.f32.6x16:rows=tall (" +
                            found.string() + ", class " + shape_class + "): the modifiers are"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("--schedule"), std::string::npos) << run.output;
  const nlohmann::json report = readReport(json);  // a range-for over .at() of a temporary dangles
  for (const auto& row : report.at("rows")) {
    EXPECT_EQ(row.at("status"), "passed");
    EXPECT_EQ(row.at("schedule_source"), "analytic");
  }
  const Outcome given = runNkbench("run --suite " + tuneSuite().string() + " --isa avx2 --backends mlir --tuning " +
                                   found.string() + " " + kQuick);
  EXPECT_EQ(given.exit_code, 2);
  EXPECT_NE(given.output.find("tuned schedule avx2.f32.6x16:rows=tall (" + found.string() + ", class " + shape_class + ")"),
            std::string::npos)
      << given.output;
}

TEST(Tune, ASpentBudgetLeavesTheRestAnalytic) {
  const fs::path tuning = tempPath("budget.json");
  fs::remove(tuning);
  const Outcome tune =
      runNkbench("tune --suite " + tuneSuite().string() + " --out " + tuning.string() + " --budget 0.001 --no-isolate" +
                 kQuickTune);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  // The first class is measured (the budget is checked before each), the second is not.
  EXPECT_NE(tune.output.find("not tuned: brgemm f32 m8-31 n16-63 "), std::string::npos) << tune.output;
  EXPECT_NE(tune.output.find(": the budget of 0.001 s was spent"), std::string::npos) << tune.output;
  EXPECT_EQ(readReport(tuning).at("classes").size(), 1u);
}

// Runs under NKBENCH_TUNING=none read no file: tune has none to update unless named.
TEST(Tune, TuningSwitchedOffByTheEnvironmentNeedsAnOutFile) {
  const fs::path cache_home = tempPath("xdg-none");
  fs::remove_all(cache_home);
  const std::string environment = "NKBENCH_TUNING=none XDG_CACHE_HOME=" + cache_home.string();
  const Outcome refused = runNkbench("tune --suite " + tuneSuite().string() + " --filter narrow" + kQuickTune, environment);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.output.find("NKBENCH_TUNING=none switches tuning off, so tune has no file to update: name one with "
                                "--out FILE"),
            std::string::npos)
      << refused.output;
  EXPECT_FALSE(fs::exists(cache_home / "nkbench" / "tuning.json"));
  const fs::path named = tempPath("none-named.json");
  fs::remove(named);
  const Outcome tuned = runNkbench(
      "tune --suite " + tuneSuite().string() + " --filter narrow --out " + named.string() + kQuickTune, environment);
  EXPECT_EQ(tuned.exit_code, 0) << tuned.output;
  EXPECT_TRUE(fs::exists(named));
}

// Found only after the measuring, an unwritable --out cost the whole tuning.
TEST(Tune, AnOutThatCannotBeWrittenIsRefusedBeforeAnythingIsMeasured) {
  const fs::path file = tempPath("plain-file");
  std::ofstream(file) << "not a directory";
  const std::vector<std::pair<fs::path, std::string>> outs = {
      {file / "tuning.json", "tuning file " + (file / "tuning.json").string() + ": cannot create its directory"},
      {file.parent_path(), "tuning file " + file.parent_path().string() + ": is a directory"}};
  // Measuring would compile kernels into the kernel cache: it stays empty.
  const fs::path kernels = tempPath("unwritten-kernels");
  for (const auto& [out, message] : outs) {
    fs::remove_all(kernels);
    const Outcome tune = runNkbench("tune --suite " + tuneSuite().string() + " --out " + out.string() +
                                    " --kernel-cache " + kernels.string() + kQuickTune);
    EXPECT_EQ(tune.exit_code, 2) << tune.output;
    EXPECT_EQ(tune.output.rfind("nkbench: error: " + message, 0), 0u) << tune.output;
    EXPECT_TRUE(!fs::exists(kernels) || fs::is_empty(kernels)) << out;
  }
}

// `auto` in NKBENCH_TUNING and NKBENCH_KERNEL_CACHE is the default, as on the command line,
// and a file the variable names that cannot be read says where its path came from.
TEST(Tune, TheEnvironmentsAutoIsTheDefaultAndItsFilesAreNamedAsItsOwn) {
  const fs::path cache_home = tempPath("xdg-auto");
  fs::remove_all(cache_home);
  const fs::path work = tempPath("auto-cwd");
  fs::create_directories(work);
  const std::string environment =
      "-C " + work.string() + " NKBENCH_TUNING=auto NKBENCH_KERNEL_CACHE=auto XDG_CACHE_HOME=" + cache_home.string();
  const fs::path json = tempPath("auto-run.json");
  const Outcome run = runNkbench("run --suite " + tuneSuite().string() + " --filter narrow --isa avx2 --backends mlir " +
                                     kQuick + " --json " + json.string(),
                                 environment);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(readReport(json).at("metadata").at("tuning"), "none");
  EXPECT_TRUE(fs::is_directory(cache_home / "nkbench" / "kernels"));
  EXPECT_FALSE(fs::exists(work / "auto"));
  const std::string list = "list --isa avx2 --backends mlir --suite " + tuneSuite().string();
  const fs::path missing = tempPath("no-such-tuning.json");
  fs::remove(missing);
  const Outcome named = runNkbench(list, "NKBENCH_TUNING=" + missing.string());
  EXPECT_EQ(named.exit_code, 2);
  EXPECT_EQ(named.output.rfind("nkbench: error: NKBENCH_TUNING: tuning file " + missing.string() +
                                   ": cannot be read (No such file or directory)",
                               0),
            0u)
      << named.output;
}

}  // namespace
