#include "e2e/log_streaming_autopilot.hpp"

#include <algorithm>

#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/logging_ack.hpp"
#include "mavswitch/msg/logging_data.hpp"
#include "mavswitch/msg/logging_data_acked.hpp"
#include "mavswitch/msg/remote_log_block_status.hpp"
#include "mavswitch/msg/remote_log_data_block.hpp"

namespace mavswitch::test {
namespace {

constexpr uint16_t kLoggingStart = 2510, kLoggingStop = 2511;
constexpr uint32_t kBlocksStart = 2147483646, kBlocksStop = 2147483645;
constexpr uint8_t kSys = 1, kAutopilotComp = 1, kLogComp = 155;
constexpr size_t kUlogData = 249, kBlock = 200;

}  // namespace

std::vector<std::pair<size_t, size_t>> ulog_messages(const std::vector<uint8_t>& ulog) {
  std::vector<std::pair<size_t, size_t>> out{{0, 16}};
  size_t at = 16;
  while (at + 3 <= ulog.size()) {
    const size_t end = at + 3 + static_cast<size_t>(ulog[at] | ulog[at + 1] << 8);
    if (end > ulog.size()) break;
    out.emplace_back(at, end);
    at = end;
  }
  return out;
}

LoggingAutopilot::LoggingAutopilot(Peer& link, uint8_t autopilot_type, Faults faults)
    : link_(link), type_(autopilot_type), faults_(faults), rng_(faults.seed) {}

template <class F>
void LoggingAutopilot::each_new_frame(F f) {
  const auto& frames = link_.received().frames;
  for (; seen_ < frames.size(); ++seen_) {
    const protocol::FrameView v = view_of(frames[seen_]);
    if (v.verified()) f(v);
  }
}

void LoggingAutopilot::heartbeat(bool armed) {
  msg::Heartbeat hb;
  hb.type = 2;
  hb.autopilot = type_;
  hb.base_mode = armed ? 128 | 1 : 1;
  link_.send(frame_of(hb, kSys, kAutopilotComp, frame_seq_++));
}

bool LoggingAutopilot::wait_for_request(std::chrono::milliseconds timeout, bool armed) {
  bool asked = false;
  wait_until(
      [&] {
        heartbeat(armed);
        each_new_frame([&](const protocol::FrameView& f) {
          if (f.msgid() == msg::CommandLong::kId) {
            const auto c = msg::CommandLong::decode(f.payload());
            if (c.command != kLoggingStart || c.target_system != kSys) return;
            msg::CommandAck ack;
            ack.command = kLoggingStart;
            ack.result = 0;
            ack.target_system = f.sysid();
            ack.target_component = f.compid();
            link_.send(frame_of(ack, kSys, kAutopilotComp, frame_seq_++));
          } else if (f.msgid() == msg::RemoteLogBlockStatus::kId) {
            if (msg::RemoteLogBlockStatus::decode(f.payload()).seqno != kBlocksStart) return;
          } else {
            return;
          }
          writer_sys_ = f.sysid();
          writer_comp_ = f.compid();
          asked = true;
          stop_ = false;
        });
        return asked;
      },
      timeout);
  return asked;
}

bool LoggingAutopilot::stop_requested() {
  each_new_frame([&](const protocol::FrameView& f) {
    if (f.msgid() == msg::CommandLong::kId && msg::CommandLong::decode(f.payload()).command == kLoggingStop) {
      stop_ = true;
      msg::CommandAck ack;
      ack.command = kLoggingStop;
      ack.target_system = f.sysid();
      ack.target_component = f.compid();
      link_.send(frame_of(ack, kSys, kAutopilotComp, frame_seq_++));
    }
    if (f.msgid() == msg::RemoteLogBlockStatus::kId &&
        msg::RemoteLogBlockStatus::decode(f.payload()).seqno == kBlocksStop)
      stop_ = true;
  });
  return stop_;
}

// One packet of the stream; a reliable one is sent again (PX4 waits 50 ms a try) until acked.
bool LoggingAutopilot::send_ulog_packet(const std::vector<uint8_t>& data, uint8_t first_message_offset, bool reliable) {
  std::uniform_real_distribution<double> chance(0, 1);
  const uint16_t seq = seq_++;
  auto frame = [&]() -> Bytes {
    auto fill = [&](auto& m) {
      m.target_system = writer_sys_;
      m.target_component = writer_comp_;
      m.sequence = seq;
      m.length = static_cast<uint8_t>(data.size());
      m.first_message_offset = first_message_offset;
      std::copy(data.begin(), data.end(), m.data.begin());
      return frame_of(m, kSys, kAutopilotComp, frame_seq_++);
    };
    if (reliable) {
      msg::LoggingDataAcked m;
      return fill(m);
    }
    msg::LoggingData m;
    return fill(m);
  };
  if (!reliable) {
    if (chance(rng_) < faults_.lose) {
      ++packets_lost_;
      return true;
    }
    link_.send(frame());
    if (chance(rng_) < faults_.repeat) link_.send(frame());
    return true;
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (attempt == 99 || chance(rng_) >= faults_.lose) link_.send(frame());
    const bool acked = wait_until(
        [&] {
          each_new_frame([&](const protocol::FrameView& f) {
            if (f.msgid() == msg::LoggingAck::kId) acked_.insert(msg::LoggingAck::decode(f.payload()).sequence);
          });
          return acked_.count(seq) != 0;
        },
        std::chrono::milliseconds(50));
    if (acked) return true;
  }
  return false;
}

// As PX4's logger: messages are packed back to back into 249-byte packets, each saying where the
// first message starting in it begins; the header and definitions (everything before the first
// data message, 'D') go reliably, the packet in hand flushed at the switch.
bool LoggingAutopilot::stream_ulog(const std::vector<uint8_t>& ulog) {
  std::vector<uint8_t> packet;
  uint8_t first = 255;
  bool reliable = true;
  size_t unreliable_sent = 0;
  auto flush = [&]() {
    if (packet.empty()) return true;
    const bool ok = send_ulog_packet(packet, first, reliable);
    packet.clear();
    first = 255;
    if (!reliable && ++unreliable_sent % 32 == 0) {
      pace(std::chrono::milliseconds(1));  // a stream, not one burst: the kernel's buffers are finite
      link_.poll();
    }
    return ok;
  };
  for (const auto& [begin, end] : ulog_messages(ulog)) {
    if (reliable && begin >= 16 && ulog[begin + 2] == 'D') {
      if (!flush()) return false;
      reliable = false;
    }
    if (first == 255) first = static_cast<uint8_t>(packet.size());
    for (size_t at = begin; at < end;) {
      const size_t n = std::min(end - at, kUlogData - packet.size());
      packet.insert(packet.end(), ulog.begin() + static_cast<std::ptrdiff_t>(at),
                    ulog.begin() + static_cast<std::ptrdiff_t>(at + n));
      at += n;
      if (packet.size() == kUlogData && !flush()) return false;
    }
  }
  return flush();
}

void LoggingAutopilot::send_block(uint32_t seqno, const std::vector<uint8_t>& log) {
  msg::RemoteLogDataBlock b;
  b.target_system = writer_sys_;
  b.target_component = writer_comp_;
  b.seqno = seqno;
  const size_t at = size_t{seqno} * kBlock;
  std::copy(log.begin() + static_cast<std::ptrdiff_t>(at),
            log.begin() + static_cast<std::ptrdiff_t>(std::min(at + kBlock, log.size())), b.data.begin());
  link_.send(frame_of(b, kSys, kLogComp, frame_seq_++));
}

void LoggingAutopilot::answer_nacks(const std::vector<uint8_t>& log) {
  each_new_frame([&](const protocol::FrameView& f) {
    if (f.msgid() != msg::RemoteLogBlockStatus::kId) return;
    const auto s = msg::RemoteLogBlockStatus::decode(f.payload());
    if (s.status != 0 || s.seqno >= kBlocksStop) return;
    nacked_.push_back(s.seqno);
    send_block(s.seqno, log);  // a NACKed block is sent again, as ArduPilot does from its buffer
  });
}

bool LoggingAutopilot::stream_dataflash(const std::vector<uint8_t>& log, std::chrono::milliseconds settle,
                                        uint32_t from) {
  std::uniform_real_distribution<double> chance(0, 1);
  const auto blocks = static_cast<uint32_t>((log.size() + kBlock - 1) / kBlock);
  constexpr uint32_t kNone = UINT32_MAX;  // no block is held back (GCC's -O1 misreads an optional here)
  uint32_t held = kNone;                  // a block sent after the next one: reordered
  for (uint32_t n = from; n < blocks; ++n) {
    if (chance(rng_) < faults_.lose && n + 1 < blocks) {  // the last block always goes: a gap needs an end
      lost_blocks_.insert(n);
    } else if (held == kNone && chance(rng_) < faults_.reorder) {
      held = n;
    } else {
      send_block(n, log);
      if (chance(rng_) < faults_.repeat) send_block(n, log);
      if (held != kNone) {
        send_block(held, log);
        held = kNone;
      }
    }
    if (n % 32 == 31) {
      pace(std::chrono::milliseconds(1));
      answer_nacks(log);
    }
  }
  if (held != kNone) send_block(held, log);
  // Answer NACKs until none has come for `settle`.
  size_t before = nacked_.size();
  for (int rounds = 0; rounds < 200; ++rounds) {
    wait_until(
        [&] {
          answer_nacks(log);
          return nacked_.size() != before;
        },
        settle);
    if (nacked_.size() == before) return true;
    before = nacked_.size();
  }
  return false;
}

}  // namespace mavswitch::test
