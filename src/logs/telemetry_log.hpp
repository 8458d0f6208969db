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
#include <vector>

#include "base/log.hpp"
#include "config/config.hpp"
#include "logs/log_file.hpp"
#include "logs/logged_vehicle.hpp"
#include "protocol/frame.hpp"

namespace mavswitch::logs {

struct TelemetryLogOptions {
  std::filesystem::path dir;
  uint64_t max_size = 64ull << 20;  // bytes per file; 0: no rotation
  unsigned max_files = 0;           // 0: no limit
  uint64_t min_free_space = 0;      // bytes; 0: no guard
  config::LogMode mode = config::LogMode::kAlways;
  std::optional<uint8_t> system_id;  // the vehicle whose arming counts (while-armed)
  // The flight log's transfer (REMOTE_LOG_*, LOGGING_*): most of a tlog's bytes while a flight log
  // streams, and already in the .ulg or .bin. Left out unless asked for.
  bool flight_log_data = false;
};

// What the log has done, for the statistics.
struct TelemetryLogStats {
  uint64_t frames_written = 0;  // whole records on the disk
  uint64_t bytes_written = 0;
  uint64_t frames_lost = 0;  // to be logged but not written: disk full, no directory, a write error
  uint64_t pauses = 0;
  uint64_t left_out = 0;  // flight log transfer frames not written (TelemetryLogFlightLogData)
  bool paused = false;
};

// Writes whole records only: they gather in a buffer and leave in one write(2); a write that
// fails part-way is cut back to the last whole record, so a file never holds a torn one.
// Trouble (a full disk, the directory gone or not writable, MinFreeSpace reached) pauses
// logging with one error line naming the cause; tick() resumes it, in a new file, once it can.
class TelemetryLog {
 public:
  explicit TelemetryLog(TelemetryLogOptions options);
  ~TelemetryLog();
  TelemetryLog(const TelemetryLog&) = delete;
  TelemetryLog& operator=(const TelemetryLog&) = delete;

  void write(const protocol::FrameView& frame);
  // Once a second: what is buffered to the disk, MinFreeSpace checked, a pause retried.
  void tick();
  void close();

  const std::filesystem::path& current_file() const noexcept { return file_.path(); }
  uint64_t frames_written() const noexcept { return stats_.frames_written; }
  TelemetryLogStats stats() const noexcept {
    TelemetryLogStats s = stats_;
    s.paused = !paused_why_.empty();
    return s;
  }

 private:
  bool wanted() const noexcept;  // a file should be open now
  void open_file();
  void finish_file();
  bool drain();  // the buffer to the disk; false (and paused) when it could not be
  void pause(const char* cause, const std::string& why);
  bool short_of_space();  // deletes the oldest logs first; true when MinFreeSpace still does not hold

  TelemetryLogOptions options_;
  LogFile file_;
  LoggedVehicle vehicle_{options_.system_id};
  std::vector<uint8_t> pending_;  // whole records not yet written
  uint64_t pending_frames_ = 0;
  uint64_t size_ = 0;     // the file's bytes, pending ones included
  bool started_ = false;  // always: the vehicle's first heartbeat was seen
  bool armed_ = false;
  std::string paused_why_;  // empty: not paused
  log::Repeats repeats_;
  TelemetryLogStats stats_;
};

}  // namespace mavswitch::logs
