// Replacing a report file so that readers never see it half-written.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace nkbench {

// Writes `text` to a temporary file beside `path`, then renames it over `path`:
// a reader or a crash sees the old file or the new one, never a mix. Throws
// Error naming the file and `what` (e.g. "JSON report") on failure. A
// symbolic link stays, its target is replaced; a path that is no regular file
// (a FIFO, /dev/stdout) is written through, not renamed over.
void replaceFileAtomically(const std::filesystem::path& path, const std::string& text, std::string_view what);

}  // namespace nkbench
