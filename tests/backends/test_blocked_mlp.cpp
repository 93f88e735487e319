// The blocked mlp driver (kernels/common/blocked_mlp.h): its block choice, and the
// driver itself with a plain C++ block kernel (naive BRGEMM + bias + ReLU) standing
// in for a library's, which must reproduce the per-layer reference bit for bit
// under the exact fill: padded widths, f32 and bf16 (plain and VNNI weights), 1 and 2 threads.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "harness/core/error.h"
#include "kernels/common/blocked_mlp.h"
#include "operands/bf16.h"
#include "reference/compare.h"
#include "operands/fill.h"
#include "tests/support/mlp_test_support.h"
#include "tests/support/test_problems.h"

namespace nkbench {
namespace {

using test::checkableMlpData;
using test::makeMlpProblem;

std::int64_t padding(const Problem& p, std::int64_t bc) {
  std::int64_t padded = 0;
  for (std::int64_t width : p.mlp.widths) padded += blockCount(width, bc) * bc - width;
  return padded;
}

// bc: a multiple of the step (c_multiple, doubled where odd for bf16) of at most
// `preferred`, padding no more than any other such multiple does.
void expectLeastPadding(const Problem& p, const MlpBlocking& got, std::int64_t preferred, std::int64_t c_multiple) {
  const std::int64_t step = p.dtype == DType::BF16 && c_multiple % 2 != 0 ? 2 * c_multiple : c_multiple;
  EXPECT_EQ(got.bc % step, 0) << p.describe() << ": bc " << got.bc;
  EXPECT_LE(got.bc, std::max(preferred, step));
  for (std::int64_t bc = step; bc <= preferred; bc += step)
    EXPECT_LE(padding(p, got.bc), padding(p, bc)) << p.describe() << ": bc " << got.bc << " pads more than " << bc;
}

TEST(MlpBlocking, WidthsOfWholeBlocksTakeThePreferredBlock) {
  const Problem p = makeMlpProblem(DType::F32, 256, {1024, 1024, 1024, 1024}, true, Activation::Relu);
  const MlpBlocking b = chooseMlpBlocking(p, {64, 64}, 1, 16);
  EXPECT_EQ(b.bm, 64);
  EXPECT_EQ(b.bc, 64);
}

TEST(MlpBlocking, RowsAreBalancedAsGemmRowsAre) {
  const auto rows = [](std::int64_t m) {
    return chooseMlpBlocking(makeMlpProblem(DType::F32, m, {64, 64}, false, Activation::None), {64, 64}, 1, 16).bm;
  };
  EXPECT_EQ(rows(17), 17);   // one block, no padding
  EXPECT_EQ(rows(100), 50);  // two balanced blocks, not 64 + 36
  EXPECT_EQ(rows(256), 64);
}

TEST(MlpBlocking, ColumnBlocksAreVectorMultiplesThatPadLeast) {
  for (DType dtype : {DType::F32, DType::BF16})
    for (const std::vector<std::int64_t>& widths :
         std::vector<std::vector<std::int64_t>>{{33, 45, 19}, {64, 96, 32, 80}, {40, 24, 56}, {768, 3072, 768}})
      for (std::int64_t c_multiple : {1, 3, 8, 16}) {
        const Problem p = makeMlpProblem(dtype, 48, widths, true, Activation::Relu);
        expectLeastPadding(p, chooseMlpBlocking(p, {64, 64}, 1, c_multiple), 64, c_multiple);
      }
  // 33-45-19 in blocks of 16 pads 15 + 3 + 13 = 31 columns, fewer than 32 (63), 48 (47) or 64 (95).
  EXPECT_EQ(
      chooseMlpBlocking(makeMlpProblem(DType::F32, 17, {33, 45, 19}, false, Activation::None), {64, 64}, 1, 16).bc, 16);
}

TEST(MlpBlocking, Bf16ColumnBlocksAreEven) {
  // f32 takes the single columns that pad nothing; bf16 may not split a VNNI pair.
  EXPECT_EQ(chooseMlpBlocking(makeMlpProblem(DType::F32, 8, {33, 45, 19}, false, Activation::None), {64, 64}, 1, 1).bc,
            1);
  for (std::int64_t c_multiple : {1, 3, 5}) {
    const MlpBlocking b = chooseMlpBlocking(makeMlpProblem(DType::BF16, 8, {33, 45, 19}, false, Activation::None),
                                            {64, 64}, 1, c_multiple);
    EXPECT_EQ(b.bc % 2, 0) << "c_multiple " << c_multiple << ": bc " << b.bc;
    EXPECT_EQ(b.bc % c_multiple, 0);
  }
}

template <class Element>
float widen(Element value) {
  if constexpr (std::is_same_v<Element, BFloat16>)
    return toFloat(value);
  else
    return value;
}

// y_block (bm x bc) = act(sum over k_blocks of A block (bm x bc) * W block (bc x bc) + bias),
// summed in f32, rounded once to Element. W blocks as the driver packs them: plain
// [bc][bc], or VNNI pairs [bc/2][bc][2].
template <class Element>
void plainBlockKernel(const MlpBlocking& b, std::int64_t k_blocks, BLayout w_layout, bool relu, const Element* a,
                      const Element* w, Element* y, const float* bias) {
  for (std::int64_t i = 0; i < b.bm; ++i)
    for (std::int64_t j = 0; j < b.bc; ++j) {
      float sum = 0.0f;
      for (std::int64_t l = 0; l < k_blocks; ++l) {
        const Element* w_block = w + l * b.bc * b.bc;
        for (std::int64_t p = 0; p < b.bc; ++p) {
          const Element weight = w_layout == BLayout::VnniPairs ? w_block[((p / 2) * b.bc + j) * 2 + p % 2]
                                                                : w_block[p * b.bc + j];
          sum += widen(a[(l * b.bm + i) * b.bc + p]) * widen(weight);
        }
      }
      if (bias != nullptr) sum += bias[j];
      if (relu) sum = std::max(sum, 0.0f);
      if constexpr (std::is_same_v<Element, BFloat16>)
        y[i * b.bc + j] = toBFloat16(sum);
      else
        y[i * b.bc + j] = sum;
    }
}

template <class Element>
AlignedBuffer<Element> as(const FloatBuffer& values) {
  AlignedBuffer<Element> out(values.size());
  if constexpr (std::is_same_v<Element, BFloat16>)
    toBFloat16(values.data(), values.size(), out.data());
  else
    std::copy(values.begin(), values.end(), out.begin());
  return out;
}

// Every layer's output through the driver with the plain block kernel, as floats;
// checks the calls the driver makes on the way.
template <class Element>
FloatBuffer runDriver(const Problem& p, const ProblemData& data, const MlpBlocking& blocking, BLayout w_layout,
                      int threads) {
  BlockedMlpOf<Element> blocked(p, blocking, w_layout);
  const AlignedBuffer<Element> x = as<Element>(data.a), w = as<Element>(data.b);
  blocked.pack(x.data(), w.data(), p.mlp.bias ? data.bias.data() : nullptr);
  const std::int64_t layers = blocked.layerCount();
  std::vector<std::atomic<std::int64_t>> calls(static_cast<std::size_t>(layers));
  std::atomic<bool> bias_as_asked{true};
  std::atomic<std::int64_t> latest_layer{0}, out_of_order{0};
  const bool relu = p.mlp.activation == Activation::Relu;
  // Run twice, as the runner does: a layer must not read what it wrote the time before.
  for (int run = 0; run < 2; ++run) {
    latest_layer = 0;
    blocked.compute(
        [&](std::int64_t layer, const Element* a, const Element* w_panel, Element* y, const float* bias) {
          if (layer < latest_layer.load()) ++out_of_order;  // a layer starts when the one before has ended
          latest_layer = std::max(latest_layer.load(), layer);
          if ((bias != nullptr) != p.mlp.bias) bias_as_asked = false;
          ++calls[std::size_t(layer)];
          plainBlockKernel(blocked.blocking(), blocked.kBlocks(layer), w_layout, relu, a, w_panel, y, bias);
        },
        threads);
  }
  EXPECT_EQ(out_of_order.load(), 0);
  EXPECT_TRUE(bias_as_asked.load());
  const std::int64_t row_blocks = blockCount(p.m, blocking.bm);
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    EXPECT_EQ(blocked.kBlocks(layer), blockCount(p.mlp.widths[std::size_t(layer)], blocking.bc));
    EXPECT_EQ(calls[std::size_t(layer)].load(),
              2 * row_blocks * blockCount(p.mlp.widths[std::size_t(layer) + 1], blocking.bc))
        << "layer " << layer;
  }

  AlignedBuffer<Element> y(static_cast<std::size_t>(p.cElements()));
  blocked.unpack(y.data());
  FloatBuffer got(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) got[i] = widen(y[i]);
  return got;
}

struct DriverCase {
  Problem problem;
  MlpBlocking blocking;
};

std::vector<DriverCase> driverCases(DType dtype) {
  std::vector<DriverCase> cases;
  // Widths and rows off every block multiple (padding in rows and columns), narrowing and widening.
  cases.push_back({makeMlpProblem(dtype, 17, {33, 45, 19}, true, Activation::Relu), {8, 16}});
  cases.push_back({makeMlpProblem(dtype, 17, {33, 45, 19}, false, Activation::None), {8, 16}});
  cases.push_back({makeMlpProblem(dtype, 9, {40, 24, 56}, false, Activation::Relu), {4, 6}});
  cases.push_back({makeMlpProblem(dtype, 48, {64, 96, 32, 80}, true, Activation::Relu), {16, 32}});
  cases.push_back({makeMlpProblem(dtype, 70, {31, 130, 3, 7}, true, Activation::None), {32, 10}});
  cases.push_back({makeMlpProblem(dtype, 1, {2, 2}, true, Activation::Relu), {1, 2}});
  return cases;
}

template <class Element>
void expectDriverMatchesReference(DType dtype, BLayout w_layout) {
  for (const DriverCase& c : driverCases(dtype)) {
    const Problem& p = c.problem;
    const auto [data, reference] = checkableMlpData(p, FillMode::ExactInteger);
    FloatBuffer first;
    for (int threads : {1, 2}) {
      SCOPED_TRACE(fmt::format("{}, {}x{} blocks, {} thread(s)", p.describe(), c.blocking.bm, c.blocking.bc, threads));
      const FloatBuffer got = runDriver<Element>(p, data, c.blocking, w_layout, threads);
      const Verification v = verifyResult(p, FillMode::ExactInteger, got.data(), reference);
      EXPECT_EQ(v.status, VerifyStatus::Passed) << toString(v.status) << ": " << v.detail;
      EXPECT_EQ(v.mismatches, 0);
      EXPECT_EQ(v.max_error, 0.0);
      if (threads == 1) {
        first = got;
      } else {
        EXPECT_TRUE(std::equal(got.begin(), got.end(), first.begin())) << "threads change the result";
      }
    }
  }
}

TEST(BlockedMlp, F32DriverReproducesTheReferenceExactly) {
  expectDriverMatchesReference<float>(DType::F32, BLayout::Plain);
}

TEST(BlockedMlp, Bf16DriverWithVnniWeightsReproducesTheReferenceExactly) {
  expectDriverMatchesReference<BFloat16>(DType::BF16, BLayout::VnniPairs);
}

TEST(BlockedMlp, Bf16DriverWithPlainWeightsReproducesTheReferenceExactly) {
  expectDriverMatchesReference<BFloat16>(DType::BF16, BLayout::Plain);
}

// Passes after a layer's blocks: kernels without the epilogue, then the bias
// and the ReLU as two sweeps over the layer's output, give the reference bit
// for bit; each sweep starts when the layer's blocks (and the sweep before
// it) have all been done, and visits every block once.
TEST(BlockedMlp, PassesSweepEachLayersOutputAfterItsBlocks) {
  const Problem p = makeMlpProblem(DType::F32, 17, {33, 45, 19}, true, Activation::Relu);
  const MlpBlocking blocking{8, 16};
  const auto [data, reference] = checkableMlpData(p, FillMode::ExactInteger);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(fmt::format("{} thread(s)", threads));
    BlockedMlp blocked(p, blocking);
    const AlignedBuffer<float> x = as<float>(data.a), w = as<float>(data.b);
    blocked.pack(x.data(), w.data(), data.bias.data());
    // Work done so far: one per block call, then one per block of each sweep.
    std::atomic<std::int64_t> done{0}, early{0};
    std::atomic<std::int64_t> layer_now{0};
    std::int64_t layer_start = 0;  // work done when the layer's blocks began
    const std::int64_t row_blocks = blockCount(p.m, blocking.bm);
    auto blocks_of = [&](std::int64_t layer) {
      return row_blocks * blockCount(p.mlp.widths[std::size_t(layer) + 1], blocking.bc);
    };
    auto sweep = [&](int which) {
      return [&, which](float* y, const float* bias) {
        const std::int64_t layer = layer_now.load();
        // Sweep `which` (1 or 2) sees all of the layer's blocks and the sweeps before it done.
        if (done.load() < layer_start + std::int64_t(which) * blocks_of(layer)) ++early;
        for (std::int64_t i = 0; i < blocking.bm * blocking.bc; ++i)
          y[i] = which == 1 ? y[i] + bias[i % blocking.bc] : std::max(y[i], 0.0f);
        if (++done == layer_start + 3 * blocks_of(layer)) {  // the layer's last piece of work
          layer_start = done.load();
          ++layer_now;
        }
      };
    };
    blocked.compute(
        [&](std::int64_t layer, const float* a, const float* w_panel, float* y, const float*) {
          plainBlockKernel(blocked.blocking(), blocked.kBlocks(layer), BLayout::Plain, false, a, w_panel, y,
                           static_cast<const float*>(nullptr));
          ++done;
        },
        threads, sweep(1), sweep(2));
    EXPECT_EQ(early.load(), 0);
    EXPECT_EQ(layer_now.load(), blocked.layerCount());
    FloatBuffer got(static_cast<std::size_t>(p.cElements()));
    blocked.unpack(got.data());
    const Verification v = verifyResult(p, FillMode::ExactInteger, got.data(), reference);
    EXPECT_EQ(v.status, VerifyStatus::Passed) << v.detail;
    EXPECT_EQ(v.max_error, 0.0);
  }
}

// The layers' blocked outputs start as NaN, as the harness's C does: a block
// kernel that adds its result to the output instead of writing it fails, where
// buffers of zeros made its first call right.
TEST(BlockedMlp, ABlockKernelThatAddsToItsOutputFails) {
  const Problem p = makeMlpProblem(DType::F32, 16, {32, 32, 16}, true, Activation::Relu);
  const MlpBlocking blocking{8, 16};
  const auto [data, reference] = checkableMlpData(p, FillMode::ExactInteger);
  BlockedMlp blocked(p, blocking);
  const AlignedBuffer<float> x = as<float>(data.a), w = as<float>(data.b);
  blocked.pack(x.data(), w.data(), data.bias.data());
  blocked.compute([&](std::int64_t layer, const float* a, const float* w_panel, float* y, const float* bias) {
    std::vector<float> block(std::size_t(blocking.bm * blocking.bc));
    plainBlockKernel(blocked.blocking(), blocked.kBlocks(layer), BLayout::Plain, true, a, w_panel, block.data(), bias);
    for (std::size_t i = 0; i < block.size(); ++i) y[i] += block[i];
  }, 1);
  FloatBuffer got(static_cast<std::size_t>(p.cElements()));
  blocked.unpack(got.data());
  const Verification v = verifyResult(p, FillMode::ExactInteger, got.data(), reference);
  EXPECT_EQ(v.status, VerifyStatus::Failed);
  EXPECT_NE(v.detail.find("layer 1's Y[0,0]=nan"), std::string::npos) << v.detail;
}

TEST(BlockedMlp, RefusesWhatItCannotRun) {
  const Problem f32 = makeMlpProblem(DType::F32, 8, {16, 16}, false, Activation::None);
  EXPECT_THROW(BlockedMlp(test::makeProblem(8, 8, 8, 1, false, OpKind::Gemm), {8, 8}), Error);  // not an mlp
  EXPECT_THROW(Bf16BlockedMlp(f32, {8, 8}), Error);                                             // dtype
  EXPECT_THROW(
      Bf16BlockedMlp(makeMlpProblem(DType::BF16, 8, {16, 16}, false, Activation::None), {8, 5}, BLayout::VnniPairs),
      Error);  // an odd column block would split VNNI pairs
}

}  // namespace
}  // namespace nkbench
