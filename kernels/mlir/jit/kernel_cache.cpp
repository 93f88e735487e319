#include "kernels/mlir/jit/kernel_cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <sstream>

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

namespace nkbench::mlir_backend {
namespace {

constexpr std::string_view kMagic = "nkbench-kernel-cache 1\n";
constexpr std::size_t kDigestBytes = 32;
// An entry larger than this is no entry of ours.
constexpr std::size_t kMaxEntryBytes = std::size_t{256} << 20;

llvm::ArrayRef<uint8_t> bytesOf(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

std::string digestOf(std::string_view text) {
  const auto digest = llvm::SHA256::hash(bytesOf(text));
  return std::string(digest.begin(), digest.end());
}

// Reads "DECIMAL\n" at `pos`.
std::optional<std::size_t> readLength(std::string_view bytes, std::size_t& pos) {
  const std::size_t end = bytes.find('\n', pos);
  if (end == std::string_view::npos || end == pos || end - pos > 12) return std::nullopt;
  std::size_t value = 0;
  const auto [ptr, error] = std::from_chars(bytes.data() + pos, bytes.data() + end, value);
  if (error != std::errc() || ptr != bytes.data() + end) return std::nullopt;
  pos = end + 1;
  return value;
}

// The names the cache gives its files (pathOf, store's temporaries
// ".KEY.PID.SERIAL.RANDOM.tmp", KEY the 64 hex digits of a SHA-256): prune()
// deletes nothing else, whatever directory it is pointed at.
bool isEntryName(const std::string& name) {
  static const std::regex entry("[0-9a-f]{64}\\.kernel");
  return std::regex_match(name, entry);
}

bool isTemporaryName(const std::string& name) {
  static const std::regex temporary("\\.[0-9a-f]{64}\\.[0-9]+\\.[0-9]+\\.[0-9]+\\.tmp");
  return std::regex_match(name, temporary);
}

void warnOnce(std::atomic<bool>& said, const std::string& line) {
  if (!said.exchange(true)) std::cerr << "warning: " << line << "\n";
}

std::atomic<bool> damage_said{false};

std::string unwritableWarning(const std::filesystem::path& dir, const std::error_code& error) {
  return fmt::format("kernel cache {} cannot be written ({}): kernels are compiled without it", dir.string(),
                     error.message());
}
std::atomic<bool> store_said{false};

}  // namespace

std::string kernelCacheKey(const std::vector<std::pair<std::string, std::string>>& parts) {
  llvm::SHA256 hash;
  for (const auto& [name, value] : parts)
    for (const std::string& text : {name, value}) {
      const std::string length = std::to_string(text.size()) + ":";
      hash.update(bytesOf(length));
      hash.update(bytesOf(text));
    }
  return llvm::toHex(hash.final(), true);
}

std::filesystem::path defaultKernelCacheDir() {
  // "auto" there means what it means on the command line: the default below.
  if (const char* set = std::getenv("NKBENCH_KERNEL_CACHE"); set && *set && std::string_view(set) != "auto")
    return std::string_view(set) == "off" ? std::filesystem::path() : std::filesystem::path(set);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "nkbench" / "kernels";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".cache" / "nkbench" / "kernels";
}

std::filesystem::path kernelCacheDirOf(const std::string& option) {
  if (option == "off") return {};
  if (option == "auto" || option.empty()) return defaultKernelCacheDir();
  return option;
}

void warnIfKernelCacheUnwritable(const std::filesystem::path& dir) {
  if (dir.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (!error && ::access(dir.c_str(), W_OK) != 0) error = std::error_code(errno, std::generic_category());
  if (!error && !std::filesystem::is_directory(dir, error) && !error)
    error = std::make_error_code(std::errc::not_a_directory);
  if (error) warnOnce(store_said, unwritableWarning(dir, error));
}

std::string encodeKernelCacheEntry(const std::string& key, const KernelCacheEntry& entry) {
  std::string bytes = fmt::format("{}{}\n{}\n{}\n", kMagic, key, entry.metadata.size(), entry.object.size());
  bytes += entry.metadata;
  bytes += entry.object;
  bytes += digestOf(bytes);
  return bytes;
}

std::optional<KernelCacheEntry> decodeKernelCacheEntry(std::string_view bytes, const std::string& key,
                                                       std::string* why) {
  auto damaged = [&](const char* what) -> std::optional<KernelCacheEntry> {
    *why = what;
    return std::nullopt;
  };
  if (bytes.size() < kMagic.size() + kDigestBytes || bytes.substr(0, kMagic.size()) != kMagic)
    return damaged("not an entry of this format");
  std::size_t pos = kMagic.size();
  if (bytes.substr(pos, key.size() + 1) != key + "\n") return damaged("an entry of another key");
  pos += key.size() + 1;
  const auto metadata_size = readLength(bytes, pos);
  const auto object_size = readLength(bytes, pos);
  if (!metadata_size || !object_size) return damaged("its lengths are unreadable");
  if (bytes.size() - pos != *metadata_size + *object_size + kDigestBytes) return damaged("truncated or overlong");
  const std::string_view body = bytes.substr(0, bytes.size() - kDigestBytes);
  if (digestOf(body) != bytes.substr(body.size())) return damaged("its checksum does not match");
  return KernelCacheEntry{std::string(bytes.substr(pos, *metadata_size)),
                          std::string(bytes.substr(pos + *metadata_size, *object_size))};
}

KernelCache::KernelCache(std::filesystem::path dir, std::uintmax_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes) {}

std::filesystem::path KernelCache::pathOf(const std::string& key) const { return dir_ / (key + ".kernel"); }

std::optional<KernelCacheEntry> KernelCache::find(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  const std::filesystem::path path = pathOf(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes;
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (!error && size <= kMaxEntryBytes) {
    bytes.resize(size);
    in.read(bytes.data(), std::streamsize(size));
    bytes.resize(std::size_t(in.gcount()));
  }
  std::string why = error ? "unreadable" : size > kMaxEntryBytes ? "too large" : "";
  std::optional<KernelCacheEntry> entry;
  if (why.empty()) entry = decodeKernelCacheEntry(bytes, key, &why);
  if (entry) {
    // Used now: prune() deletes the least recently used first. Best effort (a read-only cache still hits).
    std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), error);
    return entry;
  }
  if (std::filesystem::remove(path, error))
    warnOnce(damage_said, fmt::format("kernel cache entry {} is damaged ({}): deleted and compiled again",
                                      path.string(), why));
  else
    warnOnce(damage_said, fmt::format("kernel cache entry {} is damaged ({}) and cannot be deleted ({}): compiled "
                                      "again",
                                      path.string(), why, error.message()));
  return std::nullopt;
}

bool KernelCache::store(const std::string& key, const KernelCacheEntry& entry) const {
  if (!enabled()) return false;
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  // Unique per process and call: concurrent writers of one key each rename a whole file.
  static std::atomic<unsigned> serial{0};
  const std::filesystem::path temporary =
      dir_ / fmt::format(".{}.{}.{}.{}.tmp", key, ::getpid(), serial++, std::random_device{}());
  if (!error) {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    const std::string bytes = encodeKernelCacheEntry(key, entry);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    if (!out) error = std::error_code(errno != 0 ? errno : EIO, std::generic_category());
  }
  if (!error) std::filesystem::rename(temporary, pathOf(key), error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    warnOnce(store_said, unwritableWarning(dir_, error));
    return false;
  }
  static std::atomic<bool> pruned{false};
  if (!pruned.exchange(true)) prune();
  return true;
}

void KernelCache::prune() const {
  namespace fs = std::filesystem;
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    std::uintmax_t bytes;
  };
  std::vector<Entry> entries;
  std::uintmax_t total = 0;
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  std::error_code error;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    const bool temporary = isTemporaryName(name);
    if (!temporary && !isEntryName(name)) continue;  // not the cache's: a directory shared with other files
    std::error_code stat_error;
    const fs::file_time_type used = fs::last_write_time(path, stat_error);
    const std::uintmax_t bytes = fs::file_size(path, stat_error);
    if (stat_error) continue;  // gone meanwhile: another process pruned it
    if (temporary) {
      if (used < hour_ago) fs::remove(path, stat_error);  // left by a writer that died
      continue;
    }
    entries.push_back({path, used, bytes});
    total += bytes;
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& entry : entries) {
    if (total <= max_bytes_ / 4 * 3) break;
    if (fs::remove(entry.path, error)) total -= entry.bytes;
  }
}

}  // namespace nkbench::mlir_backend
