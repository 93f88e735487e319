#include "harness/run/run_metadata.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <memory>

namespace nkbench {
namespace {

std::string gitCommit() {
  const std::string command = "git -C '" NKBENCH_SOURCE_DIR "' rev-parse --short=12 HEAD 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return "unknown";
  std::array<char, 64> buffer{};
  std::string out;
  while (fgets(buffer.data(), int(buffer.size()), pipe.get())) out += buffer.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.empty() ? "unknown" : out;
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string hostName() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

}  // namespace

RunMetadata collectRunMetadata(const CpuFeatures& features) {
  RunMetadata metadata;
  metadata.cpu_model = features.brand;
  metadata.isa_flags = features.flagNames();
  metadata.compiler = NKBENCH_COMPILER;
  metadata.git_commit = gitCommit();
  metadata.date = utcNow();
  metadata.hostname = hostName();
  return metadata;
}

}  // namespace nkbench
