// In a child process running a case: on a memory fault, one line for the
// parent on `fd` ("fault ..." : a read or a write, where, and which operand's
// guard region it hit) before the process dies of the signal as it would have;
// on SIGILL and SIGFPE, death by the signal.
#pragma once

namespace nkbench {

void reportFatalSignalsTo(int fd);

}  // namespace nkbench
