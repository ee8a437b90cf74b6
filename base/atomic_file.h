// Files that readers see whole or not at all, even across the nodes of a
// cluster sharing the folder.
#pragma once

#include <string>

namespace pfsim {

// A name for a temporary file or folder beside `path` that no concurrent
// writer shares: PATH.tmp.HOST.PID.RANDOM. Host and process alone are not
// enough: processes in other PID namespaces (containers, sandboxes) on one
// host may have the same process id.
std::string temporary_name(const std::string& path);

// Writes `content` to a temporary file beside `path` (temporary_name), then
// renames it over `path`. Throws std::runtime_error naming the path when a byte does
// not reach the disk or the rename fails; the temporary file is removed then.
void write_atomically(const std::string& path, const std::string& content);

// The whole file at `path` into *text; false (and *text empty) when it is not
// a readable file.
bool read_whole_file(const std::string& path, std::string* text);

}  // namespace pfsim
