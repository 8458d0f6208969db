// How urgent a frame is, for a link that cannot carry everything: the protocols whose every
// message matters (commands, missions, parameters, files, logs, corrections, anything addressed
// to one system), then what says a system is alive and well, then the telemetry streams, of
// which only the newest value counts. Rate limits never thin the first kind unless named.
#pragma once

#include <cstdint>

#include "protocol/frame.hpp"

namespace mavswitch::protocol {

enum class MessageClass : uint8_t { kControl = 0, kStatus = 1, kTelemetry = 2 };
inline constexpr int kMessageClasses = 3;

// Message ids of the request/answer protocols: a lost one stalls or breaks a transfer.
bool is_protocol_message(uint32_t msgid) noexcept;
// HEARTBEAT, SYS_STATUS, EXTENDED_SYS_STATE, STATUSTEXT.
bool is_status_message(uint32_t msgid) noexcept;

// True when the frame names a target system (not 0: broadcast).
inline bool is_targeted(const FrameView& f) noexcept {
  const MessageInfo* info = f.info();
  return info != nullptr && info->target_system_offset >= 0 && f.payload_byte(info->target_system_offset) != 0;
}

// One stream of a source: (system, component, message), the unit rate limits count and a paced
// link keeps the newest of.
inline uint64_t stream_key(uint8_t sysid, uint8_t compid, uint32_t msgid) noexcept {
  return uint64_t{sysid} << 32 | uint64_t{compid} << 24 | msgid;
}
inline uint64_t stream_key(const FrameView& f) noexcept { return stream_key(f.sysid(), f.compid(), f.msgid()); }

inline MessageClass classify(const FrameView& f) noexcept {
  if (is_targeted(f) || is_protocol_message(f.msgid())) return MessageClass::kControl;
  return is_status_message(f.msgid()) ? MessageClass::kStatus : MessageClass::kTelemetry;
}

}  // namespace mavswitch::protocol
