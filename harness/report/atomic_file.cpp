#include "harness/report/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace nkbench {
namespace {

// A path that is no regular file (a FIFO, a terminal, /dev/stdout) is written
// as it stands: renaming over it would replace the pipe or device with a file.
void writeThrough(const std::filesystem::path& path, const std::string& text, std::string_view what) {
  std::ofstream out(path, std::ios::out);
  out << text;
  out.flush();
  if (!out) throw Error(fmt::format("{}: cannot write {}: {}", path.string(), what, std::strerror(errno)));
}

}  // namespace

void replaceFileAtomically(const std::filesystem::path& given, const std::string& text, std::string_view what) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(given, error);  // follows links
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
      !std::filesystem::is_directory(status))
    return writeThrough(given, text, what);
  // A link is kept: its target is replaced.
  std::filesystem::path path = given;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(given, error))) {
    const std::filesystem::path target = std::filesystem::weakly_canonical(given, error);
    if (!error) path = target;
  }
  // Same folder as the target, so that the rename stays on one file system.
  std::filesystem::path temporary = path;
  temporary += fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      const std::string reason = std::strerror(errno);
      std::filesystem::remove(temporary, error);
      throw Error(fmt::format("{}: cannot write {}: {}", given.string(), what, reason));
    }
  }
  std::error_code rename_error;
  std::filesystem::rename(temporary, path, rename_error);
  if (rename_error) {
    std::filesystem::remove(temporary, error);
    throw Error(fmt::format("{}: cannot write {}: {}", given.string(), what, rename_error.message()));
  }
}

bool sameFile(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code error;
  if (std::filesystem::equivalent(a, b, error)) return true;
  const std::filesystem::path left = std::filesystem::weakly_canonical(a, error);
  if (error) return false;
  return left == std::filesystem::weakly_canonical(b, error) && !error;
}

void requireNotAnInput(const std::string& option, const std::string& output, const std::vector<std::string>& inputs) {
  if (output.empty()) return;
  for (const std::string& input : inputs)
    if (sameFile(output, input))
      throw Error(fmt::format("{} {} is an input of this command: writing it would destroy it", option, output));
}

}  // namespace nkbench
