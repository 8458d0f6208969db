// Reads a MAVLink XML dialect, with its <include>s, into a Dialect.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "dialect/model.hpp"

namespace mavswitch::dialect {

// Every loader error says where: "file:line: what is wrong".
class DialectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Loads `path` and every file it includes (relative to the including file; each file read once,
// so repeats and include cycles are harmless). Throws DialectError on a missing include,
// malformed XML, an unknown field type, a message without id or name, or two different messages
// sharing an id or a name.
Dialect load_dialect(const std::filesystem::path& path);
// The same for XML already in memory; `path` names it in errors and anchors its <include>s.
Dialect load_dialect_text(std::string_view xml, const std::filesystem::path& path);

}  // namespace mavswitch::dialect
