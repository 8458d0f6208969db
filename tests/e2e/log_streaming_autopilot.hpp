// Autopilots that stream their flight log over MAVLink as PX4 and ArduPilot do, played from the
// protocol as the MAVLink spec and their sources define it, over any test peer (UDP or TCP):
// PX4 answers MAV_CMD_LOGGING_START and sends a ULog file in LOGGING_DATA_ACKED packets (header
// and definitions, each retried until its LOGGING_ACK) then LOGGING_DATA (the data, never
// retried); ArduPilot answers REMOTE_LOG_BLOCK_STATUS START with REMOTE_LOG_DATA_BLOCKs and
// resends the blocks it is NACKed. Each can lose, repeat or reorder what it sends, to order.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "e2e/peers.hpp"

namespace mavswitch::test {

struct Faults {
  double lose = 0;     // share of data packets/blocks lost on the way (never the reliable ones' last try)
  double repeat = 0;   // share sent twice
  double reorder = 0;  // share held back and sent after the next one
  unsigned seed = 1;
};

class LoggingAutopilot {
 public:
  LoggingAutopilot(Peer& link, uint8_t autopilot_type, Faults faults = {});
  // HEARTBEATs (disarmed, or armed) until the log writer asks for the log; false if it never did.
  bool wait_for_request(std::chrono::milliseconds timeout, bool armed = false);
  void heartbeat(bool armed);
  // PX4: the whole ULog file, as PX4's logger sends it. False if a reliable packet went unacked.
  bool stream_ulog(const std::vector<uint8_t>& ulog);
  // ArduPilot: the bytes as dataflash blocks from block `from` on (a stream begun before the
  // writer asked starts past 0), then answers NACKs until `settle` passes without one.
  bool stream_dataflash(const std::vector<uint8_t>& log, std::chrono::milliseconds settle, uint32_t from = 0);
  // Whether the writer asked to stop (LOGGING_STOP or block STOP) since the last request.
  bool stop_requested();

  uint8_t writer_system() const { return writer_sys_; }
  uint8_t writer_component() const { return writer_comp_; }
  const std::set<uint32_t>& lost_blocks() const { return lost_blocks_; }
  const std::vector<uint32_t>& nacked_blocks() const { return nacked_; }
  size_t packets_lost() const { return packets_lost_; }

 private:
  template <class F>
  void each_new_frame(F f);
  void send_block(uint32_t seqno, const std::vector<uint8_t>& log);
  bool send_ulog_packet(const std::vector<uint8_t>& data, uint8_t first_message_offset, bool reliable);
  void answer_nacks(const std::vector<uint8_t>& log);

  Peer& link_;
  uint8_t type_;
  Faults faults_;
  std::mt19937 rng_;
  size_t seen_ = 0;
  uint8_t writer_sys_ = 0, writer_comp_ = 0;
  uint16_t seq_ = 0;
  uint8_t frame_seq_ = 0;
  bool stop_ = false;
  std::set<uint16_t> acked_;
  std::set<uint32_t> lost_blocks_;
  std::vector<uint32_t> nacked_;
  size_t packets_lost_ = 0;
};

// The ULog messages of a file: [offset, end) of the header, then of each message.
std::vector<std::pair<size_t, size_t>> ulog_messages(const std::vector<uint8_t>& ulog);

}  // namespace mavswitch::test
