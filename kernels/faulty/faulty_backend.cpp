#include "kernels/faulty/faulty_backend.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <algorithm>
#include <regex>
#include <vector>

#include "harness/core/error.h"
#include "operands/bf16.h"

namespace nkbench {
namespace {

constexpr std::int64_t kFaultyReadDistance = 4096;

float elementAt(const void* data, DType dtype, std::int64_t i) {
  return dtype == DType::BF16 ? toFloat(static_cast<const BFloat16*>(data)[i]) : static_cast<const float*>(data)[i];
}

// C (+)= sum over the batch of A[b] x B[b], in double, in the problem's layout.
void plainBrgemm(const Problem& p, const Operands& operands) {
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      double sum = p.accumulate ? elementAt(operands.c, p.c_dtype, i * p.n + j) : 0.0;
      for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t l = 0; l < p.k; ++l)
          sum += double(elementAt(operands.a, p.dtype, (b * p.m + i) * p.k + l)) *
                 double(elementAt(operands.b, p.dtype, (b * p.k + l) * p.n + j));
      if (p.c_dtype == DType::BF16)
        operands.cAs<BFloat16>()[i * p.n + j] = toBFloat16(float(sum));
      else
        operands.cAs<float>()[i * p.n + j] = float(sum);
    }
}

[[noreturn]] void hang() {
  for (;;) ::pause();
}

// Not instrumented: under ASan and UBSan (scripts/test-sanitizers.sh) the faults
// must still be the signals they are, not a sanitizer's report.
__attribute__((no_sanitize("address", "undefined"))) void goWrong(const FaultPlan& plan, const Problem& p,
                                                                  const Operands& operands) {
  switch (plan.kind) {
    case FaultPlan::Kind::Segv: {
      volatile int* volatile nowhere = reinterpret_cast<int*>(16);
      *nowhere = 1;
      break;
    }
    case FaultPlan::Kind::Ill: __builtin_trap();
    case FaultPlan::Kind::Fpe: {
      // Both unknown to the compiler, which turns 1 / x into a comparison.
      volatile int dividend = 7, zero = 0;
      volatile int quotient = dividend / zero;
      (void)quotient;
      break;
    }
    case FaultPlan::Kind::Bus: ::raise(SIGBUS); break;
    case FaultPlan::Kind::Abort: std::abort();
    case FaultPlan::Kind::Hang: hang();
    case FaultPlan::Kind::OobWrite: {
      volatile char* past_c = static_cast<char*>(operands.c) + p.m * p.n * elementBytes(p.c_dtype);
      *past_c = 1;
      break;
    }
    case FaultPlan::Kind::OobRead: {
      // A page past B's end: past its slack, inside its guard (guarded_buffer.h).
      const std::int64_t b_bytes = p.batch * p.k * p.n * elementBytes(p.dtype);
      volatile const char* past_b = static_cast<const char*>(operands.b) + b_bytes + kFaultyReadDistance;
      [[maybe_unused]] const char byte = *past_b;
      break;
    }
  }
}

class FaultyKernel final : public Kernel {
 public:
  FaultyKernel(const Problem& problem, const Operands& operands, std::optional<FaultPlan> plan)
      : problem_(problem), operands_(operands), plan_(std::move(plan)) {
    info_.implementation = plan_ ? "faulty (goes wrong on purpose)" : "faulty (a plain loop)";
  }
  // The first call is the verification's; the later ones are timed.
  void compute() override {
    const FaultPlan::Stage stage = calls_++ == 0 ? FaultPlan::Stage::Verify : FaultPlan::Stage::Time;
    if (plan_ && plan_->stage == stage) goWrong(*plan_, problem_, operands_);
    plainBrgemm(problem_, operands_);
  }
  const KernelInfo& info() const override { return info_; }

 private:
  Problem problem_;
  Operands operands_;
  std::optional<FaultPlan> plan_;
  KernelInfo info_;
  std::int64_t calls_ = 0;
};

class FaultyBackend final : public Backend {
 public:
  FaultyBackend(std::optional<FaultPlan> plan, int threads) : plan_(std::move(plan)), threads_(threads) {}
  std::string name() const override { return "faulty"; }
  std::string version() const override { return "test"; }
  std::optional<std::string> unsupportedReason(const Problem& problem) const override {
    if (problem.kind == OpKind::Mlp) return "faulty: its faults are those of one matmul, not of an mlp";
    if (threads_ > 1) return "faulty: its plain loop runs on one thread";
    return std::nullopt;
  }
  std::unique_ptr<Kernel> prepare(const Problem& problem, const Operands& operands) override {
    std::optional<FaultPlan> plan;
    if (plan_ && (plan_->problem_regex.empty() || std::regex_search(problem.describe(), std::regex(plan_->problem_regex))))
      plan = plan_;
    if (plan && plan->stage == FaultPlan::Stage::Compile) goWrong(*plan, problem, operands);
    return std::make_unique<FaultyKernel>(problem, operands, std::move(plan));
  }

 private:
  std::optional<FaultPlan> plan_;
  int threads_;
};

}  // namespace

FaultPlan parseFaultPlan(const std::string& spec) {
  static const std::regex format(R"(([a-z-]+)@([a-z]+)(?::(.*))?)");
  std::smatch match;
  if (!std::regex_match(spec, match, format))
    throw Error(fmt::format("NKBENCH_FAULTY '{}': expected KIND@STAGE[:REGEX], e.g. segv@verify", spec));
  static const std::vector<std::pair<std::string, FaultPlan::Kind>> kinds = {
      {"segv", FaultPlan::Kind::Segv},   {"ill", FaultPlan::Kind::Ill},     {"fpe", FaultPlan::Kind::Fpe},
      {"bus", FaultPlan::Kind::Bus},     {"abort", FaultPlan::Kind::Abort}, {"hang", FaultPlan::Kind::Hang},
      {"oob-write", FaultPlan::Kind::OobWrite}, {"oob-read", FaultPlan::Kind::OobRead}};
  static const std::vector<std::pair<std::string, FaultPlan::Stage>> stages = {
      {"compile", FaultPlan::Stage::Compile}, {"verify", FaultPlan::Stage::Verify}, {"time", FaultPlan::Stage::Time}};
  FaultPlan plan;
  auto kind = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == match[1].str(); });
  if (kind == kinds.end())
    throw Error(fmt::format("NKBENCH_FAULTY '{}': unknown kind {} (segv, ill, fpe, bus, abort, hang, oob-write, "
                            "oob-read)", spec, match[1].str()));
  auto stage = std::find_if(stages.begin(), stages.end(), [&](const auto& s) { return s.first == match[2].str(); });
  if (stage == stages.end())
    throw Error(fmt::format("NKBENCH_FAULTY '{}': unknown stage {} (compile, verify, time)", spec, match[2].str()));
  plan.kind = kind->second;
  plan.stage = stage->second;
  plan.problem_regex = match[3].str();
  try {
    std::regex check(plan.problem_regex);
  } catch (const std::regex_error& error) {
    throw Error(fmt::format("NKBENCH_FAULTY '{}': not a valid regular expression ({})", spec, error.what()));
  }
  return plan;
}

std::unique_ptr<Backend> makeFaultyBackend(const BackendConfig& config) {
  const char* spec = std::getenv("NKBENCH_FAULTY");
  return std::make_unique<FaultyBackend>(spec ? std::optional(parseFaultPlan(spec)) : std::nullopt, config.threads);
}

}  // namespace nkbench
