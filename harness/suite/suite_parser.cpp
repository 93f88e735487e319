// Reads shape suites from YAML (format in README.md, "Suite files").
// Every rule is checked before a Suite is returned, and every error names the
// file, the 1-based line and the offending key or case.
#include "harness/suite/suite.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "harness/core/error.h"

namespace nkbench {
namespace {

constexpr std::int64_t kMaxDimension = std::int64_t{1} << 20;
constexpr std::int64_t kMaxBatch = std::int64_t{1} << 16;
constexpr std::int64_t kMaxOperandBytes = std::int64_t{8} << 30;

constexpr std::array<std::string_view, 4> kTopLevelKeys = {"suite", "description", "defaults",
                                                           "cases"};
constexpr std::array<std::string_view, 7> kDefaultsKeys = {"kind", "dtype", "c_dtype", "batch", "beta", "bias",
                                                           "activation"};
constexpr std::array<std::string_view, 14> kCaseKeys = {"id",    "kind",    "m",       "n",      "k",
                                                        "shape", "batch",   "beta",    "dtype",  "c_dtype",
                                                        "threads", "layers", "bias", "activation"};
// Keys of an mlp's layers, and those of a single matmul's sizes.
constexpr std::array<std::string_view, 3> kMlpKeys = {"layers", "bias", "activation"};
constexpr std::array<std::string_view, 4> kMatmulSizeKeys = {"m", "n", "k", "shape"};
// A case's own thread count; whether the machine has the cores is the run's to say.
constexpr std::int64_t kMaxThreads = 1024;
// Extend together with DType: the error for an unknown dtype lists these.
constexpr std::array<DType, 2> kAllDTypes = {DType::F32, DType::BF16};
constexpr std::array<OpKind, 3> kAllKinds = {OpKind::Brgemm, OpKind::Gemm, OpKind::Mlp};

bool isValidName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

template <typename Range>
std::string joinNames(const Range& names) {
  std::string joined;
  for (const auto& name : names) {
    if (!joined.empty()) joined += ", ";
    joined += toString(name);
  }
  return joined;
}

std::string joinKeys(std::span<const std::string_view> keys) {
  std::string joined;
  for (std::string_view key : keys) {
    if (!joined.empty()) joined += ", ";
    joined += key;
  }
  return joined;
}

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// What a node holds, for "expected X, got Y" messages.
std::string describeValue(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      break;
  }
  if (node.Tag() == "!") return fmt::format("the string \"{}\"", node.Scalar());
  return fmt::format("'{}'", node.Scalar());
}

std::string formatBytes(double bytes) {
  constexpr std::array<std::string_view, 5> units = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < units.size()) {
    bytes /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", bytes, units[unit]);
}

// A key/value pair of a mapping, kept together so that an empty value
// (whose mark points past it) can still be reported on the key's line.
struct Entry {
  YAML::Node key;
  YAML::Node value;
};

// Where a setting of a case came from: the case itself or the suite's defaults.
struct Origin {
  int line = 0;
  bool from_defaults = false;
};

template <typename T>
struct Setting {
  T value{};
  Origin origin;
};

struct Defaults {
  std::optional<Setting<OpKind>> kind;
  std::optional<Setting<DType>> dtype;
  std::optional<Setting<DType>> c_dtype;
  std::optional<Setting<std::int64_t>> batch;
  std::optional<Setting<bool>> accumulate;
  // mlp cases only (other kinds ignore them); read, and checked, with each mlp case.
  std::optional<Entry> bias, activation;
};

// The line where a second YAML document starts, or 0. Found from the document
// markers, which YAML allows only at the start of a line: yaml-cpp's LoadAll
// loops without end, and without bound on memory, on some malformed input.
int secondDocumentLine(const std::string& text) {
  bool started = false, ended = false;
  int line = 1;
  for (std::size_t begin = 0; begin < text.size(); ++line) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string_view row(text.data() + begin, end - begin);
    begin = end + 1;
    const auto marker = [&](std::string_view what) {
      return row.substr(0, 3) == what && (row.size() == 3 || row[3] == ' ' || row[3] == '\t' || row[3] == '\r');
    };
    const std::size_t first = row.find_first_not_of(" \t\r");
    const bool blank = first == std::string_view::npos || row[first] == '#';
    if (marker("---")) {
      if (started || ended) return line;
      started = true;
    } else if (marker("...")) {
      ended = true;
    } else if (!blank && !(row[0] == '%' && !started)) {
      if (ended) return line;
      started = true;
    }
  }
  return 0;
}

class SuiteParser {
 public:
  explicit SuiteParser(std::string display_name) : display_name_(std::move(display_name)) {}

  Suite parse(const std::string& yaml_text) {
    // A second document (after ---) would otherwise be dropped without a word.
    if (const int line = secondDocumentLine(yaml_text))
      fail(line, "a suite file holds one YAML document, and a second one starts here: merge their cases");
    YAML::Node root;
    try {
      root = YAML::Load(yaml_text);
    } catch (const YAML::Exception& error) {
      fail(lineOf(error.mark), fmt::format("YAML syntax error: {}", error.msg));
    }
    try {
      return parseRoot(root);
    } catch (const YAML::Exception& error) {
      // Checks above should leave nothing for yaml-cpp to reject; keep its message if it does.
      fail(lineOf(error.mark), error.msg);
    }
  }

 private:
  // Errors inside a case (or the defaults) say which one: "FILE:LINE: case 'x': ...".
  [[noreturn]] void fail(int line, const std::string& message) const {
    if (context_.empty()) throw Error(fmt::format("{}:{}: {}", display_name_, line, message));
    throw Error(fmt::format("{}:{}: {}: {}", display_name_, line, context_, message));
  }

  static int lineOf(const YAML::Mark& mark) { return mark.is_null() ? 1 : mark.line + 1; }
  static int lineOf(const YAML::Node& node) { return lineOf(node.Mark()); }
  static int lineOf(const Entry& entry) {
    return entry.value.IsNull() ? lineOf(entry.key) : lineOf(entry.value);
  }

  // Entries of `map` by key, after checking that every key is known and given once.
  std::map<std::string, Entry> entriesOf(const YAML::Node& map,
                                         std::span<const std::string_view> allowed) const {
    std::map<std::string, Entry> entries;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) {
        fail(lineOf(key), fmt::format("keys must be plain names, got {}", describeValue(key)));
      }
      const std::string name = key.Scalar();
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        fail(lineOf(key), unknownKeyMessage(name, allowed));
      }
      const auto [previous, inserted] = entries.emplace(name, Entry{key, it->second});
      if (!inserted) {
        fail(lineOf(key), fmt::format("key '{}' is given twice (first on line {})", name,
                                      lineOf(previous->second.key)));
      }
    }
    return entries;
  }

  static std::string unknownKeyMessage(const std::string& name,
                                       std::span<const std::string_view> allowed) {
    std::string message = fmt::format("unknown key '{}'", name);
    const auto closest = std::min_element(allowed.begin(), allowed.end(), [&](auto a, auto b) {
      return editDistance(name, a) < editDistance(name, b);
    });
    if (editDistance(name, *closest) <= 2 && name.size() > 1) {
      message += fmt::format(" (did you mean '{}'?)", *closest);
    }
    message += fmt::format("; allowed keys: {}", joinKeys(allowed));
    return message;
  }

  std::string requireString(const Entry& entry) const {
    if (!entry.value.IsScalar()) {
      fail(lineOf(entry), fmt::format("'{}' must be a string, got {}", entry.key.Scalar(),
                                      describeValue(entry.value)));
    }
    return entry.value.Scalar();
  }

  // Plain decimal integers only: quoted numbers, floats and hex are type errors.
  std::int64_t requireInteger(const Entry& entry, std::string_view name) const {
    const YAML::Node& value = entry.value;
    const bool integer_tag = value.Tag() == "?" || value.Tag() == "tag:yaml.org,2002:int";
    if (value.IsScalar() && integer_tag) {
      const std::string& text = value.Scalar();
      std::int64_t parsed = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
      if (error == std::errc() && end == text.data() + text.size()) {
        // YAML 1.1 readers (PyYAML, which may write or check the suite) take 010 as octal 8.
        const std::size_t sign = text.front() == '-' ? 1 : 0;
        if (text.size() > sign + 1 && text[sign] == '0')
          fail(lineOf(entry), fmt::format("'{}' is {}: a leading zero reads as octal in YAML 1.1; write it without",
                                          name, text));
        return parsed;
      }
      if (error == std::errc::result_out_of_range) {
        fail(lineOf(entry), fmt::format("'{}' is {}, far too large", name, text));
      }
    }
    fail(lineOf(entry), fmt::format("'{}' must be an integer, got {}", name, describeValue(value)));
  }

  std::int64_t requireInRange(const Entry& entry, std::string_view name, std::int64_t limit) const {
    const std::int64_t value = requireInteger(entry, name);
    if (value < 1) {
      fail(lineOf(entry), fmt::format("'{}' must be positive, got {}", name, value));
    }
    if (value > limit) {
      fail(lineOf(entry), fmt::format("'{}' is {}, above the limit of {}", name, value, limit));
    }
    return value;
  }

  Setting<OpKind> parseKind(const Entry& entry, bool from_defaults) const {
    const std::string text = requireString(entry);
    const std::optional<OpKind> kind = parseOpKind(text);
    if (!kind) {
      fail(lineOf(entry),
           fmt::format("unknown kind '{}'; known kinds: {}", text, joinNames(kAllKinds)));
    }
    return {*kind, {lineOf(entry), from_defaults}};
  }

  Setting<DType> parseDTypeSetting(const Entry& entry, bool from_defaults) const {
    const std::string text = requireString(entry);
    const std::optional<DType> dtype = parseDType(text);
    if (!dtype) {
      fail(lineOf(entry),
           fmt::format("unknown dtype '{}'; known dtypes: {}", text, joinNames(kAllDTypes)));
    }
    return {*dtype, {lineOf(entry), from_defaults}};
  }

  Setting<std::int64_t> parseBatch(const Entry& entry, bool from_defaults) const {
    return {requireInRange(entry, "batch", kMaxBatch), {lineOf(entry), from_defaults}};
  }

  Setting<bool> parseBeta(const Entry& entry, bool from_defaults) const {
    const std::int64_t beta = requireInteger(entry, "beta");
    if (beta != 0 && beta != 1) {
      fail(lineOf(entry), fmt::format("'beta' must be 0 or 1, got {}", beta));
    }
    return {beta == 1, {lineOf(entry), from_defaults}};
  }

  Suite parseRoot(const YAML::Node& root) {
    if (!root.IsMap()) {
      fail(lineOf(root), fmt::format("a suite file must be a mapping with keys {}; got {}",
                                     joinKeys(kTopLevelKeys), describeValue(root)));
    }
    const auto entries = entriesOf(root, kTopLevelKeys);

    Suite suite;
    const auto name = entries.find("suite");
    if (name == entries.end()) {
      fail(lineOf(root), "missing required key 'suite' (the suite's name)");
    }
    suite.name = requireString(name->second);
    if (!isValidName(suite.name)) {
      fail(lineOf(name->second),
           fmt::format("suite name '{}' may only use letters, digits, '.', '_' and '-'",
                       suite.name));
    }
    if (const auto description = entries.find("description"); description != entries.end()) {
      suite.description = requireString(description->second);
    }

    Defaults defaults;
    if (const auto found = entries.find("defaults"); found != entries.end()) {
      defaults = parseDefaults(found->second);
    }

    const auto cases = entries.find("cases");
    if (cases == entries.end()) fail(lineOf(root), "missing required key 'cases'");
    const YAML::Node& list = cases->second.value;
    if (list.IsNull() || (list.IsSequence() && list.size() == 0)) {
      fail(lineOf(cases->second), "'cases' is empty; a suite needs at least one case");
    }
    if (!list.IsSequence()) {
      fail(lineOf(cases->second),
           fmt::format("'cases' must be a list of cases, got {}", describeValue(list)));
    }

    std::map<std::string, int> first_line_of_id;
    for (const YAML::Node& node : list) {
      SuiteCase parsed = parseCase(node, defaults);
      const auto [previous, inserted] = first_line_of_id.emplace(parsed.id, parsed.line);
      if (!inserted) {
        fail(parsed.line, fmt::format("duplicate case id '{}' (first used on line {})", parsed.id,
                                      previous->second));
      }
      suite.cases.push_back(std::move(parsed));
    }
    return suite;
  }

  Defaults parseDefaults(const Entry& entry) {
    Defaults defaults;
    if (entry.value.IsNull()) return defaults;
    if (!entry.value.IsMap()) {
      fail(lineOf(entry),
           fmt::format("'defaults' must be a mapping, got {}", describeValue(entry.value)));
    }
    context_ = "defaults";
    const auto entries = entriesOf(entry.value, kDefaultsKeys);
    if (const auto it = entries.find("kind"); it != entries.end()) {
      defaults.kind = parseKind(it->second, true);
    }
    if (const auto it = entries.find("dtype"); it != entries.end()) {
      defaults.dtype = parseDTypeSetting(it->second, true);
    }
    if (const auto it = entries.find("c_dtype"); it != entries.end()) {
      defaults.c_dtype = parseDTypeSetting(it->second, true);
    }
    if (const auto it = entries.find("batch"); it != entries.end()) {
      defaults.batch = parseBatch(it->second, true);
    }
    if (const auto it = entries.find("beta"); it != entries.end()) {
      defaults.accumulate = parseBeta(it->second, true);
    }
    if (const auto it = entries.find("bias"); it != entries.end()) defaults.bias = it->second;
    if (const auto it = entries.find("activation"); it != entries.end()) defaults.activation = it->second;
    context_.clear();
    return defaults;
  }

  SuiteCase parseCase(const YAML::Node& node, const Defaults& defaults) {
    SuiteCase result;
    result.line = lineOf(node);
    if (!node.IsMap()) {
      fail(result.line, fmt::format("each case must be a mapping, got {}", describeValue(node)));
    }

    // The id first, so that every later message can name the case.
    if (const YAML::Node id = node["id"]; id && id.IsScalar()) {
      context_ = fmt::format("case '{}'", id.Scalar());
    }
    const auto entries = entriesOf(node, kCaseKeys);

    const auto id = entries.find("id");
    if (id == entries.end()) fail(result.line, "case without the required key 'id'");
    result.id = requireString(id->second);
    if (!isValidName(result.id)) {
      fail(lineOf(id->second),
           fmt::format("case id '{}' may only use letters, digits, '.', '_' and '-'", result.id));
    }

    Problem& problem = result.problem;
    const auto find = [&](std::string_view key) -> const Entry* {
      const auto it = entries.find(std::string(key));
      return it == entries.end() ? nullptr : &it->second;
    };

    std::optional<Setting<OpKind>> kind = defaults.kind;
    if (const Entry* entry = find("kind")) kind = parseKind(*entry, false);
    if (!kind) fail(result.line, "missing required key 'kind' (brgemm, gemm or mlp)");
    problem.kind = kind->value;
    const bool mlp = problem.kind == OpKind::Mlp;
    for (std::string_view key : mlp ? std::span<const std::string_view>(kMatmulSizeKeys)
                                    : std::span<const std::string_view>(kMlpKeys))
      if (const Entry* entry = find(key))
        fail(lineOf(entry->key), mlp ? fmt::format("'{}' does not apply to an mlp: its sizes are 'layers' and 'batch' "
                                                   "(its rows)", key)
                                     : fmt::format("'{}' applies to kind mlp only", key));

    if (const Entry* entry = find("dtype")) {
      problem.dtype = parseDTypeSetting(*entry, false).value;
    } else if (defaults.dtype) {
      problem.dtype = defaults.dtype->value;
    }
    std::optional<Setting<DType>> c_dtype = defaults.c_dtype;
    if (const Entry* entry = find("c_dtype")) c_dtype = parseDTypeSetting(*entry, false);
    if (c_dtype) {
      problem.c_dtype = c_dtype->value;
      // A bf16 C holds a sum of bf16 products; f32 operands keep an f32 C.
      if (problem.c_dtype == DType::BF16 && problem.dtype != DType::BF16) {
        const std::string setting = c_dtype->origin.from_defaults
                                        ? fmt::format("c_dtype bf16 (from 'defaults', line {})", c_dtype->origin.line)
                                        : std::string("c_dtype bf16");
        fail(c_dtype->origin.from_defaults ? result.line : c_dtype->origin.line,
             fmt::format("{} needs dtype bf16, but the case's dtype is {}", setting, toString(problem.dtype)));
      }
    }

    if (!mlp) parseSizes(entries, result.line, problem);

    std::optional<Setting<std::int64_t>> batch = defaults.batch;
    if (const Entry* entry = find("batch")) batch = parseBatch(*entry, false);
    std::optional<Setting<bool>> accumulate = defaults.accumulate;
    if (const Entry* entry = find("beta")) accumulate = parseBeta(*entry, false);
    if (batch) problem.batch = batch->value;
    if (accumulate) problem.accumulate = accumulate->value;
    if (const Entry* entry = find("threads")) result.threads = int(requireInRange(*entry, "threads", kMaxThreads));
    if (mlp) {
      const auto find_or_default = [&](std::string_view key) -> const Entry* {
        if (const Entry* entry = find(key)) return entry;
        const std::optional<Entry>& fallback = key == "bias" ? defaults.bias : defaults.activation;
        return (key == "bias" || key == "activation") && fallback ? &*fallback : nullptr;
      };
      parseMlp(find_or_default, result.line, batch, accumulate, c_dtype.has_value(), problem);
    }

    if (problem.kind == OpKind::Gemm) {
      if (problem.batch != 1) {
        failOnGemm(result.line, batch->origin, fmt::format("batch {}", problem.batch),
                   "a gemm has no batch; use kind: brgemm");
      }
      if (problem.accumulate) {
        failOnGemm(result.line, accumulate->origin, "beta 1",
                   "a gemm computes C = A*B, so beta must be 0; use kind: brgemm");
      }
    }
    checkOperandMemory(problem, result.line);
    context_.clear();
    return result;
  }

  // An mlp: `layers` (two or more widths), `batch` as its rows, `bias` and
  // `activation`; its C is the layers' outputs, of the operands' type.
  template <class Find>
  void parseMlp(const Find& find, int case_line, const std::optional<Setting<std::int64_t>>& batch,
                const std::optional<Setting<bool>>& accumulate, bool c_dtype_given, Problem& problem) const {
    const Entry* layers = find("layers");
    if (!layers) fail(case_line, "an mlp needs 'layers': its widths, e.g. [1024, 1024, 1024]");
    const YAML::Node& list = layers->value;
    if (!list.IsSequence() || list.size() < 2)
      fail(lineOf(*layers), fmt::format("'layers' must be a list of two or more widths, got {}",
                                        list.IsSequence() ? fmt::format("{} item(s)", list.size()) : describeValue(list)));
    for (std::size_t i = 0; i < list.size(); ++i)
      problem.mlp.widths.push_back(
          requireInRange(Entry{layers->key, list[i]}, fmt::format("layers[{}]", i), kMaxDimension));
    if (!batch) fail(case_line, "an mlp needs 'batch': the rows each layer multiplies, e.g. 256");
    problem.m = problem.batch;
    problem.batch = 1;
    problem.k = problem.mlp.widths.front();
    problem.n = problem.mlp.widths.back();
    if (problem.accumulate) failOnGemm(case_line, accumulate->origin, "beta 1", "an mlp's layers compute Y = act(X W + b)");
    if (!c_dtype_given) problem.c_dtype = problem.dtype;
    if (problem.c_dtype != problem.dtype)
      fail(case_line, fmt::format("an mlp's layers read the previous layer's output, so its c_dtype must be its dtype "
                                  "({}), got {}", toString(problem.dtype), toString(problem.c_dtype)));
    if (const Entry* bias = find("bias")) problem.mlp.bias = requireBool(*bias, "bias");
    if (const Entry* activation = find("activation")) {
      const std::string text = requireString(*activation);
      const std::optional<Activation> parsed = parseActivation(text);
      if (!parsed) fail(lineOf(*activation), fmt::format("unknown activation '{}'; known: relu, none", text));
      problem.mlp.activation = *parsed;
    }
  }

  bool requireBool(const Entry& entry, std::string_view name) const {
    const YAML::Node& value = entry.value;
    if (value.IsScalar() && value.Tag() != "!" && (value.Scalar() == "true" || value.Scalar() == "false"))
      return value.Scalar() == "true";
    fail(lineOf(entry), fmt::format("'{}' must be true or false, got {}", name, describeValue(value)));
  }

  // m, n, k either as separate keys or as `shape: [M, N, K]`, never both.
  void parseSizes(const std::map<std::string, Entry>& entries, int case_line,
                  Problem& problem) const {
    const auto shape = entries.find("shape");
    if (shape != entries.end()) {
      for (std::string_view key : {"m", "n", "k"}) {
        if (const auto it = entries.find(std::string(key)); it != entries.end()) {
          fail(lineOf(it->second.key),
               fmt::format("'{}' given together with 'shape'; use one or the other", key));
        }
      }
      const YAML::Node& list = shape->second.value;
      if (!list.IsSequence() || list.size() != 3) {
        fail(lineOf(shape->second),
             fmt::format(
                 "'shape' must be a list [M, N, K] of three integers, got {}",
                 list.IsSequence() ? fmt::format("{} items", list.size()) : describeValue(list)));
      }
      problem.m = requireInRange(Entry{shape->second.key, list[0]}, "shape[0] (M)", kMaxDimension);
      problem.n = requireInRange(Entry{shape->second.key, list[1]}, "shape[1] (N)", kMaxDimension);
      problem.k = requireInRange(Entry{shape->second.key, list[2]}, "shape[2] (K)", kMaxDimension);
      return;
    }
    std::vector<std::string_view> missing;
    for (std::string_view key : {"m", "n", "k"}) {
      if (!entries.contains(std::string(key))) missing.push_back(key);
    }
    if (!missing.empty()) {
      fail(case_line, fmt::format("missing required size key(s) {} (or give shape: [M, N, K])",
                                  joinKeys(missing)));
    }
    problem.m = requireInRange(entries.at("m"), "m", kMaxDimension);
    problem.n = requireInRange(entries.at("n"), "n", kMaxDimension);
    problem.k = requireInRange(entries.at("k"), "k", kMaxDimension);
  }

  // A value from 'defaults' that does not fit a gemm is reported on the case.
  [[noreturn]] void failOnGemm(int case_line, const Origin& origin, const std::string& setting,
                               const std::string& reason) const {
    if (origin.from_defaults) {
      fail(case_line,
           fmt::format("{} (from 'defaults', line {}), but {}", setting, origin.line, reason));
    }
    fail(origin.line, fmt::format("{}, but {}", setting, reason));
  }

  void checkOperandMemory(const Problem& problem, int case_line) const {
    const std::int64_t element = elementBytes(problem.dtype);
    const std::int64_t a_bytes = problem.aElements() * element;
    const std::int64_t b_bytes = problem.bElements() * element;
    const std::int64_t c_bytes = problem.cElements() * elementBytes(problem.c_dtype);
    const std::int64_t total = a_bytes + b_bytes + c_bytes + problem.biasElements() * 4;
    if (total > kMaxOperandBytes) {
      fail(case_line, fmt::format("operands need {} (A {}, B {}, C {}), above the limit of {}",
                                  formatBytes(double(total)), formatBytes(double(a_bytes)),
                                  formatBytes(double(b_bytes)), formatBytes(double(c_bytes)),
                                  formatBytes(double(kMaxOperandBytes))));
    }
  }

  std::string display_name_;
  std::string context_;  // "defaults", "case 'x'", or empty at the top level
};

}  // namespace

Suite parseSuite(const std::string& yaml_text, const std::string& display_name) {
  return SuiteParser(display_name).parse(yaml_text);
}

Suite loadSuite(const std::filesystem::path& path) {
  std::error_code status_error;
  if (std::filesystem::is_directory(path, status_error)) {
    throw Error(fmt::format("{}: cannot read suite file: it is a directory", path.string()));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw Error(fmt::format("{}: cannot read suite file: {}", path.string(), std::strerror(errno)));
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) {
    throw Error(fmt::format("{}: cannot read suite file: {}", path.string(), std::strerror(errno)));
  }
  Suite suite = parseSuite(text.str(), path.string());
  suite.path = path;
  return suite;
}

}  // namespace nkbench
