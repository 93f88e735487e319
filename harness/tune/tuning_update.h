// How `tune` updates its tuning file: one class at a time, each put into the
// file as it is then, under a lock, so that tunes writing one file at once
// keep each other's classes; and what becomes of a file that does not hold here.
#pragma once

#include <filesystem>
#include <string>

#include "harness/tune/tuning_file.h"
#include "harness/tune/tuning_fit.h"

namespace nkbench {

struct TuningTarget {
  std::filesystem::path path;
  // No --out and no $NKBENCH_TUNING: a file there that cannot be read or does
  // not hold here is replaced, with a warning; a file named is never replaced.
  bool is_default = false;
  bool from_environment = false;  // named by $NKBENCH_TUNING, not --out
};

// Makes sure the file at `target` can be written before anything is measured:
// its directory made, not a directory itself, its lock file opened. Error, naming
// the file and why, where not.
void prepareTuningTarget(const TuningTarget& target);

// The tuning at `target` that `tune` adds to: the file's, where it exists and
// holds here (tuningUnusable), else empty. A file that cannot be read or does
// not hold: at the default path the tuning is empty and `replaced` says what
// it replaces and why (else it is cleared); elsewhere Error, saying how to go on.
Tuning tuningToUpdate(const TuningTarget& target, const TuningHost& host, const TuningBuild& build,
                      std::string& replaced);

// Puts `tuned` into the file at `target`: under an exclusive lock on PATH.lock
// reads it again (another tune may have put classes since), as tuningToUpdate,
// puts the class, stamps this host, build and time, and writes it atomically.
// Returns the tuning written.
Tuning putTunedClass(const TuningTarget& target, const TunedClass& tuned, const TuningHost& host,
                     const TuningBuild& build, std::string& replaced);

}  // namespace nkbench
