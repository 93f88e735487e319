#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/core/error.h"
#include "harness/suite/suite.h"

namespace nkbench {
namespace {

// The message of the Error that parsing `yaml` throws, or "" when it parses.
std::string errorOf(const std::string& yaml) {
  try {
    parseSuite(yaml, "t.yaml");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// Expects an error on `line` whose message contains every one of `parts`.
void expectError(const std::string& yaml, int line, std::initializer_list<std::string> parts) {
  const std::string message = errorOf(yaml);
  SCOPED_TRACE(yaml);
  EXPECT_EQ(message.rfind("t.yaml:" + std::to_string(line) + ": ", 0), 0u) << message;
  for (const std::string& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
}

// A suite whose only case has the given body lines (indented under "- ").
std::string oneCase(const std::string& body) { return "suite: s\ncases:\n  - id: c\n" + body; }

TEST(SuiteParser, ParsesEveryKey) {
  const Suite suite = parseSuite(R"(
suite: demo
description: "two cases"
defaults:
  dtype: f32
  beta: 1
cases:
  - id: brgemm-a
    kind: brgemm
    m: 8
    n: 32
    k: 16
    batch: 4
  - id: gemm.b_1
    kind: gemm
    shape: [7, 33, 5]
    beta: 0
)",
                                 "demo.yaml");
  EXPECT_EQ(suite.name, "demo");
  EXPECT_EQ(suite.description, "two cases");
  ASSERT_EQ(suite.cases.size(), 2u);

  const SuiteCase& first = suite.cases[0];
  EXPECT_EQ(first.id, "brgemm-a");
  EXPECT_EQ(first.line, 8);
  EXPECT_EQ(first.problem.kind, OpKind::Brgemm);
  EXPECT_EQ(first.problem.dtype, DType::F32);
  EXPECT_EQ(first.problem.m, 8);
  EXPECT_EQ(first.problem.n, 32);
  EXPECT_EQ(first.problem.k, 16);
  EXPECT_EQ(first.problem.batch, 4);
  EXPECT_TRUE(first.problem.accumulate);  // from defaults

  const SuiteCase& second = suite.cases[1];
  EXPECT_EQ(second.id, "gemm.b_1");
  EXPECT_EQ(second.line, 14);
  EXPECT_EQ(second.problem.kind, OpKind::Gemm);
  EXPECT_EQ(second.problem.m, 7);
  EXPECT_EQ(second.problem.n, 33);
  EXPECT_EQ(second.problem.k, 5);
  EXPECT_EQ(second.problem.batch, 1);
  EXPECT_FALSE(second.problem.accumulate);  // the case overrides the default
}

TEST(SuiteParser, AppliesBuiltInDefaults) {
  const Suite suite = parseSuite(oneCase("    kind: brgemm\n    shape: [1, 2, 3]\n"), "t.yaml");
  const Problem& problem = suite.cases.at(0).problem;
  EXPECT_EQ(problem.dtype, DType::F32);
  EXPECT_EQ(problem.batch, 1);
  EXPECT_FALSE(problem.accumulate);
  EXPECT_TRUE(suite.description.empty());
}

TEST(SuiteParser, AcceptsBf16Cases) {
  const Suite suite = parseSuite(oneCase("    kind: brgemm\n    shape: [8, 32, 32]\n    dtype: bf16\n"), "t.yaml");
  EXPECT_EQ(suite.cases.at(0).problem.dtype, DType::BF16);
}

TEST(SuiteParser, CDtypeIsF32UnlessABf16CaseAsksForBf16) {
  const Suite suite = parseSuite(R"(suite: s
defaults:
  dtype: bf16
  c_dtype: bf16
cases:
  - {id: a, kind: brgemm, shape: [8, 32, 32]}
  - {id: b, kind: brgemm, shape: [8, 32, 32], c_dtype: f32}
  - {id: c, kind: brgemm, shape: [8, 32, 32], dtype: f32, c_dtype: f32}
)",
                                 "t.yaml");
  EXPECT_EQ(suite.cases.at(0).problem.c_dtype, DType::BF16);
  EXPECT_EQ(suite.cases.at(1).problem.c_dtype, DType::F32);
  EXPECT_EQ(suite.cases.at(2).problem.c_dtype, DType::F32);
  EXPECT_EQ(parseSuite(oneCase("    kind: brgemm\n    shape: [1, 2, 3]\n"), "t.yaml").cases.at(0).problem.c_dtype,
            DType::F32);
}

TEST(SuiteParser, DefaultsMayGiveKindAndBatch) {
  const Suite suite = parseSuite(R"(suite: s
defaults: {kind: brgemm, batch: 8}
cases:
  - {id: a, shape: [4, 4, 4]}
  - {id: b, shape: [4, 4, 4], batch: 2}
)",
                                 "t.yaml");
  EXPECT_EQ(suite.cases.at(0).problem.kind, OpKind::Brgemm);
  EXPECT_EQ(suite.cases.at(0).problem.batch, 8);
  EXPECT_EQ(suite.cases.at(1).problem.batch, 2);
  EXPECT_EQ(suite.cases.at(1).line, 5);
}

TEST(SuiteParser, GemmMaySayBatchOneAndBetaZero) {
  const Suite suite = parseSuite(oneCase("    kind: gemm\n    shape: [2, 2, 2]\n    batch: 1\n"
                                         "    beta: 0\n"),
                                 "t.yaml");
  EXPECT_EQ(suite.cases.at(0).problem.kind, OpKind::Gemm);
}

TEST(SuiteParser, AcceptsSizesAtTheLimits) {
  const Suite suite = parseSuite(R"(suite: s
cases:
  - {id: long-m, kind: gemm, m: 1048576, n: 1, k: 1}
  - {id: long-batch, kind: brgemm, shape: [1, 1, 1], batch: 65536}
)",
                                 "t.yaml");
  EXPECT_EQ(suite.cases.at(0).problem.m, 1 << 20);
  EXPECT_EQ(suite.cases.at(1).problem.batch, 1 << 16);
}

// Every suite file in the repository, named as its file.
TEST(SuiteParser, LoadsCommittedSuites) {
  int suites = 0;
  for (const auto& file : std::filesystem::directory_iterator(std::filesystem::path(NKBENCH_SOURCE_DIR) / "suites")) {
    if (file.path().extension() != ".yaml") continue;
    const std::filesystem::path& path = file.path();
    SCOPED_TRACE(path.string());
    ++suites;
    const Suite suite = loadSuite(path);
    EXPECT_EQ(suite.name, path.stem().string());
    EXPECT_EQ(suite.path, path);
    EXPECT_FALSE(suite.cases.empty());
    for (const SuiteCase& entry : suite.cases) EXPECT_GT(entry.line, 0) << entry.id;
  }
  EXPECT_GE(suites, 5);  // amx, default, gate, paper, smoke
}

TEST(SuiteParser, SmokeSuiteStaysTiny) {
  const Suite suite = loadSuite(std::filesystem::path(NKBENCH_SOURCE_DIR) / "suites/smoke.yaml");
  ASSERT_EQ(suite.cases.size(), 3u);
  for (const SuiteCase& entry : suite.cases) EXPECT_LE(entry.problem.flops(), 1e6) << entry.id;
}

TEST(SuiteParser, DefaultSuiteIsQuick) {
  const Suite suite = loadSuite(std::filesystem::path(NKBENCH_SOURCE_DIR) / "suites/default.yaml");
  EXPECT_GE(suite.cases.size(), 6u);
  EXPECT_LE(suite.cases.size(), 14u);
  for (const SuiteCase& entry : suite.cases) EXPECT_LE(entry.problem.flops(), 3e8) << entry.id;
}

TEST(SuiteErrors, UnreadableFile) {
  const std::filesystem::path missing =
      std::filesystem::temp_directory_path() / "nkbench-no-such-suite.yaml";
  try {
    loadSuite(missing);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind(missing.string() + ": cannot read", 0), 0u) << message;
    EXPECT_NE(message.find("No such file"), std::string::npos) << message;
  }
  EXPECT_THROW(loadSuite(std::filesystem::temp_directory_path()), Error);
}

TEST(SuiteErrors, FileErrorsNameThePath) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("nkbench-test-suite-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       ".yaml");
  std::ofstream(path) << "suite: s\ncases:\n  - id: a\n    kind: gemm\n    shape: [1, 2]\n";
  try {
    loadSuite(path);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind(path.string() + ":5: ", 0), 0u) << error.what();
  }
  std::filesystem::remove(path);
}

TEST(SuiteErrors, YamlSyntax) {
  expectError("suite: s\ncases: [1, 2\nother: 3\n", 3, {"YAML syntax error"});
  expectError("suite: s\n  bad: indent\n", 2, {"YAML syntax error"});
}

// The cases after a second document's --- would otherwise never run.
TEST(SuiteErrors, ASecondYamlDocumentIsRefused) {
  expectError("suite: a\ncases:\n  - {id: x, kind: gemm, shape: [8, 8, 8]}\n---\nsuite: b\ncases:\n"
              "  - {id: y, kind: gemm, shape: [8, 8, 8]}\n",
              4, {"one YAML document, and a second one starts here"});
}

// Malformed suites the fuzzer once found a hang or crash on (fuzz/regressions/):
// each gets its one-line error.
TEST(SuiteErrors, InputsFuzzingFoundBugsOnGetOneLineErrors) {
  const std::filesystem::path found = std::filesystem::path(NKBENCH_SOURCE_DIR) / "fuzz/regressions/fuzz_suite";
  int inputs = 0;
  for (const auto& file : std::filesystem::directory_iterator(found)) {
    ++inputs;
    try {
      loadSuite(file.path());
      ADD_FAILURE() << file.path() << ": expected an error";
    } catch (const Error& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.rfind(file.path().string() + ":", 0), 0u) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
  EXPECT_GT(inputs, 0);
}

TEST(SuiteErrors, NotAMapping) {
  expectError("", 1, {"mapping", "nothing"});
  expectError("- a\n- b\n", 1, {"mapping", "a list"});
}

TEST(SuiteErrors, UnknownKeys) {
  expectError("suite: s\ncase:\n  - {id: a}\n", 2,
              {"unknown key 'case'", "did you mean 'cases'", "allowed keys: suite, description"});
  expectError("suite: s\ndefaults:\n  m: 3\ncases: []\n", 3,
              {"defaults", "unknown key 'm'", "allowed keys: kind, dtype, c_dtype, batch, beta"});
  expectError(oneCase("    kind: gemm\n    shape: [1, 1, 1]\n    bta: 1\n"), 6,
              {"case 'c'", "unknown key 'bta'", "did you mean 'beta'", "allowed keys: id, kind"});
}

TEST(SuiteErrors, DuplicateKey) {
  expectError(oneCase("    kind: gemm\n    m: 1\n    n: 1\n    k: 1\n    m: 2\n"), 8,
              {"key 'm' is given twice", "line 5"});
}

TEST(SuiteErrors, MissingRequiredKeys) {
  expectError("cases:\n  - {id: a, kind: gemm, shape: [1, 1, 1]}\n", 1, {"'suite'"});
  expectError("suite: s\n", 1, {"missing required key 'cases'"});
  expectError("suite: s\ncases:\n  - kind: gemm\n    shape: [1, 1, 1]\n", 3, {"'id'"});
  expectError(oneCase("    shape: [1, 1, 1]\n"), 3, {"case 'c'", "'kind'"});
  expectError(oneCase("    kind: gemm\n    m: 1\n"), 3, {"case 'c'", "n, k"});
}

TEST(SuiteErrors, WrongTypes) {
  expectError(oneCase("    kind: gemm\n    m: abc\n    n: 1\n    k: 1\n"), 5,
              {"'m' must be an integer", "'abc'"});
  expectError(oneCase("    kind: gemm\n    m: 1\n    n: 3.5\n    k: 1\n"), 6,
              {"'n' must be an integer", "3.5"});
  expectError(oneCase("    kind: gemm\n    m: 1\n    n: 1\n    k: \"32\"\n"), 7,
              {"'k' must be an integer", "string"});
  expectError(oneCase("    kind: gemm\n    m: 1\n    n: 1\n    k:\n"), 7,
              {"'k' must be an integer", "nothing"});
  expectError(oneCase("    kind: brgemm\n    shape: [1, 1, 1]\n    batch: [2]\n"), 6,
              {"'batch' must be an integer", "a list"});
  expectError(oneCase("    kind: [gemm]\n    shape: [1, 1, 1]\n"), 4, {"'kind' must be a string"});
  // A leading zero: PyYAML would read 010 as 8.
  expectError(oneCase("    kind: gemm\n    m: 010\n    n: 1\n    k: 1\n"), 5,
              {"'m' is 010: a leading zero reads as octal"});
  expectError(oneCase("    kind: brgemm\n    shape: [05, 5, 5]\n"), 5, {"is 05: a leading zero"});
  expectError(oneCase("    kind: brgemm\n    shape: [5, 5, 5]\n    beta: -01\n"), 6, {"'beta' is -01: a leading zero"});
  expectError(oneCase("    kind: gemm\n    m: -0\n    n: 1\n    k: 1\n"), 5, {"'m' must be positive, got 0"});
  expectError(oneCase("    kind: gemm\n    m: !!int ''\n    n: 1\n    k: 1\n"), 5, {"'m' must be an integer"});
  expectError("suite: s\ncases: {id: a}\n", 2, {"'cases' must be a list"});
  expectError("suite: s\ncases:\n  - just-a-name\n", 3, {"each case must be a mapping"});
  expectError("suite: s\ndefaults: 3\ncases:\n  - {id: a}\n", 2, {"'defaults' must be a mapping"});
}

TEST(SuiteErrors, UnknownKindAndDtype) {
  expectError(oneCase("    kind: conv\n    shape: [1, 1, 1]\n"), 4,
              {"unknown kind 'conv'", "brgemm, gemm"});
  expectError(oneCase("    kind: gemm\n    shape: [1, 1, 1]\n    dtype: f64\n"), 6,
              {"unknown dtype 'f64'", "f32"});
}

TEST(SuiteErrors, Bf16CNeedsBf16Operands) {
  expectError(oneCase("    kind: brgemm\n    shape: [1, 1, 1]\n    c_dtype: bf16\n"), 6,
              {"c_dtype bf16 needs dtype bf16", "dtype is f32"});
  expectError(R"(suite: s
defaults:
  c_dtype: bf16
cases:
  - {id: a, kind: brgemm, shape: [8, 32, 32]}
)",
              5, {"case 'a'", "c_dtype bf16 (from 'defaults', line 3) needs dtype bf16"});
  expectError(oneCase("    kind: brgemm\n    shape: [1, 1, 1]\n    c_dtype: f16\n"), 6,
              {"unknown dtype 'f16'"});
}

TEST(SuiteErrors, ShapeRules) {
  expectError(oneCase("    kind: gemm\n    shape: [1, 2]\n"), 5, {"[M, N, K]", "2 items"});
  expectError(oneCase("    kind: gemm\n    shape: [1, 1, 1]\n    k: 4\n"), 6,
              {"'k' given together with 'shape'"});
  expectError(oneCase("    kind: gemm\n    shape: [1, x, 1]\n"), 5, {"shape[1] (N)", "'x'"});
}

TEST(SuiteErrors, NonPositiveSizes) {
  expectError(oneCase("    kind: gemm\n    m: 0\n    n: 1\n    k: 1\n"), 5,
              {"'m' must be positive", "0"});
  expectError(oneCase("    kind: brgemm\n    shape: [1, 1, 1]\n    batch: -2\n"), 6,
              {"'batch' must be positive", "-2"});
  expectError(oneCase("    kind: gemm\n    shape: [1, 1, -1]\n"), 5, {"shape[2] (K)", "positive"});
}

TEST(SuiteErrors, SizesTooLarge) {
  expectError(oneCase("    kind: gemm\n    m: 1\n    n: 1048577\n    k: 1\n"), 6,
              {"'n' is 1048577", "limit of 1048576"});
  expectError(oneCase("    kind: brgemm\n    shape: [1, 1, 1]\n    batch: 65537\n"), 6,
              {"'batch' is 65537", "limit of 65536"});
  expectError(oneCase("    kind: gemm\n    m: 99999999999999999999999\n    n: 1\n    k: 1\n"), 5,
              {"'m'", "too large"});
  // 65536 x 65536 x 65536 floats: A, B and C are 16 GiB each.
  expectError(oneCase("    kind: gemm\n    shape: [65536, 65536, 65536]\n"), 3,
              {"case 'c'", "operands need 48.0 GiB", "A 16.0 GiB", "limit of 8.0 GiB"});
  // Each size is fine alone; the batch makes A and B too big.
  expectError(oneCase("    kind: brgemm\n    shape: [1024, 1024, 1024]\n    batch: 1024\n"), 3,
              {"case 'c'", "operands need", "A 4.0 GiB"});
}

TEST(SuiteErrors, DuplicateIds) {
  expectError(
      "suite: s\ncases:\n  - {id: a, kind: gemm, shape: [1, 1, 1]}\n"
      "  - {id: b, kind: gemm, shape: [1, 1, 1]}\n"
      "  - {id: a, kind: gemm, shape: [1, 1, 1]}\n",
      5, {"duplicate case id 'a'", "line 3"});
}

TEST(SuiteErrors, InvalidNames) {
  expectError("suite: s\ncases:\n  - {id: 'a b', kind: gemm, shape: [1, 1, 1]}\n", 3,
              {"case id 'a b'"});
  expectError("suite: my/suite\ncases:\n  - {id: a, kind: gemm, shape: [1, 1, 1]}\n", 1,
              {"suite name 'my/suite'"});
}

TEST(SuiteErrors, BetaMustBeZeroOrOne) {
  expectError(oneCase("    kind: brgemm\n    shape: [1, 1, 1]\n    beta: 2\n"), 6,
              {"'beta' must be 0 or 1", "2"});
  expectError(oneCase("    kind: brgemm\n    shape: [1, 1, 1]\n    beta: 0.5\n"), 6,
              {"'beta' must be an integer"});
}

TEST(SuiteErrors, BatchAndBetaOnGemm) {
  expectError(oneCase("    kind: gemm\n    shape: [1, 1, 1]\n    batch: 4\n"), 6,
              {"case 'c'", "batch 4", "gemm"});
  expectError(oneCase("    kind: gemm\n    shape: [1, 1, 1]\n    beta: 1\n"), 6,
              {"case 'c'", "beta 1", "gemm"});
  // A default that does not fit a gemm case is reported on the case, naming the default.
  expectError("suite: s\ndefaults:\n  beta: 1\ncases:\n  - {id: g, kind: gemm, shape: [1, 1, 1]}\n",
              5, {"case 'g'", "beta 1", "'defaults', line 3"});
}

TEST(SuiteErrors, EmptyCaseList) {
  expectError("suite: s\ncases: []\n", 2, {"'cases' is empty"});
  expectError("suite: s\ncases:\n", 2, {"'cases' is empty"});
}

TEST(SuiteErrors, LaterErrorsStillReject) {
  // A bad last case rejects the whole file: nothing is half-loaded.
  expectError(
      "suite: s\ncases:\n  - {id: a, kind: gemm, shape: [1, 1, 1]}\n"
      "  - {id: b, kind: gemm, shape: [1, 1, 0]}\n",
      4, {"case 'b'", "positive"});
}

TEST(SuiteErrors, QuotedControlCharactersStayOnTheErrorLine) {
  EXPECT_EQ(errorOf("suite: \"a\\nb\"\ncases: []\n"),
            "t.yaml:1: suite name 'a\\nb' may only use letters, digits, '.', '_' and '-'");
  expectError(oneCase("    kind: \"gemm\\r\\u0000\"\n    shape: [1, 1, 1]\n"), 4, {"unknown kind 'gemm\\r\\x00'"});
}


// An mlp case: `batch` is the rows, `layers` the widths C_0 .. C_L.
TEST(SuiteMlp, ParsesLayersBatchBiasAndActivation) {
  const Suite suite = parseSuite(R"(suite: s
cases:
  - id: mlp-a
    kind: mlp
    layers: [64, 96, 32]
    batch: 16
    bias: true
    activation: relu
  - {id: mlp-b, kind: mlp, layers: [8, 4], batch: 3, dtype: bf16}
)",
                                 "t.yaml");
  ASSERT_EQ(suite.cases.size(), 2u);
  const Problem& a = suite.cases[0].problem;
  EXPECT_EQ(a.kind, OpKind::Mlp);
  EXPECT_EQ(a.m, 16);  // the rows
  EXPECT_EQ(a.k, 64);  // C_0
  EXPECT_EQ(a.n, 32);  // C_L
  EXPECT_EQ(a.batch, 1);
  EXPECT_FALSE(a.accumulate);
  EXPECT_EQ(a.mlp.widths, (std::vector<std::int64_t>{64, 96, 32}));
  EXPECT_TRUE(a.mlp.bias);
  EXPECT_EQ(a.mlp.activation, Activation::Relu);
  EXPECT_EQ(a.dtype, DType::F32);
  EXPECT_EQ(a.c_dtype, DType::F32);
  EXPECT_EQ(a.describe(), "mlp f32 16x[64-96-32] bias+relu");

  const Problem& b = suite.cases[1].problem;
  EXPECT_EQ(b.m, 3);
  EXPECT_EQ(b.k, 8);
  EXPECT_EQ(b.n, 4);
  EXPECT_FALSE(b.mlp.bias);
  EXPECT_EQ(b.mlp.activation, Activation::None);
  EXPECT_EQ(b.dtype, DType::BF16);
  EXPECT_EQ(b.c_dtype, DType::BF16);  // an mlp's C is of its dtype unless it says otherwise
}

TEST(SuiteMlp, DefaultsMayGiveKindBatchAndDtype) {
  const Suite suite = parseSuite(R"(suite: s
defaults: {kind: mlp, batch: 256, dtype: bf16, c_dtype: bf16}
cases:
  - {id: a, layers: [1024, 1024, 1024], activation: none, bias: false}
  - {id: b, layers: [32, 32], batch: 8}
)",
                                 "t.yaml");
  const Problem& a = suite.cases.at(0).problem;
  EXPECT_EQ(a.kind, OpKind::Mlp);
  EXPECT_EQ(a.m, 256);
  EXPECT_EQ(a.batch, 1);
  EXPECT_EQ(a.c_dtype, DType::BF16);
  EXPECT_EQ(a.mlp.widths.size(), 3u);
  EXPECT_EQ(suite.cases.at(1).problem.m, 8);
}

TEST(SuiteMlp, AcceptsAnMlpAtTheLimits) {
  // 2^16 rows, widths of 2^20 where the operands still fit in 8 GiB.
  const Suite suite = parseSuite(oneCase("    kind: mlp\n    layers: [1048576, 1]\n    batch: 1\n"
                                         "  - {id: d, kind: mlp, layers: [1, 1], batch: 65536}\n"),
                                 "t.yaml");
  EXPECT_EQ(suite.cases.at(0).problem.k, 1 << 20);
  EXPECT_EQ(suite.cases.at(1).problem.m, 1 << 16);
}

TEST(SuiteMlpErrors, MatmulSizesDoNotApplyToAnMlp) {
  EXPECT_EQ(errorOf(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 4\n    m: 4\n")),
            "t.yaml:7: case 'c': 'm' does not apply to an mlp: its sizes are 'layers' and 'batch' (its rows)");
  for (const std::string key : {"n", "k"})
    expectError(oneCase("    kind: mlp\n    layers: [8, 8]\n    " + key + ": 4\n    batch: 4\n"), 6,
                {"case 'c'", "'" + key + "' does not apply to an mlp"});
  expectError(oneCase("    kind: mlp\n    shape: [4, 8, 8]\n    layers: [8, 8]\n    batch: 4\n"), 5,
              {"case 'c'", "'shape' does not apply to an mlp"});
  // Refused whatever else is wrong or missing: the sizes say what was meant.
  expectError(oneCase("    kind: mlp\n    shape: [4, 8, 8]\n"), 5, {"'shape' does not apply to an mlp"});
  // kind from the defaults.
  expectError("suite: s\ndefaults: {kind: mlp, batch: 2}\ncases:\n  - {id: x, layers: [4, 4],\n     k: 4}\n", 5,
              {"case 'x'", "'k' does not apply to an mlp"});
}

TEST(SuiteMlpErrors, MlpKeysApplyToKindMlpOnly) {
  EXPECT_EQ(errorOf(oneCase("    kind: gemm\n    shape: [1, 1, 1]\n    layers: [8, 8]\n")),
            "t.yaml:6: case 'c': 'layers' applies to kind mlp only");
  expectError(oneCase("    kind: brgemm\n    shape: [1, 1, 1]\n    bias: true\n"), 6,
              {"case 'c'", "'bias' applies to kind mlp only"});
  expectError(oneCase("    kind: gemm\n    activation: relu\n    shape: [1, 1, 1]\n"), 5,
              {"case 'c'", "'activation' applies to kind mlp only"});
  // They are case keys, not defaults.
  expectError("suite: s\ndefaults:\n  layers: [8, 8]\ncases:\n  - {id: a, kind: gemm, shape: [1, 1, 1]}\n", 3,
              {"defaults", "unknown key 'layers'"});
}

TEST(SuiteMlpErrors, LayersNeedTwoOrMorePositiveWidths) {
  expectError(oneCase("    kind: mlp\n    batch: 4\n"), 3,
              {"case 'c'", "an mlp needs 'layers'", "e.g. [1024, 1024, 1024]"});
  EXPECT_EQ(errorOf(oneCase("    kind: mlp\n    layers: [64]\n    batch: 4\n")),
            "t.yaml:5: case 'c': 'layers' must be a list of two or more widths, got 1 item(s)");
  expectError(oneCase("    kind: mlp\n    layers: []\n    batch: 4\n"), 5, {"two or more widths", "got 0 item(s)"});
  expectError(oneCase("    kind: mlp\n    layers: 64\n    batch: 4\n"), 5, {"two or more widths", "got '64'"});
  expectError(oneCase("    kind: mlp\n    layers:\n    batch: 4\n"), 5, {"two or more widths", "got nothing"});
  EXPECT_EQ(errorOf(oneCase("    kind: mlp\n    layers: [64, 0, 32]\n    batch: 4\n")),
            "t.yaml:5: case 'c': 'layers[1]' must be positive, got 0");
  // A block list: the error is on the offending item's line.
  expectError(oneCase("    kind: mlp\n    batch: 4\n    layers:\n      - 64\n      - -3\n"), 8,
              {"case 'c'", "'layers[1]' must be positive, got -3"});
  expectError(oneCase("    kind: mlp\n    layers: [64, 32.5]\n    batch: 4\n"), 5,
              {"'layers[1]' must be an integer", "32.5"});
  expectError(oneCase("    kind: mlp\n    layers: [1048577, 8]\n    batch: 4\n"), 5,
              {"'layers[0]' is 1048577, above the limit of 1048576"});
}

TEST(SuiteMlpErrors, AnMlpNeedsItsRowsAsBatch) {
  EXPECT_EQ(errorOf(oneCase("    kind: mlp\n    layers: [8, 8]\n")),
            "t.yaml:3: case 'c': an mlp needs 'batch': the rows each layer multiplies, e.g. 256");
  expectError(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 0\n"), 6, {"'batch' must be positive"});
  expectError(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 65537\n"), 6, {"'batch' is 65537", "65536"});
}

TEST(SuiteMlpErrors, UnknownActivationAndNonBooleanBias) {
  EXPECT_EQ(errorOf(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 4\n    activation: gelu\n")),
            "t.yaml:7: case 'c': unknown activation 'gelu'; known: relu, none");
  expectError(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 4\n    activation: [relu]\n"), 7,
              {"'activation' must be a string", "a list"});
  expectError(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 4\n    bias: yes\n"), 7,
              {"'bias' must be true or false, got 'yes'"});
  expectError(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 4\n    bias: \"true\"\n"), 7,
              {"'bias' must be true or false", "the string \"true\""});
  expectError(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 4\n    bias: 1\n"), 7,
              {"'bias' must be true or false, got '1'"});
}

TEST(SuiteMlpErrors, BetaMustBeZero) {
  EXPECT_EQ(errorOf(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 4\n    beta: 1\n")),
            "t.yaml:7: case 'c': beta 1, but an mlp's layers compute Y = act(X W + b)");
  expectError("suite: s\ndefaults:\n  beta: 1\ncases:\n  - {id: m, kind: mlp, layers: [8, 8], batch: 4}\n", 5,
              {"case 'm'", "beta 1 (from 'defaults', line 3)", "an mlp's layers"});
  EXPECT_EQ(parseSuite(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 4\n    beta: 0\n"), "t.yaml")
                .cases.at(0)
                .problem.accumulate,
            false);
}

TEST(SuiteMlpErrors, CDtypeMustBeTheDtype) {
  // Each layer reads the previous layer's output from C.
  EXPECT_EQ(errorOf(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 4\n    dtype: bf16\n    c_dtype: f32\n")),
            "t.yaml:3: case 'c': an mlp's layers read the previous layer's output, so its c_dtype must be its dtype "
            "(bf16), got f32");
  expectError("suite: s\ndefaults: {c_dtype: f32}\ncases:\n  - {id: m, kind: mlp, layers: [8, 8], batch: 4, dtype: bf16}\n",
              4, {"case 'm'", "c_dtype must be its dtype (bf16), got f32"});
  // An f32 mlp with a bf16 C: the rule every kind has.
  expectError(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 4\n    c_dtype: bf16\n"), 7,
              {"c_dtype bf16 needs dtype bf16", "dtype is f32"});
  const Suite suite =
      parseSuite(oneCase("    kind: mlp\n    layers: [8, 8]\n    batch: 4\n    dtype: bf16\n    c_dtype: bf16\n"),
                 "t.yaml");
  EXPECT_EQ(suite.cases.at(0).problem.c_dtype, DType::BF16);
}

TEST(SuiteMlpErrors, OperandMemoryCountsEveryLayer) {
  // One 32768 x 32768 f32 weight is 4 GiB and fits; three are 12 GiB.
  EXPECT_NO_THROW(parseSuite(oneCase("    kind: mlp\n    layers: [32768, 32768]\n    batch: 1\n"), "t.yaml"));
  expectError(oneCase("    kind: mlp\n    layers: [32768, 32768, 32768, 32768]\n    batch: 1\n"), 3,
              {"case 'c'", "operands need 12.0 GiB", "B 12.0 GiB", "limit of 8.0 GiB"});
  // In bf16 the same weights take half: 6 GiB, with C (every layer's output) in bf16 too.
  EXPECT_NO_THROW(parseSuite(
      oneCase("    kind: mlp\n    layers: [32768, 32768, 32768, 32768]\n    batch: 1\n    dtype: bf16\n"), "t.yaml"));
  // C holds every layer's output: 65536 rows x 1024 x 40 layers of f32 is 10 GiB.
  const std::string widths = "[1024" + [] {
    std::string rest;
    for (int i = 0; i < 40; ++i) rest += ", 1024";
    return rest;
  }() + "]";
  expectError(oneCase("    kind: mlp\n    layers: " + widths + "\n    batch: 65536\n"), 3,
              {"case 'c'", "operands need", "C 10.0 GiB"});
}

}  // namespace
}  // namespace nkbench
