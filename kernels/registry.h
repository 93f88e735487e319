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
  // Empty when built in; otherwise why it is unavailable (e.g. library not found at configure time).
  std::string unavailable_reason;
};

// Every backend name, built or not, in the default order.
std::vector<BackendEntry> knownBackends();
std::vector<std::string> defaultBackendNames();

// Creates a built-in backend. Throws nkbench::Error for an unknown or unavailable name.
std::unique_ptr<Backend> createBackend(const std::string& name, const BackendConfig& config);

}  // namespace nkbench
