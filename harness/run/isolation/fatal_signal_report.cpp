#include "harness/run/isolation/fatal_signal_report.h"

#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "harness/core/memory/guard_registry.h"

namespace nkbench {
namespace {

int g_fd = -1;

// Async-signal-safe text building: no allocation, no locale, no stdio.
class Line {
 public:
  Line& add(const char* text) {
    for (; *text && size_ < sizeof text_ - 1; ++text) text_[size_++] = *text;
    return *this;
  }
  Line& hex(std::uintptr_t value) {
    char digits[2 * sizeof value];
    int n = 0;
    do digits[n++] = "0123456789abcdef"[value & 0xf], value >>= 4;
    while (value && n < int(sizeof digits));
    add("0x");
    while (n > 0 && size_ < sizeof text_ - 1) text_[size_++] = digits[--n];
    return *this;
  }
  void writeTo(int fd) {
    text_[size_++] = '\n';
    [[maybe_unused]] const auto written = ::write(fd, text_, size_);
  }

 private:
  char text_[256];
  std::size_t size_ = 0;
};

// x86-64: bit 1 of the page fault's error code says write.
bool faultWasWrite(const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
  return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
}

void onFatalSignal(int signal, siginfo_t* info, void* context) {
  // A fault the kernel raised (si_code > 0) has an address; a raise() or kill() has none.
  if (g_fd >= 0 && (signal == SIGSEGV || signal == SIGBUS) && info->si_code > 0) {
    Line line;
    GuardHit hit;
    if (findGuardHit(info->si_addr, &hit)) {  // an operand's guard: name it rather than the address
      hit.access = faultWasWrite(context) ? GuardAccess::Write : GuardAccess::Read;
      char text[160];
      formatGuardHit(hit, text);
      line.add("fault ").add(text);
    } else {
      line.add("fault ").add(faultWasWrite(context) ? "a write to " : "a read of ");
      line.hex(reinterpret_cast<std::uintptr_t>(info->si_addr));
    }
    line.writeTo(g_fd);
  }
  // SA_RESETHAND restored the default action: die of the signal, as without the handler.
  ::raise(signal);
}

}  // namespace

void reportFatalSignalsTo(int fd) {
  g_fd = fd;
  struct sigaction action {};
  action.sa_sigaction = onFatalSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
  // SIGILL and SIGFPE too, so that the child dies of them whatever handler was
  // there before (a sanitizer's would turn them into an exit status).
  for (int signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE}) sigaction(signal, &action, nullptr);
}

}  // namespace nkbench
