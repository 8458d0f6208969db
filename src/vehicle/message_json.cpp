#include "vehicle/message_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/utf8.hpp"
#include "protocol/encoder.hpp"

namespace mavswitch::vehicle {
namespace {

using dialect::FieldType;
using Json = nlohmann::json;

static_assert(std::endian::native == std::endian::little, "MAVLink's wire order is the host's here");

template <class T>
T load(const uint8_t* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

// A value of an integer field as read from the wire, widened.
struct Integer {
  bool negative;
  uint64_t magnitude;
};

Integer integer_at(FieldType type, const uint8_t* at) {
  const auto s = [](int64_t v) { return Integer{v < 0, v < 0 ? 0 - uint64_t(v) : uint64_t(v)}; };
  switch (type) {
    case FieldType::kInt8: return s(load<int8_t>(at));
    case FieldType::kInt16: return s(load<int16_t>(at));
    case FieldType::kInt32: return s(load<int32_t>(at));
    case FieldType::kInt64: return s(load<int64_t>(at));
    case FieldType::kUInt16: return {false, load<uint16_t>(at)};
    case FieldType::kUInt32: return {false, load<uint32_t>(at)};
    case FieldType::kUInt64: return {false, load<uint64_t>(at)};
    default: return {false, load<uint8_t>(at)};
  }
}

// Text as a JSON string: UTF-8 as it is (a STATUSTEXT in any language), a byte that is not
// UTF-8 as the Latin-1 character it would be, so that the JSON is always valid.
void write_string(std::string_view text, std::string& out) {
  out += '"';
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", u);
    } else if (u < 0x80) {
      out += c;
    } else if (const size_t n = utf8::sequence_length(text, i); n > 0) {
      out.append(text.substr(i, n));
      i += n - 1;
    } else {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", u);
    }
  }
  out += '"';
}

template <class T>
void write_real(T v, std::string& out) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  fmt::format_to(std::back_inserter(out), "{}", v);
}

}  // namespace

MessageJson::MessageJson(const dialect::Dialect& dialect) : dialect_(dialect) {
  for (const dialect::MessageDef& m : dialect.messages) {
    Shape shape{&m, {}};
    for (const uint16_t index : m.wire_order) {
      const dialect::FieldDef& f = m.fields[index];
      Field field{&f, f.name == "type" ? "mavtype" : f.name};
      if (!f.enum_name.empty()) field.names = dialect.find_enum(f.enum_name);
      field.bitmask = f.display == "bitmask" || (field.names != nullptr && field.names->bitmask);
      shape.fields.push_back(std::move(field));
    }
    shapes_.emplace(m.id, std::move(shape));
    ids_.emplace(m.name, m.id);
  }
}

const MessageJson::Shape* MessageJson::shape(uint32_t id) const {
  const auto it = shapes_.find(id);
  return it == shapes_.end() ? nullptr : &it->second;
}

void MessageJson::write_field(const Field& field, const uint8_t* at, std::string& out) const {
  const dialect::FieldDef& f = *field.def;
  if (f.type == FieldType::kChar && f.array_len > 0) {
    const auto* text = reinterpret_cast<const char*>(at);
    write_string({text, strnlen(text, f.array_len)}, out);
    return;
  }
  const size_t size = dialect::type_size(f.type);
  const auto one = [&](const uint8_t* p) {
    switch (f.type) {
      case FieldType::kFloat: write_real(load<float>(p), out); return;
      case FieldType::kDouble: write_real(load<double>(p), out); return;
      case FieldType::kChar: write_string({reinterpret_cast<const char*>(p), 1}, out); return;
      default: break;
    }
    const Integer v = integer_at(f.type, p);
    if (field.names != nullptr && !v.negative) {
      if (field.bitmask) {
        out += '"';
        uint64_t left = v.magnitude;
        bool first = true;
        for (const dialect::EnumEntry& e : field.names->entries) {
          if (e.value == 0 || (left & e.value) != e.value) continue;
          out += first ? "" : " | ";
          out += e.name;
          left &= ~e.value;
          first = false;
        }
        if (left != 0) fmt::format_to(std::back_inserter(out), "{}{:#x}", first ? "" : " | ", left);
        out += '"';
        return;
      }
      for (const dialect::EnumEntry& e : field.names->entries) {
        if (e.value != v.magnitude) continue;
        out += "{\"type\":\"";
        out += e.name;
        out += "\"}";
        return;
      }
    }
    if (v.negative) out += '-';
    fmt::format_to(std::back_inserter(out), "{}", v.magnitude);
  };
  if (f.array_len == 0) {
    one(at);
    return;
  }
  out += '[';
  for (uint16_t i = 0; i < f.array_len; ++i) {
    if (i > 0) out += ',';
    one(at + i * size);
  }
  out += ']';
}

bool MessageJson::write_message(uint32_t msgid, std::span<const uint8_t> payload, std::string& out) const {
  const Shape* s = shape(msgid);
  if (s == nullptr) return false;
  uint8_t padded[256] = {};  // a truncated payload reads as zero-padded
  std::memcpy(padded, payload.data(), std::min<size_t>(payload.size(), s->def->max_len));
  out += "{\"type\":\"";
  out += s->def->name;
  out += '"';
  for (const Field& field : s->fields) {
    out += ",\"";
    out += field.key;
    out += "\":";
    write_field(field, padded + field.def->wire_offset, out);
  }
  out += '}';
  return true;
}

bool MessageJson::write_frame(const protocol::FrameView& frame, std::string& out) const {
  const size_t start = out.size();
  fmt::format_to(std::back_inserter(out), R"({{"header":{{"system_id":{},"component_id":{},"sequence":{}}},"message":)",
                 frame.sysid(), frame.compid(), frame.seq());
  if (!write_message(frame.msgid(), frame.payload(), out)) {
    out.resize(start);
    return false;
  }
  out += '}';
  return true;
}

std::string MessageJson::helper(std::string_view name) const {
  const auto it = ids_.find(name);
  if (it == ids_.end()) return "";
  std::string out = R"({"header":{"system_id":255,"component_id":0,"sequence":0},"message":)";
  uint8_t payload[256] = {};
  const Shape& s = *shape(it->second);
  for (const Field& field : s.fields) {
    const dialect::FieldDef& f = *field.def;
    if (f.mavlink_version) payload[f.wire_offset] = 3;
    // An enum field shows its shape ({"type": NAME}) with the enum's first value, as
    // mavlink2rest's template does.
    if (field.names == nullptr || field.bitmask || field.names->entries.empty()) continue;
    const uint64_t first = field.names->entries.front().value;
    const size_t size = dialect::type_size(f.type);
    for (uint16_t i = 0; i < std::max<uint16_t>(f.array_len, 1); ++i)
      std::memcpy(payload + f.wire_offset + i * size, &first, size);
  }
  write_message(it->second, {payload, s.def->max_len}, out);
  return out + "}";
}

std::string MessageJson::name_of(std::string_view name, uint64_t value) const {
  if (const dialect::EnumDef* e = dialect_.find_enum(name))
    for (const dialect::EnumEntry& entry : e->entries)
      if (entry.value == value) return entry.name;
  return std::to_string(value);
}

std::optional<uint64_t> MessageJson::value_of(std::string_view name, std::string_view entry) const {
  if (const dialect::EnumDef* e = dialect_.find_enum(name))
    for (const dialect::EnumEntry& candidate : e->entries)
      if (candidate.name == entry) return candidate.value;
  uint64_t number = 0;
  const auto [end, error] = std::from_chars(entry.data(), entry.data() + entry.size(), number);
  if (error != std::errc() || end != entry.data() + entry.size() || entry.empty()) return std::nullopt;
  return number;
}

}  // namespace mavswitch::vehicle
