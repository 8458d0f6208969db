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
// ../shared beside the checkout (the project's machines have it); empty when it is not there.
std::filesystem::path shared_dir();
std::vector<uint8_t> read_bytes(const std::filesystem::path& path);

// A frame copied out of the parser's buffer, with the parser's verdict.
struct ParsedFrame {
  std::vector<uint8_t> bytes;
  bool verified;
  bool operator==(const ParsedFrame&) const = default;
};

// Parses `data` with the built-in dialect, fed in chunks of the given sizes (cycled; {} = whole).
std::vector<ParsedFrame> parse_all(const std::vector<uint8_t>& data, const std::vector<size_t>& chunk_sizes,
                                   protocol::ParserStats* stats = nullptr);

// A fresh directory named after the running test, removed when the object goes.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  // Writes text to a file in the directory and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

// A small tmpfs of its own at `at`, so that a test can fill a disk; unmounted by the destructor.
// Mounting needs root (CI has it): a test skips, saying so, when mounted() is false.
class SmallDisk {
 public:
  SmallDisk(const std::filesystem::path& at, const char* size);
  ~SmallDisk();
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return mounted_; }
  // Takes all but `leave` bytes of the free space, in `file`.
  void fill(const std::filesystem::path& file, uint64_t leave);

 private:
  std::filesystem::path at_;
  bool mounted_ = false;
};

// Runs a shell command; returns its exit status and captures stdout (and stderr if asked).
int run_command(const std::string& command, std::string* out);
// The path of a program on the PATH, or empty when it is not installed.
std::string found_program(const std::string& name);

}  // namespace mavswitch::test
