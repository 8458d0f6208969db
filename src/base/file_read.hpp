// Reading a file a user named (a configuration, a key, a dialect): only a regular file, and
// only up to a size, so that a directory, a FIFO or /dev/zero given by mistake is an error
// that names it, never a hang, a crash or unbounded memory.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace mavswitch {

// The file's bytes; nullopt with `error` set to "PATH: what is wrong" otherwise.
std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes, std::string* error);

}  // namespace mavswitch
