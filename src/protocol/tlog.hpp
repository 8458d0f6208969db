// The telemetry log format (.tlog) that QGroundControl, Mission Planner and MAVProxy read and
// write: each record is an 8-byte big-endian timestamp (microseconds since the Unix epoch)
// followed by one MAVLink frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "protocol/function_ref.hpp"
#include "protocol/parser.hpp"

namespace mavswitch::protocol {

inline constexpr size_t kTlogTimestampLen = 8;

using TlogSink = FunctionRef<void(uint64_t time_usec, const FrameView&)>;

// Reads a whole tlog held in memory. Records are taken in order; where a record does not hold a
// frame, the reader resynchronises byte by byte (counted as skipped), so a damaged region loses
// only itself. Timestamp bytes are never mistaken for a frame start.
ParserStats read_tlog(const MessageTable& table, std::span<const uint8_t> log, TlogSink sink);

// Writes one record's timestamp into out[0..8).
void put_tlog_timestamp(uint64_t time_usec, uint8_t* out) noexcept;

}  // namespace mavswitch::protocol
