#include "harness/tune/tuning_update.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "harness/core/error.h"

namespace nkbench {
namespace {

// An exclusive flock on PATH.lock while it lives. The lock file stays: removing
// it would let a tune that opened it before the removal lock a file no other sees.
class TuningFileLock {
 public:
  explicit TuningFileLock(const std::filesystem::path& path) {
    const std::string lock_path = path.string() + ".lock";
    fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(fmt::format("tuning file {}: cannot open {} ({})", path.string(), lock_path, std::strerror(errno)));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd_);
      throw Error(fmt::format("tuning file {}: cannot lock {} ({})", path.string(), lock_path, std::strerror(error)));
    }
  }
  ~TuningFileLock() { ::close(fd_); }  // closing releases the lock
  TuningFileLock(const TuningFileLock&) = delete;
  TuningFileLock& operator=(const TuningFileLock&) = delete;

 private:
  int fd_ = -1;
};

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// Why the file at `path` cannot be updated, or nullopt with `tuning` read.
std::optional<std::string> readToUpdate(const std::filesystem::path& path, const TuningHost& host,
                                        const TuningBuild& build, Tuning& tuning) {
  try {
    tuning = readTuningFile(path);
  } catch (const Error& error) {
    // The reader's errors start with "tuning file PATH: ", which the callers say themselves.
    std::string why = error.what();
    const std::string prefix = fmt::format("tuning file {}: ", path.string());
    if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
    return why;
  }
  return tuningUnusable(tuning, path.string(), host, build);
}

void createDirectoryOf(const std::filesystem::path& path) {
  std::error_code error;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
  if (error) throw Error(fmt::format("tuning file {}: cannot create its directory ({})", path.string(), error.message()));
}

}  // namespace

void prepareTuningTarget(const TuningTarget& target) {
  createDirectoryOf(target.path);
  std::error_code error;
  if (std::filesystem::is_directory(target.path, error))
    throw Error(fmt::format("tuning file {}: is a directory", target.path.string()));
  const TuningFileLock lock(target.path);
  // The file is written as a temporary beside it, then renamed.
  const std::filesystem::path dir = target.path.has_parent_path() ? target.path.parent_path() : ".";
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(fmt::format("tuning file {}: its directory cannot be written ({})", target.path.string(),
                            std::strerror(errno)));
}

Tuning tuningToUpdate(const TuningTarget& target, const TuningHost& host, const TuningBuild& build,
                      std::string& replaced) {
  replaced.clear();
  std::error_code error;
  if (!std::filesystem::exists(target.path, error)) return {};
  Tuning tuning;
  const std::optional<std::string> why = readToUpdate(target.path, host, build, tuning);
  if (!why) return tuning;
  if (!target.is_default)
    throw Error(fmt::format("the tuning file {}{} cannot be updated: {}; remove it, or tune into another file (--out)",
                            target.path.string(), target.from_environment ? " (NKBENCH_TUNING)" : "", *why));
  replaced = fmt::format("replacing the tuning file {}: {}", target.path.string(), *why);
  return {};
}

Tuning putTunedClass(const TuningTarget& target, const TunedClass& tuned, const TuningHost& host,
                     const TuningBuild& build, std::string& replaced) {
  createDirectoryOf(target.path);
  const TuningFileLock lock(target.path);
  Tuning tuning = tuningToUpdate(target, host, build, replaced);
  tuning.host = host;
  tuning.nkbench_version = build.nkbench_version;
  tuning.llvm_version = build.llvm_version;
  tuning.created = utcNow();
  tuning.put(tuned);
  writeTuningFile(target.path, tuning);
  return tuning;
}

}  // namespace nkbench
