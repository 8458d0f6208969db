#include "logs/stream_ask.hpp"

#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/logging_data.hpp"
#include "mavswitch/msg/logging_data_acked.hpp"
#include "mavswitch/msg/remote_log_block_status.hpp"
#include "mavswitch/msg/remote_log_data_block.hpp"

namespace mavswitch::logs {
namespace {

constexpr uint16_t kLoggingStart = 2510;       // MAV_CMD_LOGGING_START (param1 0: ULog)
constexpr uint16_t kLoggingStop = 2511;        // MAV_CMD_LOGGING_STOP
constexpr uint32_t kBlocksStart = 2147483646;  // MAV_REMOTE_LOG_DATA_BLOCK_START
constexpr uint32_t kBlocksStop = 2147483645;   // MAV_REMOTE_LOG_DATA_BLOCK_STOP
constexpr uint8_t kStatusAck = 1;              // MAV_REMOTE_LOG_DATA_BLOCK_ACK
constexpr uint8_t kAccepted = 0;               // MAV_RESULT_ACCEPTED

}  // namespace

std::vector<Exchange::Listen> StreamAsk::listens() const {
  if (dataflash_) return {{msg::RemoteLogDataBlock::kId, true}};
  return {{msg::CommandAck::kId, true}, {msg::LoggingData::kId, true}, {msg::LoggingDataAcked::kId, true}};
}

Exchange::Step StreamAsk::heard(const protocol::FrameView& frame, Component&) {
  if (frame.msgid() != msg::CommandAck::kId) return start_ ? Step::kDone : Step::kIgnored;  // the stream came
  const auto ack = msg::CommandAck::decode(frame.payload());
  if (ack.command != (start_ ? kLoggingStart : kLoggingStop)) return Step::kIgnored;
  // A start refused (the logger not ready) is asked again; a stop is a stop whatever it says.
  return !start_ || ack.result == kAccepted ? Step::kDone : Step::kIgnored;
}

void StreamAsk::send(Component& from) {
  const uint8_t confirmation = sent_;
  if (sent_ < 255) ++sent_;
  if (dataflash_) {
    msg::RemoteLogBlockStatus s;
    s.target_system = to_;
    s.target_component = blocks_from_;
    s.seqno = start_ ? kBlocksStart : kBlocksStop;
    s.status = kStatusAck;
    from.send(s);
  } else {
    CommandExchange::send(from, {to_, 1, start_ ? kLoggingStart : kLoggingStop, {}}, confirmation);
  }
}

}  // namespace mavswitch::logs
