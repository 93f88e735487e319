// The persistent kernel cache: compiled machine code on disk, keyed by a hash of
// everything that decides it, so that a rerun links kernels instead of
// compiling them. Entries are written whole and atomically (a temporary file
// renamed into place), so concurrent runs, such as the shards of one suite on
// one machine, never read half an entry; each carries its key and a checksum,
// and one that does not match is deleted and rebuilt, never executed. Entries
// that keys of older builds left are never read again: the cache deletes the
// least recently used past a size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nkbench::mlir_backend {

// An entry: the kernel's object code and what its compiler needs beside it
// (its own text, opaque here).
struct KernelCacheEntry {
  std::string metadata;
  std::string object;
};

// SHA-256, as hex, of named parts (name and value both hashed, with their lengths).
std::string kernelCacheKey(const std::vector<std::pair<std::string, std::string>>& parts);

// $NKBENCH_KERNEL_CACHE ("off": none), else $XDG_CACHE_HOME/nkbench/kernels, else
// ~/.cache/nkbench/kernels; empty when off.
std::filesystem::path defaultKernelCacheDir();

// `--kernel-cache DIR|off|auto` as a directory (empty: off).
std::filesystem::path kernelCacheDirOf(const std::string& option);

// Warns, once, where `dir` cannot be written (the cache then only reads). Called
// in the runner before its workers are forked, which then inherit the warning
// said rather than each saying it again.
void warnIfKernelCacheUnwritable(const std::filesystem::path& dir);

inline constexpr const char* kKernelCacheHelp =
    "Compiled mlir kernels kept between runs: DIR, off, or auto: $NKBENCH_KERNEL_CACHE (off: none), else "
    "$XDG_CACHE_HOME/nkbench/kernels (~/.cache/nkbench/kernels)";

class KernelCache {
 public:
  // Entries least recently used are deleted past this size (prune).
  static constexpr std::uintmax_t kDefaultMaxBytes = std::uintmax_t{256} << 20;

  // An empty directory turns the cache off. The directory is made on first store.
  explicit KernelCache(std::filesystem::path dir, std::uintmax_t max_bytes = kDefaultMaxBytes);
  bool enabled() const { return !dir_.empty(); }
  const std::filesystem::path& dir() const { return dir_; }

  // The entry stored under `key`, marked as used now; nullopt when there is
  // none, or when it is damaged (then it is deleted where it can be, and the
  // first such case in the process says so on stderr in one line).
  std::optional<KernelCacheEntry> find(const std::string& key) const;
  // Stores `entry` under `key`; false when it could not (the first such case
  // in the process says why on stderr in one line; the run goes on without
  // storing). The first store of a process prunes the directory.
  bool store(const std::string& key, const KernelCacheEntry& entry) const;
  // Deletes entries, least recently used first, while they take more than the
  // cache's size, down to three quarters of it; and temporary files an hour
  // old, which a writer killed between writing and renaming left.
  void prune() const;

  std::filesystem::path pathOf(const std::string& key) const;

 private:
  std::filesystem::path dir_;
  std::uintmax_t max_bytes_;
};

// The bytes of an entry file, and their check: nullopt with `why` when damaged.
std::string encodeKernelCacheEntry(const std::string& key, const KernelCacheEntry& entry);
std::optional<KernelCacheEntry> decodeKernelCacheEntry(std::string_view bytes, const std::string& key,
                                                       std::string* why);

}  // namespace nkbench::mlir_backend
