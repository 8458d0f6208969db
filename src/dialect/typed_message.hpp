// Support for the generated typed messages (mavswitch/msg/*.hpp): wire load/store, the bridge
// from a typed message's visit() to a FieldSink, and framing a typed message.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

#include "dialect/field_sink.hpp"
#include "protocol/encoder.hpp"

namespace mavswitch::dialect::typed {

// The wire is little-endian, as is every host we build for: memcpy is the whole conversion.
template <class T>
inline void store(uint8_t* out, const T& value) noexcept {
  std::memcpy(out, &value, sizeof(T));
}
template <class T>
inline void load(const uint8_t* in, T& value) noexcept {
  std::memcpy(&value, in, sizeof(T));
}

template <class T>
constexpr FieldType field_type_of() noexcept {
  if constexpr (std::is_same_v<T, char>)
    return FieldType::kChar;
  else if constexpr (std::is_same_v<T, int8_t>)
    return FieldType::kInt8;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return FieldType::kUInt8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return FieldType::kInt16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return FieldType::kUInt16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return FieldType::kInt32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return FieldType::kUInt32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return FieldType::kInt64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return FieldType::kUInt64;
  else if constexpr (std::is_same_v<T, float>)
    return FieldType::kFloat;
  else {
    static_assert(std::is_same_v<T, double>, "not a MAVLink field type");
    return FieldType::kDouble;
  }
}

// Passes each field of a typed message to a FieldSink: `msg.visit(SinkAdapter{sink})`.
struct SinkAdapter {
  FieldSink& sink;
  template <class T>
  void operator()(std::string_view name, const T& value) const {
    sink.field(name, field_type_of<T>(), false, 1, &value);
  }
  template <class T, size_t N>
  void operator()(std::string_view name, const std::array<T, N>& values) const {
    sink.field(name, field_type_of<T>(), true, static_cast<uint16_t>(N), values.data());
  }
};

// Frames a typed message as MAVLink 2 (or 1 when v1 is true and the id fits) into out
// (at least protocol::kMaxFrameLen bytes); returns the frame length.
template <class Message>
size_t encode_frame(const Message& msg, protocol::FrameHeader header, std::span<uint8_t> out, bool v1 = false) {
  uint8_t payload[Message::kMaxLen > 0 ? Message::kMaxLen : 1] = {};
  msg.encode(payload);
  header.msgid = Message::kId;
  if (v1 && Message::kId < 256) {
    return protocol::encode_v1(header, {payload, Message::kMinLen}, Message::kCrcExtra, out);
  }
  return protocol::encode_v2(header, {payload, Message::kMaxLen}, Message::kCrcExtra, out);
}

}  // namespace mavswitch::dialect::typed
