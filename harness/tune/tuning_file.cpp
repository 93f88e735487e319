#include "harness/tune/tuning_file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "harness/core/error.h"
#include "harness/report/atomic_file.h"
#include "harness/report/json/json_value.h"

namespace nkbench {
namespace {

using nlohmann::json;

// The format's version: a reader refuses other versions rather than guess.
// Format 1 named one analytic schedule per class ("analytic_schedule"), and a
// class whose schedule was that one kept the analytic choice: read so.
constexpr int kTuningFormat = 2;
constexpr int kOldestTuningFormat = 1;

template <typename T>
T required(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) throw Error(fmt::format("'{}' is missing", key));
  return jsonValue<T>(*it, key);
}

// A speed: finite and not negative (0: not measured).
double gflopsOf(const json& object, const char* key) {
  const double value = required<double>(object, key);
  if (!std::isfinite(value) || value < 0) throw Error(fmt::format("'{}' is {}, not a speed", key, value));
  return value;
}

std::int64_t bytesOf(const json& object, const char* key) {
  const auto value = required<std::int64_t>(object, key);
  if (value <= 0) throw Error(fmt::format("'{}' is {}, not a cache size", key, value));
  return value;
}

const json& requiredObject(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_object()) throw Error(fmt::format("'{}' must be an object", key));
  return *it;
}

const json& requiredList(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_array()) throw Error(fmt::format("'{}' must be a list", key));
  return *it;
}

json toJson(const TunedClass& tuned) {
  json measured = json::array();
  for (const TuningMeasurement& m : tuned.measured)
    measured.push_back({{"schedule", m.schedule}, {"gflops", m.gflops}, {"status", m.status}});
  return {{"isa", tuned.isa},
          {"shape_class", tuned.shape_class},
          {"schedule", tuned.schedule},
          {"analytic_schedules", tuned.analytic_schedules},
          {"gflops", tuned.gflops},
          {"analytic_gflops", tuned.analytic_gflops},
          {"suite", tuned.suite},
          {"cases", tuned.cases},
          {"measured", measured}};
}

TunedClass tunedClassOf(const json& entry, int format) {
  if (!entry.is_object()) throw Error("each of 'classes' must be an object");
  TunedClass tuned;
  tuned.isa = required<std::string>(entry, "isa");
  if (!parseIsa(tuned.isa)) throw Error(fmt::format("'isa' is '{}', not an ISA level", tuned.isa));
  tuned.shape_class = required<std::string>(entry, "shape_class");
  tuned.schedule = required<std::string>(entry, "schedule");
  tuned.gflops = gflopsOf(entry, "gflops");
  tuned.analytic_gflops = gflopsOf(entry, "analytic_gflops");
  tuned.suite = required<std::string>(entry, "suite");
  tuned.cases = required<std::vector<std::string>>(entry, "cases");
  if (format == 1) {
    const auto analytic = required<std::string>(entry, "analytic_schedule");
    tuned.analytic_schedules.assign(tuned.cases.size(), analytic);
    if (tuned.schedule == analytic) tuned.schedule = kAnalyticSchedule;
  } else {
    tuned.analytic_schedules = required<std::vector<std::string>>(entry, "analytic_schedules");
    if (tuned.analytic_schedules.size() != tuned.cases.size())
      throw Error(fmt::format("'analytic_schedules' has {} entries for {} cases", tuned.analytic_schedules.size(),
                              tuned.cases.size()));
  }
  for (const json& m : requiredList(entry, "measured")) {
    if (!m.is_object()) throw Error("each of 'measured' must be an object");
    tuned.measured.push_back(
        {required<std::string>(m, "schedule"), gflopsOf(m, "gflops"), required<std::string>(m, "status")});
  }
  return tuned;
}

Tuning tuningOf(const json& document) {
  if (!document.is_object()) throw Error("not a JSON object");
  const int format = required<int>(document, "nkbench_tuning");
  if (format < kOldestTuningFormat || format > kTuningFormat)
    throw Error(fmt::format("format {}, this nkbench reads formats {} to {}: tune again", format, kOldestTuningFormat,
                            kTuningFormat));
  Tuning tuning;
  const json& host = requiredObject(document, "host");
  tuning.host.cpu_model = required<std::string>(host, "cpu_model");
  tuning.host.isa_flags = required<std::vector<std::string>>(host, "isa_flags");
  tuning.host.caches.l1d_bytes = bytesOf(host, "l1d_bytes");
  tuning.host.caches.l2_bytes = bytesOf(host, "l2_bytes");
  tuning.host.caches.last_level_bytes = bytesOf(host, "last_level_bytes");
  tuning.llvm_version = required<std::string>(document, "llvm_version");
  tuning.nkbench_version = required<std::string>(document, "nkbench_version");
  tuning.created = required<std::string>(document, "created");
  for (const json& entry : requiredList(document, "classes")) {
    TunedClass tuned = tunedClassOf(entry, format);
    // A second entry would serve the class or not by its place in the file.
    if (tuning.find(tuned.isa, tuned.shape_class))
      throw Error(fmt::format("class '{}' is tuned twice under {}", tuned.shape_class, tuned.isa));
    tuning.classes.push_back(std::move(tuned));
  }
  return tuning;
}

}  // namespace

TuningHost thisTuningHost(const CpuFeatures& features, const CacheSizes& caches) {
  return {features.brand, features.flagNames(), caches};
}

const TunedClass* Tuning::find(const std::string& isa, const std::string& shape_class) const {
  for (const TunedClass& tuned : classes)
    if (tuned.isa == isa && tuned.shape_class == shape_class) return &tuned;
  return nullptr;
}

void Tuning::put(TunedClass tuned) {
  for (TunedClass& existing : classes)
    if (existing.isa == tuned.isa && existing.shape_class == tuned.shape_class) {
      existing = std::move(tuned);
      return;
    }
  classes.push_back(std::move(tuned));
}

Tuning readTuningFile(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw Error(fmt::format("tuning file {}: is a directory", path.string()));
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("tuning file {}: cannot be read ({})", path.string(), std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return parseTuning(text.str(), path.string());
}

Tuning parseTuning(const std::string& text, const std::string& display_name) {
  try {
    return tuningOf(json::parse(text));
  } catch (const json::exception& error) {
    throw Error(fmt::format("tuning file {}: not valid JSON ({})", display_name, error.what()));
  } catch (const Error& error) {
    throw Error(fmt::format("tuning file {}: {}", display_name, error.what()));
  }
}

std::string tuningText(const Tuning& tuning) {
  json classes = json::array();
  for (const TunedClass& tuned : tuning.classes) classes.push_back(toJson(tuned));
  const json document = {{"nkbench_tuning", kTuningFormat},
                         {"host",
                          {{"cpu_model", tuning.host.cpu_model},
                           {"isa_flags", tuning.host.isa_flags},
                           {"l1d_bytes", tuning.host.caches.l1d_bytes},
                           {"l2_bytes", tuning.host.caches.l2_bytes},
                           {"last_level_bytes", tuning.host.caches.last_level_bytes}}},
                         {"llvm_version", tuning.llvm_version},
                         {"nkbench_version", tuning.nkbench_version},
                         {"created", tuning.created},
                         {"classes", classes}};
  return document.dump(2) + "\n";
}

void writeTuningFile(const std::filesystem::path& path, const Tuning& tuning) {
  std::error_code error;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
  if (error) throw Error(fmt::format("tuning file {}: cannot create its directory ({})", path.string(), error.message()));
  replaceFileAtomically(path, tuningText(tuning), "tuning file");
}

std::optional<std::string> tuningHostMismatch(const TuningHost& tuned, const TuningHost& here) {
  if (tuned.cpu_model != here.cpu_model)
    return fmt::format("it was tuned on '{}', this host is '{}'", tuned.cpu_model, here.cpu_model);
  if (tuned.isa_flags != here.isa_flags)
    return fmt::format("it was tuned with the ISA flags [{}], this host has [{}]", fmt::join(tuned.isa_flags, " "),
                       fmt::join(here.isa_flags, " "));
  const CacheSizes& a = tuned.caches;
  const CacheSizes& b = here.caches;
  if (a.l1d_bytes != b.l1d_bytes || a.l2_bytes != b.l2_bytes || a.last_level_bytes != b.last_level_bytes)
    return fmt::format("it was tuned with caches L1d {} / L2 {} / LLC {} bytes, this host has {} / {} / {}",
                       a.l1d_bytes, a.l2_bytes, a.last_level_bytes, b.l1d_bytes, b.l2_bytes, b.last_level_bytes);
  return std::nullopt;
}

std::optional<std::filesystem::path> environmentTuningPath() {
  // "auto" there means what it means on the command line: the default path.
  if (const char* set = std::getenv("NKBENCH_TUNING");
      set && *set && std::string_view(set) != "none" && std::string_view(set) != "auto")
    return set;
  return std::nullopt;
}

bool environmentSwitchesTuningOff() {
  const char* set = std::getenv("NKBENCH_TUNING");
  return set && std::string_view(set) == "none";
}

std::filesystem::path defaultTuningPath() {
  if (auto named = environmentTuningPath()) return *named;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "nkbench" / "tuning.json";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".cache" / "nkbench" / "tuning.json";
}

}  // namespace nkbench
