// Wire layout and CRC_EXTRA, as the MAVLink spec defines them ("Serialization" and "CRC_EXTRA
// calculation"): base fields sorted by element size, largest first, keeping XML order among
// equals; extension fields appended in XML order; CRC_EXTRA seeded with "NAME " and, for each base
// field in wire order, "type name " plus the array length byte for arrays.
#include <algorithm>
#include <numeric>
#include <string_view>

#include "dialect/model.hpp"
#include "protocol/crc.hpp"

namespace mavswitch::dialect {
namespace {

uint16_t crc_text(std::string_view text, uint16_t crc) {
  for (char c : text) crc = protocol::crc16_accumulate(static_cast<uint8_t>(c), crc);
  return crc;
}

}  // namespace

void compute_layout(MessageDef& m) {
  const size_t n = m.fields.size();
  std::vector<uint16_t> base;
  std::vector<uint16_t> ext;
  for (size_t i = 0; i < n; ++i) (m.fields[i].extension ? ext : base).push_back(static_cast<uint16_t>(i));
  std::stable_sort(base.begin(), base.end(),
                   [&](uint16_t a, uint16_t b) { return type_size(m.fields[a].type) > type_size(m.fields[b].type); });

  m.wire_order = base;
  m.wire_order.insert(m.wire_order.end(), ext.begin(), ext.end());

  uint16_t offset = 0;
  for (uint16_t idx : m.wire_order) {
    FieldDef& f = m.fields[idx];
    f.wire_offset = offset;
    offset = static_cast<uint16_t>(offset + f.wire_size());
    if (!f.extension) m.min_len = offset;
  }
  m.max_len = offset;

  uint16_t crc = crc_text(m.name + " ", protocol::kCrcInit);
  for (uint16_t idx : base) {
    const FieldDef& f = m.fields[idx];
    crc = crc_text(type_name(f.type), crc);
    crc = crc_text(" ", crc);
    crc = crc_text(f.name, crc);
    crc = crc_text(" ", crc);
    if (f.array_len) crc = protocol::crc16_accumulate(static_cast<uint8_t>(f.array_len), crc);
  }
  m.crc_extra = static_cast<uint8_t>((crc & 0xFF) ^ (crc >> 8));

  m.target_system_offset = -1;
  m.target_component_offset = -1;
  for (const FieldDef& f : m.fields) {
    if (f.array_len || type_size(f.type) != 1) continue;
    if (f.name == "target_system") m.target_system_offset = static_cast<int16_t>(f.wire_offset);
    if (f.name == "target_component") m.target_component_offset = static_cast<int16_t>(f.wire_offset);
  }
}

const MessageDef* Dialect::find(uint32_t id) const noexcept {
  auto it =
      std::lower_bound(messages.begin(), messages.end(), id, [](const MessageDef& m, uint32_t v) { return m.id < v; });
  return (it != messages.end() && it->id == id) ? &*it : nullptr;
}

const MessageDef* Dialect::find(std::string_view message_name) const noexcept {
  for (const MessageDef& m : messages) {
    if (m.name == message_name) return &m;
  }
  return nullptr;
}

const EnumDef* Dialect::find_enum(std::string_view enum_name) const noexcept {
  auto it = std::lower_bound(enums.begin(), enums.end(), enum_name,
                             [](const EnumDef& e, std::string_view v) { return e.name < v; });
  return (it != enums.end() && it->name == enum_name) ? &*it : nullptr;
}

protocol::MessageTable Dialect::message_table() const {
  std::vector<protocol::MessageInfo> infos;
  infos.reserve(messages.size());
  for (const MessageDef& m : messages) {
    infos.push_back({m.id, m.crc_extra, static_cast<uint8_t>(m.min_len), static_cast<uint8_t>(m.max_len),
                     m.target_system_offset, m.target_component_offset, m.name});
  }
  return protocol::MessageTable(infos);
}

}  // namespace mavswitch::dialect
