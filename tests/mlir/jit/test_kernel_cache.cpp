// The kernel cache: keyed by everything that decides the code, a hit computes
// what a fresh compile computes, and a damaged entry is rebuilt, never run.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "harness/core/error.h"
#include "kernels/mlir/jit/build_id.h"
#include "kernels/mlir/jit/kernel_cache.h"
#include "kernels/mlir/mlir_compiler.h"
#include "kernels/mlir/schedule/schedule.h"
#include "tests/support/test_problems.h"

namespace nkbench::mlir_backend {
namespace {

namespace fs = std::filesystem;

fs::path freshDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("nkbench-kc-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  return dir;
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::exists(dir)) return files;
  for (const auto& file : fs::directory_iterator(dir))
    if (file.path().extension() == ".kernel") files.push_back(file.path());
  return files;
}

// Small integers: every sum is exact, so results compare bit for bit.
struct ExactOperands {
  std::vector<float> a, b;
  explicit ExactOperands(const Problem& p) : a(std::size_t(p.batch * p.m * p.k)), b(std::size_t(p.batch * p.k * p.n)) {
    std::mt19937 random(7);
    for (float& x : a) x = float(int(random() % 7) - 3);
    for (float& x : b) x = float(int(random() % 5) - 2);
  }
};

// C = sum over the batch of A B (beta 0), through `kernel`.
std::vector<float> runKernel(const CompiledKernel& kernel, const Problem& p) {
  ExactOperands operands(p);
  std::vector<float> c(std::size_t(p.m * p.n), 0.0f);
  kernel.function()(operands.a.data(), operands.b.data(), c.data());
  return c;
}

std::vector<float> expected(const Problem& p) {
  const ExactOperands operands(p);
  std::vector<float> c(std::size_t(p.m * p.n), 0.0f);
  for (std::int64_t i = 0; i < p.batch; ++i)
    for (std::int64_t m = 0; m < p.m; ++m)
      for (std::int64_t k = 0; k < p.k; ++k)
        for (std::int64_t n = 0; n < p.n; ++n)
          c[std::size_t(m * p.n + n)] +=
              operands.a[std::size_t((i * p.m + m) * p.k + k)] * operands.b[std::size_t((i * p.k + k) * p.n + n)];
  return c;
}

const Problem kBlock = test::makeProblem(13, 40, 24, 3, false, OpKind::Brgemm);

Isa hostVectorIsa() { return detectCpuFeatures().has(Isa::Avx512) ? Isa::Avx512 : Isa::Avx2; }

TEST(KernelCacheKey, EveryPartAndItsNameCount) {
  const std::string key = kernelCacheKey({{"payload", "x"}, {"cpu", "znver4"}});
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, kernelCacheKey({{"payload", "x"}, {"cpu", "znver4"}}));
  EXPECT_NE(key, kernelCacheKey({{"payload", "y"}, {"cpu", "znver4"}}));
  EXPECT_NE(key, kernelCacheKey({{"payload", "x"}, {"cpu", "sapphirerapids"}}));
  EXPECT_NE(key, kernelCacheKey({{"payloa", "dx"}, {"cpu", "znver4"}}));  // lengths are hashed too
  EXPECT_NE(key, kernelCacheKey({{"payload", "x"}}));
}

TEST(KernelCacheEntry, DamageOfAnyKindIsDetected) {
  const std::string key(64, 'a');
  const std::string bytes = encodeKernelCacheEntry(key, {"{\"m\": 1}", std::string("\x7f" "ELF\0\1", 6)});
  std::string why;
  const auto entry = decodeKernelCacheEntry(bytes, key, &why);
  ASSERT_TRUE(entry) << why;
  EXPECT_EQ(entry->metadata, "{\"m\": 1}");
  EXPECT_EQ(entry->object, std::string("\x7f" "ELF\0\1", 6));
  EXPECT_FALSE(decodeKernelCacheEntry(bytes, std::string(64, 'b'), &why));
  EXPECT_EQ(why, "an entry of another key");
  for (std::size_t cut : {std::size_t{0}, std::size_t{10}, bytes.size() - 1}) {
    EXPECT_FALSE(decodeKernelCacheEntry(bytes.substr(0, cut), key, &why)) << cut;
  }
  EXPECT_FALSE(decodeKernelCacheEntry(bytes + "x", key, &why));
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    std::string flipped = bytes;
    flipped[at] = char(flipped[at] ^ 0x20);
    EXPECT_FALSE(decodeKernelCacheEntry(flipped, key, &why)) << "byte " << at;
  }
}

TEST(KernelCache, OffStoresNothing) {
  const KernelCache off{fs::path()};
  EXPECT_FALSE(off.enabled());
  EXPECT_FALSE(off.find(std::string(64, 'a')));
  EXPECT_TRUE(kernelCacheDirOf("off").empty());
  EXPECT_EQ(kernelCacheDirOf("/x/y"), fs::path("/x/y"));
}

TEST(KernelCache, AHitComputesWhatAFreshCompileComputes) {
  const fs::path dir = freshDir("hit");
  const Isa isa = hostVectorIsa();
  const Schedule schedule = selectSchedule(isa, DType::F32);
  MlirCompiler first(isa, CacheSizes{}, "", dir.string());
  const auto compiled = first.compile(kBlock, schedule, Lowering::Nanokernel);
  EXPECT_EQ(compiled->cacheUse(), KernelCacheUse::Miss);
  ASSERT_EQ(entries(dir).size(), 1u);
  MlirCompiler second(isa, CacheSizes{}, "", dir.string());
  const auto cached = second.compile(kBlock, schedule, Lowering::Nanokernel);
  EXPECT_EQ(cached->cacheUse(), KernelCacheUse::Hit);
  EXPECT_EQ(cached->evidence().summary, compiled->evidence().summary);
  EXPECT_TRUE(cached->evidence().composed);
  EXPECT_EQ(cached->registerBlocks(), compiled->registerBlocks());
  EXPECT_EQ(cached->times().parse, 0.0) << "a hit runs no MLIR";
  EXPECT_EQ(runKernel(*cached, kBlock), runKernel(*compiled, kBlock));
  EXPECT_EQ(runKernel(*cached, kBlock), expected(kBlock));
  // Another schedule, problem or ISA cap is another entry.
  second.compile(kBlock, selectSchedule(isa, DType::F32, isa == Isa::Avx512 ? "avx512.f32.4x32" : "avx2.f32.4x16"),
                 Lowering::Nanokernel);
  Problem other = kBlock;
  other.batch = 4;
  EXPECT_EQ(second.compile(other, schedule, Lowering::Nanokernel)->cacheUse(), KernelCacheUse::Miss);
  EXPECT_EQ(entries(dir).size(), 3u);
  if (isa == Isa::Avx512) {
    MlirCompiler capped(Isa::Avx2, CacheSizes{}, "", dir.string());
    EXPECT_EQ(capped.compile(kBlock, selectSchedule(Isa::Avx2, DType::F32), Lowering::Nanokernel)->cacheUse(),
              KernelCacheUse::Miss);
  }
}

TEST(KernelCache, ADamagedEntryIsRebuiltNeverRun) {
  const fs::path dir = freshDir("damaged");
  const Isa isa = hostVectorIsa();
  const Schedule schedule = selectSchedule(isa, DType::F32);
  { MlirCompiler(isa, CacheSizes{}, "", dir.string()).compile(kBlock, schedule, Lowering::Nanokernel); }
  ASSERT_EQ(entries(dir).size(), 1u);
  const fs::path entry = entries(dir).front();
  for (const char* damage : {"flip", "truncate", "empty"}) {
    std::string bytes;
    {
      std::ifstream in(entry, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (std::string_view(damage) == "flip") bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0xff);
    if (std::string_view(damage) == "truncate") bytes.resize(bytes.size() / 2);
    if (std::string_view(damage) == "empty") bytes.clear();
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes;
    MlirCompiler compiler(isa, CacheSizes{}, "", dir.string());
    const auto kernel = compiler.compile(kBlock, schedule, Lowering::Nanokernel);
    EXPECT_EQ(kernel->cacheUse(), KernelCacheUse::Miss) << damage;
    EXPECT_EQ(runKernel(*kernel, kBlock), expected(kBlock)) << damage;
    // Rebuilt: the next compiler hits again.
    EXPECT_EQ(MlirCompiler(isa, CacheSizes{}, "", dir.string()).compile(kBlock, schedule, Lowering::Nanokernel)->cacheUse(),
              KernelCacheUse::Hit)
        << damage;
  }
}

TEST(KernelCache, ConcurrentWritersLeaveOneValidEntry) {
  const fs::path dir = freshDir("concurrent");
  const Isa isa = hostVectorIsa();
  const Schedule schedule = selectSchedule(isa, DType::F32);
  std::vector<pid_t> children;
  for (int i = 0; i < 4; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      MlirCompiler compiler(isa, CacheSizes{}, "", dir.string());
      const auto kernel = compiler.compile(kBlock, schedule, Lowering::Nanokernel);
      _exit(runKernel(*kernel, kBlock) == expected(kBlock) ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  ASSERT_EQ(entries(dir).size(), 1u);
  std::size_t leftovers = 0;
  for (const auto& file : fs::directory_iterator(dir)) leftovers += file.path().extension() == ".tmp";
  EXPECT_EQ(leftovers, 0u);
  EXPECT_EQ(MlirCompiler(isa, CacheSizes{}, "", dir.string()).compile(kBlock, schedule, Lowering::Nanokernel)->cacheUse(),
            KernelCacheUse::Hit);
}

TEST(KernelCache, AnUnwritableDirectoryCompilesWithoutIt) {
  const fs::path file = freshDir("blocked");
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "a file where the directory would be";
  const Isa isa = hostVectorIsa();
  MlirCompiler compiler(isa, CacheSizes{}, "", (file / "kernels").string());
  const auto kernel = compiler.compile(kBlock, selectSchedule(isa, DType::F32), Lowering::Nanokernel);
  EXPECT_EQ(runKernel(*kernel, kBlock), expected(kBlock));
  EXPECT_EQ(kernel->cacheUse(), KernelCacheUse::Unstored);  // the row says so, not "miss"
}

// An entry that can be neither read, deleted nor replaced (here a directory in
// its place, which even root cannot delete whole or rename over): the kernel is
// compiled and runs, and the row says it was not stored.
TEST(KernelCache, AnEntryThatCannotBeReplacedIsCompiledAndReportedUnstored) {
  const fs::path dir = freshDir("stuck");
  const Isa isa = hostVectorIsa();
  const Schedule schedule = selectSchedule(isa, DType::F32);
  { MlirCompiler(isa, CacheSizes{}, "", dir.string()).compile(kBlock, schedule, Lowering::Nanokernel); }
  ASSERT_EQ(entries(dir).size(), 1u);
  const fs::path entry = entries(dir).front();
  fs::remove(entry);
  fs::create_directories(entry / "inside");
  const auto kernel = MlirCompiler(isa, CacheSizes{}, "", dir.string()).compile(kBlock, schedule, Lowering::Nanokernel);
  EXPECT_EQ(kernel->cacheUse(), KernelCacheUse::Unstored);
  EXPECT_EQ(runKernel(*kernel, kBlock), expected(kBlock));
  EXPECT_TRUE(fs::is_directory(entry));
}

// Past its size the cache deletes the entries used longest ago (a hit marks
// its entry used), down to three quarters; and temporary files an hour old.
TEST(KernelCache, PruningDeletesTheLeastRecentlyUsedEntriesAndOldTemporaries) {
  const fs::path dir = freshDir("prune");
  const std::uintmax_t entry_bytes = 10'000;
  const KernelCache cache(dir, 8 * entry_bytes);
  const auto now = fs::file_time_type::clock::now();
  std::vector<std::string> keys;
  for (int i = 0; i < 10; ++i) {
    keys.push_back(std::string(63, 'a') + char('0' + i));
    ASSERT_TRUE(cache.store(keys.back(), {"{}", std::string(entry_bytes, 'x')}));
    fs::last_write_time(cache.pathOf(keys.back()), now - std::chrono::minutes(100 - i));  // key 0 the oldest
  }
  ASSERT_TRUE(cache.find(keys[0]));  // used now: the newest
  // Temporaries as store() names them; and files of others in a shared directory.
  const fs::path old_temporary = dir / ("." + keys[1] + ".4242.0.17.tmp"),
                 fresh_temporary = dir / ("." + keys[2] + ".4242.1.18.tmp");
  std::ofstream(old_temporary) << "left by a killed writer";
  std::ofstream(fresh_temporary) << "being written";
  fs::last_write_time(old_temporary, now - std::chrono::hours(2));
  const std::vector<fs::path> others = {dir / "report.tmp", dir / ".draft.tmp", dir / "notes.kernel",
                                        dir / (std::string(64, 'A') + ".kernel")};
  for (const fs::path& other : others) {
    std::ofstream(other) << std::string(entry_bytes, 'o');
    fs::last_write_time(other, now - std::chrono::hours(300));
  }
  cache.prune();
  for (const fs::path& other : others) {
    EXPECT_TRUE(fs::exists(other)) << other;
    fs::remove(other);
  }
  // 10 entries of a little over 10 kB, at most 8 x 10 kB: down to 6 x 10 kB, so 5 remain.
  EXPECT_EQ(entries(dir).size(), 5u);
  EXPECT_TRUE(fs::exists(cache.pathOf(keys[0])));
  for (int i = 1; i <= 5; ++i) EXPECT_FALSE(fs::exists(cache.pathOf(keys[std::size_t(i)]))) << i;
  for (int i = 6; i <= 9; ++i) EXPECT_TRUE(fs::exists(cache.pathOf(keys[std::size_t(i)]))) << i;
  EXPECT_FALSE(fs::exists(old_temporary));
  EXPECT_TRUE(fs::exists(fresh_temporary));
}

// A package update of LLVM or MLIR keeps their sonames: their build ids are
// part of the key, beside the executable's.
TEST(KernelCacheKey, TheLoadedCompilerLibrariesAreIdentified) {
  EXPECT_TRUE(isCompilerLibrary("libLLVM.so.22.1"));
  EXPECT_TRUE(isCompilerLibrary("libMLIR.so.22.1"));
  EXPECT_FALSE(isCompilerLibrary("libstdc++.so.6"));
  EXPECT_FALSE(isCompilerLibrary("mylibLLVM.so"));
  const std::string& ids = compilerBuildId();
  EXPECT_EQ(ids.rfind("exe:", 0), 0u) << ids;
  std::ifstream maps("/proc/self/maps");
  const std::string mapped((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  for (const char* library : {"/libLLVM", "/libMLIR"})
    if (mapped.find(library) != std::string::npos) {
      EXPECT_NE(ids.find(std::string(" ") + (library + 1)), std::string::npos) << library << " is loaded: " << ids;
    }
}

TEST(KernelCache, AHitTakesAboutAMillisecond) {
  const fs::path dir = freshDir("speed");
  const Isa isa = hostVectorIsa();
  const Schedule schedule = selectSchedule(isa, DType::F32);
  MlirCompiler warm(isa, CacheSizes{}, "", dir.string());
  Problem first = kBlock;
  first.batch = 5;
  std::cout << "first:  " << warm.compile(first, schedule, Lowering::Nanokernel)->times().describe() << "\n";
  const auto miss = warm.compile(kBlock, schedule, Lowering::Nanokernel);
  MlirCompiler compiler(isa, CacheSizes{}, "", dir.string());
  const auto hit = compiler.compile(kBlock, schedule, Lowering::Nanokernel);
  std::cout << "miss: " << miss->times().describe() << "\nhit:  " << hit->times().describe() << "\n";
  // Not a performance bar (benchmarks show those), a check that a hit skips the compiler.
  EXPECT_LT(hit->times().total(), miss->times().total() / 4);
}

}  // namespace
}  // namespace nkbench::mlir_backend
