// The tuning file reader on arbitrary bytes: bad content is one line of Error,
// and what it reads is written and read back unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "harness/tune/tuning_file.h"

using namespace nkbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::parseOrError([&] {
    const Tuning tuning = parseTuning(text, "fuzz.json");
    const std::string written = tuningText(tuning);
    const std::string again = tuningText(parseTuning(written, "written.json"));
    fuzz::check(again == written, "a tuning that changes when written and read again", written);
  });
  return 0;
}
