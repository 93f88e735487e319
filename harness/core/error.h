#pragma once

#include <stdexcept>
#include <string>

namespace nkbench {

// An error with a message meant for the user, printed as one line.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nkbench
