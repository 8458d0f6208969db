#include "logs/telemetry_log.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/log.hpp"
#include "base/log_files.hpp"
#include "protocol/tlog.hpp"

namespace mavswitch::logs {
namespace {

// What pauses the log, for saying each once (log::Repeats).
constexpr const char* kCauseSpace = "space";
constexpr const char* kCauseCreate = "create";
constexpr const char* kCauseWrite = "write";

// REMOTE_LOG_DATA_BLOCK, REMOTE_LOG_BLOCK_STATUS (ArduPilot); LOGGING_DATA, LOGGING_DATA_ACKED,
// LOGGING_ACK (PX4).
bool is_flight_log_transfer(uint32_t msgid) { return msgid == 184 || msgid == 185 || (msgid >= 266 && msgid <= 268); }

}  // namespace
namespace {

namespace fs = std::filesystem;

constexpr size_t kBufferBytes = 64 * 1024;  // records gathered for one write(2)
// A paused log resumes once this much is free (and MinFreeSpace holds): not at the first
// freed block, to write a file a little less than a byte at a time.
constexpr uint64_t kResumeFreeBytes = 1 << 20;

uint64_t wall_usec() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
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

bool TelemetryLog::wanted() const noexcept { return options_.mode == config::LogMode::kWhileArmed ? armed_ : started_; }

void TelemetryLog::open_file() {
  if (short_of_space()) {
    pause(kCauseSpace, "less than MinFreeSpace (" + std::to_string(options_.min_free_space) + " bytes) free in " +
                           options_.dir.string());
    return;
  }
  if (!file_.open(options_.dir, ".tlog")) {
    pause(kCauseCreate, "cannot create " + file_.path().string() + ": " + std::strerror(errno));
    return;
  }
  size_ = 0;
  if (!paused_why_.empty()) log::info("telemetry log: resumed ({} frames were not written)", stats_.frames_lost);
  paused_why_.clear();
  for (const char* cause : {kCauseSpace, kCauseCreate, kCauseWrite}) repeats_.clear(cause);
  log::info("telemetry log: writing {}", file_.path().string());
}

bool TelemetryLog::drain() {
  const int err = file_.append(pending_);  // all of it, or none: no torn record
  if (err != 0) {
    stats_.frames_lost += pending_frames_;
    size_ -= pending_.size();
    pending_.clear();
    pending_frames_ = 0;
    pause(kCauseWrite, "writing " + file_.path().string() + ": " + std::strerror(err));
    return false;
  }
  stats_.frames_written += pending_frames_;
  stats_.bytes_written += pending_.size();
  pending_.clear();
  pending_frames_ = 0;
  return true;
}

void TelemetryLog::finish_file() {
  if (file_.is_open() && !pending_.empty()) drain();
  file_.close();  // finished read-only, or removed when nothing is in it: no empty logs
}

void TelemetryLog::pause(const char* cause, const std::string& why) {
  file_.close();
  // Once per cause, then once a minute with a count while it goes on: a rotation that fails
  // every second is not a line a second.
  repeats_.say(log::Level::kError, cause,
               "telemetry log: " + why + ": logging paused; it resumes by itself, in a new file");
  if (paused_why_.empty()) ++stats_.pauses;
  paused_why_ = why;
}

void TelemetryLog::close() { finish_file(); }

void TelemetryLog::tick() {
  if (file_.is_open() && !pending_.empty()) drain();
  if (file_.is_open() && short_of_space()) {
    finish_file();
    pause(kCauseSpace, "less than MinFreeSpace (" + std::to_string(options_.min_free_space) + " bytes) free in " +
                           options_.dir.string());
  } else if (!file_.is_open() && !paused_why_.empty() && wanted() &&
             log_files::free_bytes(options_.dir) >= kResumeFreeBytes) {
    open_file();
  }
}

// Deletes the oldest finished logs (of every kind) until the count and free-space limits hold,
// with room for one more when a file is about to be opened.
bool TelemetryLog::short_of_space() {
  return log_files::enforce_retention(options_.dir, log_files::retention_limit(options_.max_files, !file_.is_open()),
                                      options_.min_free_space);
}

void TelemetryLog::write(const protocol::FrameView& frame) {
  bool disarmed = false;
  if (const auto hb = vehicle_.heartbeat(frame)) {
    const bool armed = hb->armed;
    // As mavlink-router: a log starts with the vehicle's first heartbeat, so a router whose
    // vehicle never came leaves no empty file.
    const bool begins = options_.mode == config::LogMode::kWhileArmed ? armed && !armed_ : !started_;
    disarmed = armed_ && !armed;
    started_ = true;
    armed_ = armed;
    if (begins) open_file();
  }
  const bool ends = options_.mode == config::LogMode::kWhileArmed && disarmed;  // after this heartbeat
  if (!options_.flight_log_data && is_flight_log_transfer(frame.msgid())) {
    ++stats_.left_out;
    return;
  }
  if (!file_.is_open()) {
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

}  // namespace mavswitch::logs
