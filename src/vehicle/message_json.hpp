// MAVLink messages as mavlink2rest's JSON, both ways, for any dialect model. Its shapes, which
// programs outside (BlueOS' Cockpit and extensions, scripts) read:
//   {"header":{"system_id":1,"component_id":1,"sequence":7},"message":{"type":"ATTITUDE",...}}
// fields in wire order; an enum value as {"type":"MAV_TYPE_QUADROTOR"}; a bitmask as its flag
// names joined by " | " (bits without a name as 0x...); char[] as a string; other arrays as
// arrays; a field called "type" as "mavtype" (the name mavlink2rest's Rust code gives it); NaN
// and infinities as null, all JSON can carry. Where mavlink2rest fails a whole message (a value
// its enum does not name), the value is written as a plain number instead.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dialect/model.hpp"
#include "protocol/frame.hpp"

namespace mavswitch::vehicle {

class MessageJson {
 public:
  // `dialect` must outlive this (the built-in model, or one loaded with Dialect = FILE).
  explicit MessageJson(const dialect::Dialect& dialect);

  const dialect::Dialect& dialect() const noexcept { return dialect_; }
  // Appends message `msgid`'s {"type":...} object; false (nothing appended) for an id the
  // dialect does not define. A payload shorter than the message reads as zero-padded.
  bool write_message(uint32_t msgid, std::span<const uint8_t> payload, std::string& out) const;
  // Appends {"header":{...},"message":{...}}.
  bool write_frame(const protocol::FrameView& frame, std::string& out) const;
  // GET /v1/helper/mavlink: the message named `name` with every field zero, under the header
  // mavlink2rest gives (255/0/0); empty for a name the dialect does not define.
  std::string helper(std::string_view name) const;

  // A posted {"header":{...},"message":{...}} as a MAVLink 2 frame in `out` (kMaxFrameLen
  // bytes): its length, or 0 and *error naming what is wrong (an unknown message, field or
  // enum name, a value of the wrong type or out of range). A field not given is zero.
  size_t encode(const nlohmann::json& body, std::span<uint8_t> out, std::string* error) const;

  // A value's name in enum `name` ("MAV_RESULT", 0 -> "MAV_RESULT_ACCEPTED"); the number as text
  // when it has none.
  std::string name_of(std::string_view name, uint64_t value) const;
  // The value of `entry` in enum `name`, or of its number as text; none when it is neither.
  std::optional<uint64_t> value_of(std::string_view name, std::string_view entry) const;

 private:
  struct Field {
    const dialect::FieldDef* def;
    std::string key;                          // its JSON name
    const dialect::EnumDef* names = nullptr;  // the enum that names its values, if any
    bool bitmask = false;
  };
  struct Shape {
    const dialect::MessageDef* def;
    std::vector<Field> fields;  // wire order
  };
  void write_field(const Field& field, const uint8_t* at, std::string& out) const;
  bool encode_field(const Field& field, const nlohmann::json& value, uint8_t* at, std::string* error) const;
  const Shape* shape(uint32_t id) const;

  const dialect::Dialect& dialect_;
  std::unordered_map<uint32_t, Shape> shapes_;
  std::unordered_map<std::string_view, uint32_t> ids_;  // by name
};

}  // namespace mavswitch::vehicle
