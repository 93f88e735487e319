#include "harness/run/run_metadata.h"

#include <unistd.h>

#include <ctime>

#include "harness/run/build_commit.h"

namespace nkbench {
namespace {

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
  metadata.git_commit = kBuildCommit;
  metadata.date = utcNow();
  metadata.hostname = hostName();
  return metadata;
}

}  // namespace nkbench
