# Writes OUTPUT, a C++ source that defines nkbench::kBuildCommit: the commit of
# the checkout at SOURCE_DIR that the build compiled, "-dirty" where tracked
# files differed from it, "unknown" outside a git checkout. Run at every build
# (a target of its own), the file is rewritten only when that changes, so a
# build after a commit recompiles one file and relinks.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed ERROR_QUIET)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
else()
  # --no-optional-locks: a build must not take the index lock from a commit the user runs meanwhile.
  execute_process(COMMAND git --no-optional-locks -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(NOT changes STREQUAL "")
    string(APPEND commit "-dirty")
  endif()
endif()
set(text "// Generated at build time by cmake/BuildCommit.cmake.\n#include \"harness/run/build_commit.h\"\n\nnamespace nkbench {\nconst char* const kBuildCommit = \"${commit}\";\n}  // namespace nkbench\n")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
