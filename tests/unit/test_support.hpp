// Shared helpers for the tests: where the real data lives, and small utilities.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/frame.hpp"
#include "protocol/parser.hpp"

namespace mavswitch::test {

std::filesystem::path definitions_dir();
std::filesystem::path captures_dir();
std::vector<uint8_t> read_bytes(const std::filesystem::path& path);

// A frame copied out of the parser's buffer, with the parser's verdict.
struct OwnedFrame {
  std::vector<uint8_t> bytes;
  bool verified;
  bool operator==(const OwnedFrame&) const = default;
};

// Parses `data` with the built-in dialect, fed in chunks of the given sizes (cycled; {} = whole).
std::vector<OwnedFrame> parse_all(const std::vector<uint8_t>& data, const std::vector<size_t>& chunk_sizes,
                                  protocol::ParserStats* stats = nullptr);

// Runs a shell command; returns its exit status and captures stdout (and stderr if asked).
int run_command(const std::string& command, std::string* out);

}  // namespace mavswitch::test
