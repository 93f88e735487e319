// The option parsers on arbitrary values. An input is "NAME VALUE": NAME picks
// the option (shard, isa, fill, cache, gate, schedule, host-class, kind, dtype,
// status, or a numeric option's check: min-time, noisy-iqr, cold-mib, threshold),
// and VALUE is what follows the first space, as the shell would pass it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "harness/cli/isa_option.h"
#include "harness/cli/number_options.h"
#include "harness/cli/shard_option.h"
#include "harness/compare/regression_check.h"
#include "harness/core/host_class.h"
#include "harness/core/problem.h"
#include "harness/run/operand_sets.h"
#include "harness/suite/shard.h"
#include "kernels/mlir/schedule/schedule.h"
#include "reference/compare.h"
#include "operands/fill.h"

using namespace nkbench;

namespace {

// A parsed value must print as the text it came from.
template <typename T>
void checkNamed(const std::optional<T>& parsed, std::string_view text) {
  if (parsed) fuzz::check(toString(*parsed) == text, "a value that prints as another", text);
}

void shard(const std::string& text) {
  const std::optional<Shard> shard = cli::parseShardOption(text);
  fuzz::check(shard && 1 <= shard->index && shard->index <= shard->count, "a shard outside 1..N", text);
  std::string why;
  fuzz::check(parseShard(toString(*shard), &why) == shard, "a shard that does not read back", text);
  casesOfShard(std::vector<SuiteCase>(3), *shard);
}

void isa(const std::string& text) {
  const std::optional<Isa> level = cli::parseIsaOption(text);
  if (level) fuzz::check(parseIsa(toString(*level)) == level, "an ISA that does not read back", text);
}

// The schedule is checked against a level and a type, as `run --schedule` does.
void schedule(const std::string& text) {
  for (Isa level : {Isa::Avx2, Isa::Avx512, Isa::Avx512Bf16, Isa::AmxEmulated, Isa::Amx})
    for (DType dtype : {DType::F32, DType::BF16}) {
      fuzz::parseOrError([&] {
        const auto& chosen = mlir_backend::selectSchedule(level, dtype, text);
        // An empty name is no --schedule: the level's default.
        fuzz::check(chosen.dtype == dtype && (text.empty() || chosen.name == text), "another schedule than the one named",
                    text);
      });
    }
}

// A numeric option's value as CLI11 reads it once its check accepted it; nullopt when refused.
std::optional<double> checkedNumber(const CLI::Validator& check, std::string text) {
  if (!check(text).empty()) return std::nullopt;
  double value = 0.0;
  fuzz::check(CLI::detail::lexical_cast(text, value), "a number accepted that does not convert", text);
  return value;
}

// Seconds and fractions go on to google/benchmark and the rank test, which need finite numbers.
void positive(const std::string& text) {
  if (const auto value = checkedNumber(cli::positiveNumber(), text))
    fuzz::check(std::isfinite(*value) && *value > 0, "a positive number accepted that is not", text);
}

void fraction(const std::string& text) {
  if (const auto value = checkedNumber(cli::fraction(), text))
    fuzz::check(std::isfinite(*value) && *value >= 0 && *value <= 1, "a fraction accepted that is not", text);
}

void coldMib(const std::string& text) {
  if (const auto value = checkedNumber(cli::coldMib(), text)) {
    fuzz::check(std::isfinite(*value) && *value >= 0, "a size accepted that is not", text);
    const std::int64_t bytes = cli::coldRotationBytes(*value);
    fuzz::check(bytes >= 0, "a negative size", text);
    Problem large;
    large.dtype = large.c_dtype = DType::BF16;
    large.m = large.n = 1 << 20;
    for (const Problem& problem : {Problem{}, large}) operandSetCount(problem, CacheMode::Cold, bytes);
  }
}

void parseOption(std::string_view name, const std::string& value) {
  if (name == "shard") return shard(value);
  if (name == "isa") return isa(value);
  if (name == "schedule") return schedule(value);
  if (name == "min-time" || name == "noisy-iqr") return positive(value);
  if (name == "threshold") return fraction(value);
  if (name == "cold-mib") return coldMib(value);
  if (name == "fill") return checkNamed(parseFillMode(value), value);
  if (name == "cache") return checkNamed(parseCacheMode(value), value);
  if (name == "gate") return checkNamed(parseGate(value), value);
  if (name == "host-class") return checkNamed(parseHostClass(value), value);
  if (name == "kind") return checkNamed(parseOpKind(value), value);
  if (name == "dtype") return checkNamed(parseDType(value), value);
  if (name == "status") return checkNamed(parseVerifyStatus(value), value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t space = input.find(' ');
  if (space == std::string_view::npos) return 0;
  const std::string value(input.substr(space + 1));
  fuzz::parseOrError([&] { parseOption(input.substr(0, space), value); });
  return 0;
}
