// Replacing a report file so that readers never see it half-written.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nkbench {

// Writes `text` to a temporary file beside `path`, then renames it over `path`:
// a reader or a crash sees the old file or the new one, never a mix. Throws
// Error naming the file and `what` (e.g. "JSON report") on failure. A
// symbolic link stays, its target is replaced; a path that is no regular file
// (a FIFO, /dev/stdout) is written through, not renamed over.
void replaceFileAtomically(const std::filesystem::path& path, const std::string& text, std::string_view what);

// Whether `a` and `b` name one file: the same inode, or the same path once
// resolved (for files not there yet).
bool sameFile(const std::filesystem::path& a, const std::filesystem::path& b);

// Error where `output` (given by `option`) names one of `inputs`: a report
// written over what it was made from.
void requireNotAnInput(const std::string& option, const std::string& output, const std::vector<std::string>& inputs);

}  // namespace nkbench
