#include "logs/flight_log.hpp"

#include <cerrno>
#include <cstring>

#include "base/log.hpp"
#include "base/log_files.hpp"
#include "logs/stream_ask.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/logging_ack.hpp"
#include "mavswitch/msg/logging_data.hpp"
#include "mavswitch/msg/logging_data_acked.hpp"
#include "mavswitch/msg/remote_log_block_status.hpp"
#include "mavswitch/msg/remote_log_data_block.hpp"
#include "mavswitch/msg/system_time.hpp"
#include "transport/clock.hpp"

namespace mavswitch::logs {
namespace {

constexpr uint8_t kBlockNack = 0, kBlockAck = 1;
constexpr uint8_t kAutopilotArdupilot = 3, kAutopilotPx4 = 12;
constexpr uint8_t kLogComponent = 155;      // MAV_COMP_ID_LOG: where ArduPilot's blocks come from
constexpr uint8_t kAutopilotComponent = 1;  // MAV_COMP_ID_AUTOPILOT1: the logged vehicle's heartbeat
constexpr uint64_t kTick = 100;             // ms between looks at NACKs and health
constexpr uint64_t kAskEvery = StreamAsk::kAskEvery;
constexpr uint64_t kSilence = 5000;       // no log data this long while logging: start again
constexpr uint64_t kTailQuiet = 2000;     // while-armed: after disarm, the file ends once data stops
constexpr uint64_t kTailAtMost = 20'000;  // (ArduPilot streams ~15 s past disarm) or after this
constexpr uint64_t kNackAfter = 50;       // a block missing this long is NACKed (reordering settles)
constexpr uint64_t kNackEvery = 500;
constexpr uint64_t kGiveUpAfter = 10'000;
constexpr uint64_t kResumeFree = 1 << 20;
// A new file at most once a minute unless the vehicle rebooted: a peer sending blocks from
// further on (or nothing) cannot make a file a second and push real logs out (MaxLogFiles).
constexpr uint64_t kRestartEvery = 60'000;
constexpr uint32_t kRebootBackMs = 5000;  // time_boot_ms this far back: the autopilot restarted

uint64_t now_ms() { return static_cast<uint64_t>(transport::now_ms()); }

}  // namespace

FlightLog::FlightLog(Router& router, FlightLogOptions options) : options_(std::move(options)), router_(router) {
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
  component_ = std::make_unique<Component>(router, options_.writer_system, options_.writer_component);
  subscriptions_.push_back(component_->subscribe({.message_id = msg::Heartbeat::kId, .from_home = true},
                                                 [this](const auto& f) { on_heartbeat(f); }));
  subscriptions_.push_back(component_->subscribe<msg::LoggingData>(
      [this](const msg::LoggingData& m, const protocol::FrameView& f) {
        on_ulog(m.sequence, {m.data.data(), std::min<size_t>(m.length, m.data.size())}, m.first_message_offset, false,
                f.sysid(), f.compid());
      },
      {.addressed_to_me = true, .from_home = true}));
  subscriptions_.push_back(component_->subscribe<msg::LoggingDataAcked>(
      [this](const msg::LoggingDataAcked& m, const protocol::FrameView& f) {
        on_ulog(m.sequence, {m.data.data(), std::min<size_t>(m.length, m.data.size())}, m.first_message_offset, true,
                f.sysid(), f.compid());
      },
      {.addressed_to_me = true, .from_home = true}));
  subscriptions_.push_back(component_->subscribe<msg::RemoteLogDataBlock>(
      [this](const msg::RemoteLogDataBlock& m, const protocol::FrameView& f) {
        on_block(m.seqno, m.data, f.sysid(), f.compid());
      },
      {.addressed_to_me = true, .from_home = true}));
  subscriptions_.push_back(component_->subscribe<msg::SystemTime>(
      [this](const msg::SystemTime& t, const protocol::FrameView& f) {
        if (f.sysid() != autopilot_ || f.compid() != kAutopilotComponent) return;
        if (t.time_boot_ms + kRebootBackMs < boot_ms_) rebooted_ = true;
        boot_ms_ = t.time_boot_ms;
      },
      {.from_home = true}));
  router_.run_on_loop([this] { timer_ = router_.event_loop().every(kTick, [this] { tick(); }); });
}

FlightLog::~FlightLog() {
  subscriptions_.clear();  // first: a heartbeat handled now could open a file no one closes
  router_.run_on_loop([this] {
    router_.event_loop().cancel(timer_);
    if (file_.is_open() || state_ != State::kIdle) end(true);  // the stop is sent once, not again:
    component_->transactions().cancel(this);                   // this goes
  });
}

FlightLogStats FlightLog::stats() const {
  FlightLogStats s = stats_;
  add_ulog_counts(s);
  return s;
}

// The ULog stream keeps its own counts; they join the writer's when it ends, or when asked.
void FlightLog::add_ulog_counts(FlightLogStats& s) const {
  if (!ulog_) return;
  s.packets += ulog_->stats().packets;
  s.packets_lost += ulog_->stats().lost_packets;
  s.retransmissions += ulog_->stats().retransmissions;
  s.dropouts += ulog_->stats().dropouts;
}

void FlightLog::send_block_status(uint32_t seqno, uint8_t status) {
  msg::RemoteLogBlockStatus s;
  s.target_system = autopilot_;
  s.target_component = log_component_ != 0 ? log_component_ : kLogComponent;
  s.seqno = seqno;
  s.status = status;
  component_->send(s);
}

void FlightLog::on_heartbeat(const protocol::FrameView& f) {
  const auto hb = vehicle_.heartbeat(f);
  if (!hb) return;
  if (autopilot_ == 0) {
    autopilot_ = *vehicle_.system_id();
    dataflash_ = options_.format == config::FlightLogFormat::kDataflash ||
                 (options_.format == config::FlightLogFormat::kAuto && hb->autopilot == kAutopilotArdupilot);
    log::info("flight log: autopilot {} ({}), {} logs", autopilot_,
              hb->autopilot == kAutopilotPx4         ? "PX4"
              : hb->autopilot == kAutopilotArdupilot ? "ArduPilot"
                                                     : "other",
              dataflash_ ? "dataflash (.bin)" : "ULog (.ulg)");
  }
  const bool armed = hb->armed;
  const bool was_armed = armed_;
  armed_ = armed;
  if (paused_) return;
  if (options_.mode == config::LogMode::kAlways) {
    if (state_ == State::kIdle) begin();
    return;
  }
  if (armed && !was_armed) {
    disarmed_at_ = 0;
    if (!file_.is_open()) begin();  // a re-arm within the tail's grace goes on in the same file
  } else if (!armed && was_armed) {
    disarmed_at_ = now_ms();
  }
}

void FlightLog::begin() {
  if (log_files::enforce_retention(options_.dir, log_files::retention_limit(options_.max_files, true),
                                   options_.min_free_space)) {
    repeats_.say(log::Level::kError, "space",
                 fmt::format("flight log: less than MinFreeSpace free in {}: logging paused", options_.dir.string()));
    paused_ = true;
    return;
  }
  if (!file_.open(options_.dir, extension())) {
    repeats_.say(
        log::Level::kError, "create",
        fmt::format("flight log: cannot create {}: {}: logging paused", file_.path().string(), std::strerror(errno)));
    paused_ = true;
    return;
  }
  ++stats_.files;
  for (const char* cause : {"space", "create", "write"}) repeats_.clear(cause);  // said at once next time
  add_ulog_counts(stats_);                                                       // the finished stream's
  ulog_.reset();
  blocks_.reset();
  if (dataflash_)
    blocks_ = std::make_unique<DataflashStream>();
  else
    ulog_ = std::make_unique<UlogStream>();
  log::info("flight log: writing {}", file_.path().string());
  state_ = State::kStarting;
  last_data_ = synced_at_ = now_ms();
  ask(true);
}

// One ask at a time, the newest: a start replaces a stop under way and the other way round.
void FlightLog::ask(bool start) {
  asked_at_ = now_ms();
  const uint8_t answerer = StreamAsk::answerer(dataflash_);
  Transactions& engine = component_->transactions();
  engine.cancel(autopilot_, answerer, StreamAsk::kKind);
  asking_ = true;
  engine.run<StreamAsk>(
      this, autopilot_, answerer, StreamAsk::kKind,
      std::make_unique<StreamAsk>(dataflash_, start, autopilot_, log_component_ != 0 ? log_component_ : kLogComponent),
      [this, start](Transactions::End end, StreamAsk&) {
        asking_ = false;
        if (start && end == Transactions::End::kDone && state_ == State::kStarting) state_ = State::kStreaming;
        if (!start && state_ == State::kStopping) state_ = State::kIdle;  // answered or not
      });
}

void FlightLog::on_ulog(uint16_t sequence, std::span<const uint8_t> data, uint8_t first_message_offset, bool acked,
                        uint8_t sysid, uint8_t compid) {
  if (acked) {  // at once: PX4 waits for it before the next reliable packet
    msg::LoggingAck a;
    a.target_system = sysid;
    a.target_component = compid;
    a.sequence = sequence;
    component_->send(a);
  }
  if (!ulog_ || !file_.is_open()) return;
  if (sysid != autopilot_ || compid != kAutopilotComponent) {  // PX4's logger speaks as the autopilot
    ++stats_.foreign;
    return;
  }
  if (state_ == State::kStarting) state_ = State::kStreaming;
  const uint64_t now = now_ms();
  std::vector<uint8_t> out;
  const auto take = ulog_->packet(sequence, data, first_message_offset, now,
                                  [&](std::span<const uint8_t> b) { out.insert(out.end(), b.begin(), b.end()); });
  if (take == UlogStream::Take::kBadHeader) {
    held_lines_.line(log::Level::kWarning, "flight log: the stream does not start with a ULog header");
    return;
  }
  if (take == UlogStream::Take::kBeforeHeader) return;  // the silence check restarts a stream begun mid-way
  last_data_ = now;
  if (!out.empty()) write_at(out, std::nullopt);
}

void FlightLog::on_block(uint32_t seqno, std::span<const uint8_t> data, uint8_t sysid, uint8_t compid) {
  if (!blocks_ || !file_.is_open()) return;
  // Only the logged autopilot writes its log: its system, and the component its blocks came from
  // first in this file (ArduPilot's own, or MAV_COMP_ID_LOG). Anyone else's blocks would take the
  // places of the vehicle's own.
  const bool ours =
      sysid == autopilot_ &&
      (log_component_ != 0 ? compid == log_component_ : compid == kAutopilotComponent || compid == kLogComponent);
  if (!ours) {
    ++stats_.foreign;
    return;
  }
  log_component_ = compid;
  const uint64_t now = now_ms();
  const auto take = blocks_->block(seqno, now);
  if (take == DataflashStream::Take::kMidStream) {
    // Once asked again, the old stream's blocks still in flight are let go by, not restarted on.
    if (state_ != State::kStarting || now - asked_at_ >= kAskEvery) {
      if (!restart("the stream began in the middle of a log")) ++stats_.foreign;  // held: the block is not ours
    }
    return;
  }
  if (state_ == State::kStarting) state_ = State::kStreaming;
  last_data_ = now;
  ++stats_.packets;
  if (take == DataflashStream::Take::kAgain) ++stats_.retransmissions;
  if (take == DataflashStream::Take::kNew &&
      !write_at(data.first(DataflashStream::kBlockLen), uint64_t{seqno} * DataflashStream::kBlockLen))
    return;
  send_block_status(seqno, kBlockAck);
}

bool FlightLog::write_at(std::span<const uint8_t> bytes, std::optional<uint64_t> offset) {
  const int err = offset ? file_.write_at(bytes, *offset) : file_.append(bytes);
  if (err == 0) {
    stats_.bytes_written += bytes.size();
    return true;
  }
  ++stats_.write_errors;
  repeats_.say(log::Level::kError, "write",
               fmt::format("flight log: writing {}: {}: logging paused until space is back", file_.path().string(),
                           std::strerror(err)));
  paused_ = true;
  end(true);
  return false;
}

void FlightLog::end(bool keep_stream_off) {
  file_.close();
  disarmed_at_ = 0;
  ask(false);
  state_ = keep_stream_off ? State::kStopping : State::kIdle;
}

bool FlightLog::restart(const char* why) {
  const uint64_t now = now_ms();
  if (restarted_at_ != 0 && now - restarted_at_ < kRestartEvery && !rebooted_) {
    ++stats_.restarts_held;
    held_lines_.line(log::Level::kWarning, "flight log: {}, but the last new file began {} s ago: going on in {}", why,
                     (now - restarted_at_) / 1000, file_.path().string());
    return false;
  }
  log::warning("flight log: {}: starting again in a new file", why);
  ++stats_.restarts;
  restarted_at_ = now;
  rebooted_ = false;
  end(false);
  begin();
  return true;
}

void FlightLog::tick() {
  const uint64_t now = now_ms();
  if (paused_) {
    if (log_files::free_bytes(options_.dir) >= std::max<uint64_t>(kResumeFree, options_.min_free_space) &&
        (options_.mode == config::LogMode::kAlways || armed_) && state_ != State::kStarting) {
      paused_ = false;
      log::info("flight log: space is back: logging again");
      begin();
    }
    return;
  }
  switch (state_) {
    case State::kIdle: return;
    case State::kStopping: return;  // until its ask ends
    case State::kStarting:
      // Its ask runs until the stream comes; one the engine ended (the autopilot's route went,
      // or the engine was full) is made again.
      if (!asking_ && now - asked_at_ >= kAskEvery) ask(true);
      break;
    case State::kStreaming:
      if (now - last_data_ >= kSilence && !(options_.mode == config::LogMode::kWhileArmed && !armed_)) {
        if (restart("no log data for 5 s")) return;
        last_data_ = now;  // held: ask for the stream again, in the same file
        ask(true);
        return;
      }
      break;
  }
  if (blocks_) {
    for (uint32_t seqno : blocks_->due_nacks(now, kNackAfter, kNackEvery, 64)) {
      send_block_status(seqno, kBlockNack);
      ++stats_.nacks;
    }
    stats_.packets_lost += blocks_->give_up(now, kGiveUpAfter);
  }
  if (options_.mode == config::LogMode::kWhileArmed && !armed_ && disarmed_at_ != 0 &&
      (now - last_data_ >= kTailQuiet || now - disarmed_at_ >= kTailAtMost)) {
    end(true);
    return;
  }
  if (file_.is_open() && now - synced_at_ >= 1000) {  // and MinFreeSpace, as the file grows
    file_.sync();
    synced_at_ = now;
    if (options_.min_free_space > 0 &&
        log_files::enforce_retention(options_.dir, log_files::retention_limit(options_.max_files, false),
                                     options_.min_free_space)) {
      repeats_.say(log::Level::kError, "space",
                   fmt::format("flight log: less than MinFreeSpace free in {}: logging paused", options_.dir.string()));
      paused_ = true;
      end(true);
    }
  }
}

}  // namespace mavswitch::logs
