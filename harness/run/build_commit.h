// The commit this nkbench was built from (cmake/BuildCommit.cmake), with
// "-dirty" where the checkout had changes then: what a report records, fixed
// at build time rather than read from the checkout as it is when nkbench runs.
#pragma once

namespace nkbench {

extern const char* const kBuildCommit;

}  // namespace nkbench
