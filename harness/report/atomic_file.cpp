#include "harness/report/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace nkbench {

void replaceFileAtomically(const std::filesystem::path& path, const std::string& text, std::string_view what) {
  // Same folder as the target, so that the rename stays on one file system.
  std::filesystem::path temporary = path;
  temporary += fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      const std::string reason = std::strerror(errno);
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw Error(fmt::format("{}: cannot write {}: {}", temporary.string(), what, reason));
    }
  }
  std::error_code rename_error;
  std::filesystem::rename(temporary, path, rename_error);
  if (rename_error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw Error(fmt::format("{}: cannot write {}: {}", path.string(), what, rename_error.message()));
  }
}

}  // namespace nkbench
