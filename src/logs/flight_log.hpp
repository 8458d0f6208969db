// The autopilot's own flight log, streamed over MAVLink and written beside the telemetry logs:
// PX4's ULog (.ulg) or ArduPilot's dataflash (.bin). The writer is a MAVLink component on the
// router (library/Component): it asks the autopilot for the stream, acknowledges what arrives, and
// reaches the autopilot over whatever link it is on (serial, UDP or TCP). The log stream is
// addressed to the writer, so routing sends it nowhere else.
//
// Runs on the router's thread (its handlers and its timer); files are written there with one
// write(2) per packet or block and fsync(2) once a second.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "base/log.hpp"
#include "config/config.hpp"
#include "library/component.hpp"
#include "logs/dataflash_stream.hpp"
#include "logs/log_file.hpp"
#include "logs/logged_vehicle.hpp"
#include "logs/ulog_stream.hpp"

namespace mavswitch::logs {

struct FlightLogOptions {
  std::filesystem::path dir;
  config::LogMode mode = config::LogMode::kAlways;
  std::optional<uint8_t> system_id;  // the autopilot; else the first heard
  config::FlightLogFormat format = config::FlightLogFormat::kAuto;
  uint8_t writer_system = 254;  // the writer's own identity on the routing fabric (LogWriterSystemId)
  uint8_t writer_component = 191;
  unsigned max_files = 0;
  uint64_t min_free_space = 0;
};

struct FlightLogStats {
  uint64_t files = 0;
  uint64_t bytes_written = 0;
  uint64_t packets = 0;          // log packets or blocks taken
  uint64_t packets_lost = 0;     // ULog: sequence numbers never seen; dataflash: blocks given up on
  uint64_t retransmissions = 0;  // a packet or block that came again
  uint64_t nacks = 0;            // dataflash: NACKs sent
  uint64_t dropouts = 0;         // ULog: dropout messages written
  uint64_t restarts = 0;         // streams restarted (silent 5 s, begun mid-stream)
  uint64_t restarts_held = 0;    // restarts not made: the last was under a minute ago and the vehicle did not reboot
  uint64_t write_errors = 0;     // writes that failed (a full disk): logging paused
  uint64_t foreign = 0;          // log data from another system or component than the logged autopilot: dropped
};

class FlightLog {
 public:
  FlightLog(Router& router, FlightLogOptions options);
  ~FlightLog();
  FlightLog(const FlightLog&) = delete;
  FlightLog& operator=(const FlightLog&) = delete;

  // Router's thread (or before the router runs).
  FlightLogStats stats() const;
  const std::filesystem::path& current_file() const noexcept { return file_.path(); }

 private:
  enum class State { kIdle, kStarting, kStreaming, kStopping };
  void on_heartbeat(const protocol::FrameView& frame);
  void on_ulog(uint16_t sequence, std::span<const uint8_t> data, uint8_t first_message_offset, bool acked,
               uint8_t sysid, uint8_t compid);
  void on_block(uint32_t seqno, std::span<const uint8_t> data, uint8_t sysid, uint8_t compid);
  void tick();
  void begin();                                            // a new file, and ask for the stream
  void end(bool keep_stream_off);                          // close the file; ask the autopilot to stop
  bool restart(const char* why);                           // false: held back (a minute since the last, no reboot)
  void ask(bool start);                                    // a StreamAsk on the writer's engine
  void send_block_status(uint32_t seqno, uint8_t status);  // ArduPilot: to its log component
  void add_ulog_counts(FlightLogStats& s) const;
  bool write_at(std::span<const uint8_t> bytes, std::optional<uint64_t> offset);  // none: append
  const char* extension() const { return dataflash_ ? ".bin" : ".ulg"; }

  FlightLogOptions options_;
  Router& router_;
  LoggedVehicle vehicle_{options_.system_id};
  std::unique_ptr<Component> component_;
  std::vector<Subscription> subscriptions_;
  transport::EventLoop::TimerId timer_ = 0;

  State state_ = State::kIdle;
  bool dataflash_ = false;
  bool armed_ = false;
  bool paused_ = false;        // a write failed: no logging until space is back
  log::Repeats repeats_;       // trouble said once, then a count a minute
  uint8_t autopilot_ = 0;      // its system id, once chosen
  uint8_t log_component_ = 0;  // the component the log comes from
  uint64_t asked_at_ = 0;      // when start or stop was last asked
  bool asking_ = false;        // its ask runs on the engine
  uint64_t last_data_ = 0;     // when log data last came
  uint64_t restarted_at_ = 0;  // when a stream was last restarted (0: never)
  uint32_t boot_ms_ = 0;       // the autopilot's SYSTEM_TIME.time_boot_ms, last seen
  bool rebooted_ = false;      // it went back since the last restart: a new file is due
  log::Throttle held_lines_;
  uint64_t disarmed_at_ = 0;  // while-armed: the grace for the log's tail
  uint64_t synced_at_ = 0;
  LogFile file_;
  std::unique_ptr<UlogStream> ulog_;
  std::unique_ptr<DataflashStream> blocks_;
  FlightLogStats stats_;
};

}  // namespace mavswitch::logs
