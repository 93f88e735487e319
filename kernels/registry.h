// Names of the backends nkbench knows and how to create them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace nkbench {

struct BackendEntry {
  std::string name;
  std::string description;
};

// Every backend, in the default report order. A backend whose library was not
// found at build time still exists and reports each case as skipped, with why.
std::vector<BackendEntry> knownBackends();
std::vector<std::string> defaultBackendNames();

// Throws nkbench::Error for an unknown name, listing the known ones.
std::unique_ptr<Backend> createBackend(const std::string& name, const BackendConfig& config);

}  // namespace nkbench
