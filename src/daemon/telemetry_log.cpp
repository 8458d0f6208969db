#include "daemon/telemetry_log.hpp"

#include <sys/statvfs.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "base/log.hpp"
#include "protocol/tlog.hpp"

namespace mavswitch::daemon {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kHeartbeatId = 0;
constexpr int kHeartbeatBaseMode = 6;  // payload offsets (custom_mode is first on the wire)
constexpr int kHeartbeatAutopilot = 5;
constexpr uint8_t kModeFlagArmed = 128;   // MAV_MODE_FLAG_SAFETY_ARMED
constexpr uint8_t kAutopilotInvalid = 8;  // MAV_AUTOPILOT_INVALID: a GCS or a peripheral

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
  if (ec) log::error("telemetry log: cannot create {}: {}", options_.dir.string(), ec.message());
}

TelemetryLog::~TelemetryLog() { close(); }

void TelemetryLog::open_file() {
  enforce_limits();
  if (out_of_space_) return;
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
  file_ = std::fopen(path_.c_str(), "wbx");
  if (file_ == nullptr) {
    log::error("telemetry log: cannot create {}", path_.string());
    return;
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);
  size_ = 0;
  log::info("telemetry log: writing {}", path_.string());
}

void TelemetryLog::close() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
}

void TelemetryLog::flush() {
  if (file_ != nullptr) std::fflush(file_);
}

// Deletes the oldest logs (never the open one) until the count and free-space limits hold.
void TelemetryLog::enforce_limits() {
  auto files = tlogs_oldest_first(options_.dir);
  if (file_ != nullptr) std::erase(files, path_);
  size_t keep_at_most = options_.max_files > 0 ? options_.max_files - 1 : SIZE_MAX;  // room for a new one
  size_t i = 0;
  while (i < files.size() && files.size() - i > keep_at_most) fs::remove(files[i++]);
  while (options_.min_free_space > 0 && free_bytes(options_.dir) < options_.min_free_space && i < files.size()) {
    fs::remove(files[i++]);
  }
  const bool short_of_space = options_.min_free_space > 0 && free_bytes(options_.dir) < options_.min_free_space;
  if (short_of_space && !out_of_space_)
    log::error("telemetry log: less than MinFreeSpace free in {}: logging paused", options_.dir.string());
  if (!short_of_space && out_of_space_) log::info("telemetry log: space available again");
  out_of_space_ = short_of_space;
}

// A HEARTBEAT of the vehicle being logged: LogSystemId's, or else the first autopilot heard.
bool TelemetryLog::from_our_vehicle(const protocol::FrameView& f) {
  if (f.msgid() != kHeartbeatId || !f.verified()) return false;
  if (options_.system_id ? f.sysid() != *options_.system_id : f.payload_byte(kHeartbeatAutopilot) == kAutopilotInvalid)
    return false;
  if (!options_.system_id) options_.system_id = f.sysid();
  return true;
}

void TelemetryLog::watch_arming(const protocol::FrameView& f) {
  if (!from_our_vehicle(f)) return;
  const bool armed = f.payload_byte(kHeartbeatBaseMode) & kModeFlagArmed;
  if (armed && !armed_) open_file();
  armed_ = armed;
  // Closed after this heartbeat is written (see write), so the log ends with the disarm.
}

void TelemetryLog::write(const protocol::FrameView& frame) {
  const bool was_armed = armed_;
  if (options_.mode == LogMode::kWhileArmed) {
    watch_arming(frame);
  } else if (!started_ && from_our_vehicle(frame)) {
    // As mavlink-router: a log starts with the vehicle's first heartbeat, so a router whose
    // vehicle never came leaves no empty file.
    started_ = true;
    open_file();
  }
  if (file_ == nullptr) return;
  uint8_t ts[protocol::kTlogTimestampLen];
  protocol::put_tlog_timestamp(wall_usec(), ts);
  std::fwrite(ts, 1, sizeof ts, file_);
  std::fwrite(frame.data(), 1, frame.size(), file_);
  size_ += sizeof ts + frame.size();
  ++frames_;
  if (options_.mode == LogMode::kWhileArmed && was_armed && !armed_) {
    close();
    return;
  }
  if (options_.max_size > 0 && size_ >= options_.max_size) {
    close();
    open_file();
  }
}

}  // namespace mavswitch::daemon
