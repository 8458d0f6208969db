// Writes every frame the router receives to .tlog files (8-byte big-endian microsecond
// timestamp + frame, as QGroundControl and MAVProxy write them), named as mavlink-router names
// them (NNNNN-YYYY-MM-DD_HH-MM-SS.tlog), rotated by size, keeping at most MaxLogFiles and at
// least MinFreeSpace bytes free on the disk. A log starts with the vehicle's first heartbeat
// (LogSystemId's, or the first autopilot's); in while-armed mode a file spans one arming.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "daemon/config.hpp"
#include "protocol/frame.hpp"

namespace mavswitch::daemon {

struct TelemetryLogOptions {
  std::filesystem::path dir;
  uint64_t max_size = 64ull << 20;  // bytes per file; 0: no rotation
  unsigned max_files = 0;           // 0: no limit
  uint64_t min_free_space = 0;      // bytes; 0: no guard
  LogMode mode = LogMode::kAlways;
  std::optional<uint8_t> system_id;  // the vehicle whose arming counts (while-armed)
};

class TelemetryLog {
 public:
  explicit TelemetryLog(TelemetryLogOptions options);
  ~TelemetryLog();
  TelemetryLog(const TelemetryLog&) = delete;
  TelemetryLog& operator=(const TelemetryLog&) = delete;

  void write(const protocol::FrameView& frame);
  void flush();  // to the kernel; called periodically and at exit
  void close();

  const std::filesystem::path& current_file() const noexcept { return path_; }
  uint64_t frames_written() const noexcept { return frames_; }

 private:
  void open_file();
  void enforce_limits();
  bool from_our_vehicle(const protocol::FrameView& frame);
  void watch_arming(const protocol::FrameView& frame);

  TelemetryLogOptions options_;
  std::FILE* file_ = nullptr;
  std::filesystem::path path_;
  uint64_t size_ = 0;
  uint64_t frames_ = 0;
  bool started_ = false;  // always: the vehicle's first heartbeat was seen
  bool armed_ = false;
  bool out_of_space_ = false;
};

}  // namespace mavswitch::daemon
