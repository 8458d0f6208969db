#include "daemon/telemetry_log.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/log.hpp"
#include "protocol/tlog.hpp"

namespace mavswitch::daemon {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kHeartbeatId = 0;
constexpr int kHeartbeatBaseMode = 6;  // payload offsets (custom_mode is first on the wire)
constexpr int kHeartbeatAutopilot = 5;
constexpr uint8_t kModeFlagArmed = 128;     // MAV_MODE_FLAG_SAFETY_ARMED
constexpr uint8_t kAutopilotInvalid = 8;    // MAV_AUTOPILOT_INVALID: a GCS or a peripheral
constexpr size_t kBufferBytes = 64 * 1024;  // records gathered for one write(2)
// A paused log resumes once this much is free (and MinFreeSpace holds): not at the first
// freed block, to write a file a little less than a byte at a time.
constexpr uint64_t kResumeFreeBytes = 1 << 20;

uint64_t wall_usec() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

// The index a log's name starts with ("00042-2026-12-02_10-00-00.tlog"), if it has one.
std::optional<unsigned> log_index(const fs::path& file) {
  const std::string name = file.filename().string();
  if (name.size() < 6 || name[5] != '-') return std::nullopt;
  unsigned index = 0;
  for (size_t i = 0; i < 5; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    index = index * 10 + static_cast<unsigned>(name[i] - '0');
  }
  return index;
}

// Telemetry logs by index, oldest first.
std::vector<fs::path> tlogs_oldest_first(const fs::path& dir) {
  std::vector<std::pair<unsigned, fs::path>> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto index = log_index(e.path());
    if (index && e.is_regular_file() && e.path().extension() == ".tlog") files.emplace_back(*index, e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<fs::path> out;
  for (auto& [index, path] : files) out.push_back(std::move(path));
  return out;
}

// One past the highest index of any log in the directory, whatever its kind (.tlog, and the
// flight logs mavlink-router writes beside them): a directory shared with it keeps counting.
unsigned next_log_index(const fs::path& dir) {
  unsigned next = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (const auto index = log_index(e.path())) next = std::max(next, *index + 1);
  }
  return next;
}

uint64_t free_bytes(const fs::path& dir) {
  struct statvfs st;
  if (statvfs(dir.c_str(), &st) != 0) return UINT64_MAX;
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

}  // namespace

TelemetryLog::TelemetryLog(TelemetryLogOptions options) : options_(std::move(options)) {
  std::error_code ec;
  fs::create_directories(options_.dir, ec);
  // Not fatal: the directory may come (a disk mounted later); the first file will say why not.
  if (ec) log::error("telemetry log: cannot create {}: {}", options_.dir.string(), ec.message());
  pending_.reserve(kBufferBytes);
}

TelemetryLog::~TelemetryLog() { close(); }

bool TelemetryLog::wanted() const noexcept { return options_.mode == LogMode::kWhileArmed ? armed_ : started_; }

void TelemetryLog::open_file() {
  if (short_of_space()) {
    pause("less than MinFreeSpace (" + std::to_string(options_.min_free_space) + " bytes) free in " +
          options_.dir.string());
    return;
  }
  std::error_code ec;
  fs::create_directories(options_.dir, ec);  // it may have been deleted under us
  // mavlink-router's names, so that the scripts written for it find ours:
  // NNNNN-YYYY-MM-DD_HH-MM-SS.tlog, the index one past the highest in the directory.
  char stamp[32];
  const time_t t = time(nullptr);
  tm local;
  localtime_r(&t, &local);
  strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &local);
  char index[16];
  std::snprintf(index, sizeof index, "%05u", next_log_index(options_.dir));
  path_ = options_.dir / (std::string(index) + "-" + stamp + ".tlog");
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    pause("cannot create " + path_.string() + ": " + std::strerror(errno));
    return;
  }
  size_ = committed_ = 0;
  if (!paused_why_.empty()) log::info("telemetry log: resumed ({} frames were not written)", stats_.frames_lost);
  paused_why_.clear();
  log::info("telemetry log: writing {}", path_.string());
}

bool TelemetryLog::drain() {
  size_t done = 0;
  while (done < pending_.size()) {
    const ssize_t n = ::write(fd_, pending_.data() + done, pending_.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      const int err = n == 0 ? ENOSPC : errno;
      // Cut back to the last whole record: a reader must never meet half of one.
      if (ftruncate(fd_, static_cast<off_t>(committed_)) != 0)
        log::error("telemetry log: cannot cut {} back to its last whole record: {}", path_.string(),
                   std::strerror(errno));
      stats_.frames_lost += pending_frames_;
      size_ = committed_;
      pending_.clear();
      pending_frames_ = 0;
      pause("writing " + path_.string() + ": " + std::strerror(err));
      return false;
    }
  }
  committed_ += done;
  stats_.frames_written += pending_frames_;
  stats_.bytes_written += done;
  pending_.clear();
  pending_frames_ = 0;
  return true;
}

void TelemetryLog::finish_file() {
  if (fd_ < 0) return;
  if (!pending_.empty()) drain();
  if (fd_ < 0) return;  // drain paused, which finished the file
  ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  if (committed_ == 0) fs::remove(path_, ec);  // nothing in it: no empty logs
}

void TelemetryLog::pause(const std::string& why) {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    std::error_code ec;
    if (committed_ == 0) fs::remove(path_, ec);
  }
  if (paused_why_ != why) {  // once per cause, not once per try
    log::error("telemetry log: {}: logging paused; it resumes by itself, in a new file", why);
    if (paused_why_.empty()) ++stats_.pauses;
  }
  paused_why_ = why;
}

void TelemetryLog::close() { finish_file(); }

void TelemetryLog::tick() {
  if (fd_ >= 0 && !pending_.empty()) drain();
  if (fd_ >= 0 && short_of_space()) {
    finish_file();
    pause("less than MinFreeSpace (" + std::to_string(options_.min_free_space) + " bytes) free in " +
          options_.dir.string());
  } else if (fd_ < 0 && !paused_why_.empty() && wanted() && free_bytes(options_.dir) >= kResumeFreeBytes) {
    open_file();
  }
}

// Deletes the oldest logs (never the open one) until the count and free-space limits hold.
bool TelemetryLog::short_of_space() {
  auto files = tlogs_oldest_first(options_.dir);
  if (fd_ >= 0) std::erase(files, path_);
  const size_t keep_at_most =
      options_.max_files > 0 ? options_.max_files - 1 : SIZE_MAX;  // the open one, or the one to open
  size_t i = 0;
  std::error_code ec;
  while (i < files.size() && files.size() - i > keep_at_most) fs::remove(files[i++], ec);
  while (options_.min_free_space > 0 && free_bytes(options_.dir) < options_.min_free_space && i < files.size()) {
    fs::remove(files[i++], ec);
  }
  return options_.min_free_space > 0 && free_bytes(options_.dir) < options_.min_free_space;
}

// A HEARTBEAT of the vehicle being logged: LogSystemId's, or else the first autopilot heard.
bool TelemetryLog::from_our_vehicle(const protocol::FrameView& f) {
  if (f.msgid() != kHeartbeatId || !f.verified()) return false;
  if (options_.system_id ? f.sysid() != *options_.system_id : f.payload_byte(kHeartbeatAutopilot) == kAutopilotInvalid)
    return false;
  if (!options_.system_id) options_.system_id = f.sysid();
  return true;
}

void TelemetryLog::write(const protocol::FrameView& frame) {
  bool disarmed = false;
  if (from_our_vehicle(frame)) {
    const bool armed = frame.payload_byte(kHeartbeatBaseMode) & kModeFlagArmed;
    // As mavlink-router: a log starts with the vehicle's first heartbeat, so a router whose
    // vehicle never came leaves no empty file.
    const bool begins = options_.mode == LogMode::kWhileArmed ? armed && !armed_ : !started_;
    disarmed = armed_ && !armed;
    started_ = true;
    armed_ = armed;
    if (begins) open_file();
  }
  const bool ends = options_.mode == LogMode::kWhileArmed && disarmed;  // after this heartbeat
  if (fd_ < 0) {
    if (!paused_why_.empty() && (wanted() || ends)) ++stats_.frames_lost;
    return;
  }
  const size_t at = pending_.size();
  pending_.resize(at + protocol::kTlogTimestampLen + frame.size());
  protocol::put_tlog_timestamp(wall_usec(), pending_.data() + at);
  std::memcpy(pending_.data() + at + protocol::kTlogTimestampLen, frame.data(), frame.size());
  size_ += protocol::kTlogTimestampLen + frame.size();
  ++pending_frames_;
  if (ends) {
    finish_file();
  } else if (options_.max_size > 0 && size_ >= options_.max_size) {
    finish_file();
    open_file();
  } else if (pending_.size() >= kBufferBytes) {
    drain();
  }
}

}  // namespace mavswitch::daemon
