// Ctrl-C (SIGINT) and SIGTERM during a run: the first asks the run to stop
// after the case in progress, so that its reports stay valid and list what
// ran; a second stops at once (a child process running a case is killed).
#pragma once

#include <sys/types.h>

namespace nkbench {

// Installs the handlers for its lifetime and restores the previous ones after.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

// Whether a stop was asked for since the scope began.
bool interruptRequested();

// The child process running the current case (0: none): a second signal kills it.
void setRunningChild(pid_t child);

// Exit status of a run that stopped early: 128 + SIGINT, as shells report it.
inline constexpr int kExitInterrupted = 130;

}  // namespace nkbench
