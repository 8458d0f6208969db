#include "vehicle/message_json.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "protocol/encoder.hpp"

// JSON to a frame: POST /v1/mavlink and what WebSocket clients send, as mavlink2rest takes them.
namespace mavswitch::vehicle {
namespace {

using dialect::FieldType;
using Json = nlohmann::json;

// The range an integer field holds.
std::pair<int64_t, uint64_t> range_of(FieldType type) {
  switch (type) {
    case FieldType::kInt8: return {INT8_MIN, INT8_MAX};
    case FieldType::kInt16: return {INT16_MIN, INT16_MAX};
    case FieldType::kInt32: return {INT32_MIN, INT32_MAX};
    case FieldType::kInt64: return {INT64_MIN, INT64_MAX};
    case FieldType::kUInt16: return {0, UINT16_MAX};
    case FieldType::kUInt32: return {0, UINT32_MAX};
    case FieldType::kUInt64: return {0, UINT64_MAX};
    default: return {0, UINT8_MAX};
  }
}

void store_integer(FieldType type, int64_t signed_value, uint64_t unsigned_value, bool negative, uint8_t* at) {
  const uint64_t bits = negative ? uint64_t(signed_value) : unsigned_value;
  std::memcpy(at, &bits, dialect::type_size(type));  // little-endian: the low bytes
}

}  // namespace

bool MessageJson::encode_field(const Field& field, const Json& value, uint8_t* at, std::string* error) const {
  const dialect::FieldDef& f = *field.def;
  const auto fail = [&](const std::string& why) {
    *error = fmt::format("field \"{}\": {}", field.key, why);
    return false;
  };
  if (f.type == FieldType::kChar && f.array_len > 0) {
    if (!value.is_string()) return fail("a string");
    const auto& text = value.get_ref<const std::string&>();
    if (text.size() > f.array_len) return fail(fmt::format("at most {} characters", f.array_len));
    std::memcpy(at, text.data(), text.size());
    return true;
  }
  const size_t size = dialect::type_size(f.type);
  const auto one = [&](const Json& v, uint8_t* p) -> bool {
    if (f.type == FieldType::kFloat || f.type == FieldType::kDouble) {
      double d = std::numeric_limits<double>::quiet_NaN();  // null: what NaN was written as
      if (v.is_number())
        d = v.get<double>();
      else if (!v.is_null())
        return fail("a number");
      if (f.type == FieldType::kFloat) {
        const float x = static_cast<float>(d);
        std::memcpy(p, &x, sizeof x);
      } else {
        std::memcpy(p, &d, sizeof d);
      }
      return true;
    }
    if (f.type == FieldType::kChar) {
      if (!v.is_string() || v.get_ref<const std::string&>().size() != 1) return fail("a string of one character");
      *p = static_cast<uint8_t>(v.get_ref<const std::string&>()[0]);
      return true;
    }
    // An integer: a number, or a name of its enum ({"type":"NAME"}, "NAME", "A | B" for a bitmask).
    const Json* named = &v;
    if (v.is_object()) {
      const auto it = v.find(field.bitmask ? "bits" : "type");
      if (v.size() != 1 || it == v.end()) return fail(field.bitmask ? "{\"bits\": N}" : "{\"type\": \"NAME\"}");
      named = &*it;
    }
    if (named->is_string()) {
      if (field.names == nullptr) return fail("a number");
      const std::string& text = named->get_ref<const std::string&>();
      uint64_t bits = 0;
      size_t at_name = 0;
      while (at_name <= text.size()) {
        size_t end = field.bitmask ? text.find('|', at_name) : std::string::npos;
        if (end == std::string::npos) end = text.size();
        std::string_view item = std::string_view(text).substr(at_name, end - at_name);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        at_name = end + 1;
        if (item.empty() && field.bitmask) continue;  // "" is no flag
        const dialect::EnumEntry* found = nullptr;
        for (const dialect::EnumEntry& e : field.names->entries)
          if (e.name == item) found = &e;
        if (found == nullptr) {
          char* rest = nullptr;
          const std::string number(item);
          const uint64_t raw = field.bitmask ? std::strtoull(number.c_str(), &rest, 0) : 0;
          if (!field.bitmask || rest == number.c_str() || *rest != '\0')
            return fail(fmt::format("{} has no {}", field.names->name, number));
          bits |= raw;
        } else {
          bits |= found->value;
        }
      }
      if (bits > range_of(f.type).second)
        return fail(fmt::format("{} does not fit a {}", bits, dialect::type_name(f.type)));
      store_integer(f.type, 0, bits, false, p);
      return true;
    }
    const auto [low, high] = range_of(f.type);
    if (named->is_number_unsigned()) {
      const uint64_t x = named->get<uint64_t>();
      if (x > high) return fail(fmt::format("{} is out of range for a {}", x, dialect::type_name(f.type)));
      store_integer(f.type, 0, x, false, p);
      return true;
    }
    if (named->is_number_integer()) {
      const int64_t x = named->get<int64_t>();
      if (x < low) return fail(fmt::format("{} is out of range for a {}", x, dialect::type_name(f.type)));
      store_integer(f.type, x, 0, true, p);
      return true;
    }
    if (named->is_number_float()) {  // 1.0 from a language with one kind of number
      const double x = named->get<double>();
      if (x != std::floor(x) || x < double(low) || x > double(high))
        return fail(fmt::format("{} is not a {}", json_text(*named), dialect::type_name(f.type)));
      if (x < 0)
        store_integer(f.type, static_cast<int64_t>(x), 0, true, p);
      else
        store_integer(f.type, 0, static_cast<uint64_t>(x), false, p);
      return true;
    }
    return fail(field.names != nullptr ? fmt::format("a number or a name of {}", field.names->name) : "a number");
  };
  if (f.array_len == 0) return one(value, at);
  if (!value.is_array() || value.size() > f.array_len)
    return fail(fmt::format("an array of at most {} values", f.array_len));
  for (size_t i = 0; i < value.size(); ++i)
    if (!one(value[i], at + i * size)) return false;
  return true;
}

size_t MessageJson::encode(const Json& body, std::span<uint8_t> out, std::string* error) const {
  if (!body.is_object()) {
    *error = "the body is a JSON object {\"header\": {...}, \"message\": {...}}";
    return 0;
  }
  protocol::FrameHeader header{.seq = 0, .sysid = 255, .compid = 0};
  if (const auto h = body.find("header"); h != body.end()) {
    if (!h->is_object()) {
      *error = "\"header\" is an object {\"system_id\", \"component_id\", \"sequence\"}";
      return 0;
    }
    for (const auto& [key, value] : h->items()) {
      uint8_t* slot = key == "system_id"      ? &header.sysid
                      : key == "component_id" ? &header.compid
                      : key == "sequence"     ? &header.seq
                                              : nullptr;
      if (slot == nullptr) {
        *error = fmt::format("\"header\" has no \"{}\" (system_id, component_id, sequence)", key);
        return 0;
      }
      if (!value.is_number_unsigned() || value.get<uint64_t>() > 255) {
        *error = fmt::format("header \"{}\": a number from 0 to 255", key);
        return 0;
      }
      *slot = static_cast<uint8_t>(value.get<uint64_t>());
    }
    // System 0 is MAVLink's broadcast address, never a sender's: routers and autopilots would
    // take it as from everyone.
    if (header.sysid == 0) {
      *error = "header \"system_id\": a sender's system is 1 to 255 (0 is broadcast)";
      return 0;
    }
  }
  const auto m = body.find("message");
  if (m == body.end() || !m->is_object()) {
    *error = "\"message\" is an object with its \"type\" (a message name) and fields";
    return 0;
  }
  const auto type = m->find("type");
  if (type == m->end() || !type->is_string()) {
    *error = "\"message\" needs \"type\": the message's name";
    return 0;
  }
  const auto id = ids_.find(type->get_ref<const std::string&>());
  if (id == ids_.end()) {
    *error = fmt::format("no message {} in dialect {}", type->get_ref<const std::string&>(), dialect_.name);
    return 0;
  }
  const Shape& s = *shape(id->second);
  uint8_t payload[256] = {};
  for (const auto& [key, value] : m->items()) {
    if (key == "type") continue;
    const Field* field = nullptr;
    for (const Field& candidate : s.fields)
      if (candidate.key == key) field = &candidate;
    if (field == nullptr) {
      *error = fmt::format("{} has no field \"{}\"", s.def->name, key);
      return 0;
    }
    if (!encode_field(*field, value, payload + field->def->wire_offset, error)) {
      *error = s.def->name + " " + *error;
      return 0;
    }
  }
  for (const Field& field : s.fields)  // filled by the sender, whatever was given
    if (field.def->mavlink_version) payload[field.def->wire_offset] = 3;
  header.msgid = s.def->id;
  return protocol::encode_v2(header, {payload, s.def->max_len}, s.def->crc_extra, out);
}

}  // namespace mavswitch::vehicle
