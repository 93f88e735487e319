// What the fuzz targets hold every input to. Bad input may only end in an
// nkbench::Error whose message is one line; any other exception escapes the
// target, and a broken property aborts, so libFuzzer keeps the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "harness/core/error.h"

namespace nkbench::fuzz {

[[noreturn]] inline void fail(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "fuzz property broken: %.*s: %.*s\n", int(what.size()), what.data(), int(detail.size()),
               detail.data());
  std::abort();
}

inline void check(bool holds, std::string_view what, std::string_view detail = "") {
  if (!holds) fail(what, detail);
}

// Runs `parse`; an Error it throws must carry a message of one non-empty line.
template <typename Parse>
void parseOrError(Parse&& parse) {
  try {
    parse();
  } catch (const Error& error) {
    const std::string_view message = error.what();
    check(!message.empty(), "an Error without a message");
    check(message.find_first_of("\n\r") == std::string_view::npos, "an Error message of several lines", message);
  }
}

}  // namespace nkbench::fuzz
