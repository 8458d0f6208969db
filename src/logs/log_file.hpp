// One log file being written, for the telemetry and the flight log alike: created with O_EXCL
// under mavlink-router's name for the next index, appended to in whole records (an append that
// fails part-way is cut back, so no reader meets half a record) or written at offsets, and at
// close finished read-only, or removed when nothing was written (no empty logs).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace mavswitch::logs {

class LogFile {
 public:
  LogFile() = default;
  ~LogFile() { close(); }
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // A new log in dir (made if it is missing); false, with errno, when it cannot be created.
  bool open(const std::filesystem::path& dir, const std::string& extension);
  bool is_open() const noexcept { return fd_ >= 0; }
  const std::filesystem::path& path() const noexcept { return path_; }
  // 0, or the errno of a write that failed (then the file holds what it held before).
  int append(std::span<const uint8_t> bytes);
  int write_at(std::span<const uint8_t> bytes, uint64_t offset);
  void sync();
  void close();

 private:
  int write_all(std::span<const uint8_t> bytes, const uint64_t* offset);

  int fd_ = -1;
  std::filesystem::path path_;
  uint64_t appended_ = 0;  // bytes of whole records appended
  bool written_ = false;
};

}  // namespace mavswitch::logs
