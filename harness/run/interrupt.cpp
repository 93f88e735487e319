#include "harness/run/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace nkbench {
namespace {

std::atomic<int> g_requests{0};
std::atomic<pid_t> g_child{0};
struct sigaction g_previous_int, g_previous_term;

void write2(const char* text) { [[maybe_unused]] auto written = ::write(STDERR_FILENO, text, std::strlen(text)); }

// Async-signal-safe: an atomic, write(2), kill(2), _exit(2).
void onInterrupt(int) {
  if (g_requests.fetch_add(1) == 0) {
    write2("\nnkbench: stopping after the current case (interrupt again to stop now)\n");
    return;
  }
  if (const pid_t child = g_child.load(); child > 0) ::kill(child, SIGKILL);
  write2("\nnkbench: stopped; the reports hold the cases that completed\n");
  ::_exit(kExitInterrupted);
}

}  // namespace

InterruptScope::InterruptScope() {
  g_requests = 0;
  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

bool interruptRequested() { return g_requests.load() > 0; }

void setRunningChild(pid_t child) { g_child = child; }

}  // namespace nkbench
