// The dialect model: what the XML defines, plus the wire layout derived from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dialect/field_type.hpp"
#include "protocol/message_table.hpp"

namespace mavswitch::dialect {

struct FieldDef {
  std::string name;
  FieldType type = FieldType::kUInt8;
  uint16_t array_len = 0;        // 0: a scalar
  bool extension = false;        // declared after <extensions/>: not in v1, not in CRC_EXTRA
  bool mavlink_version = false;  // uint8_t_mavlink_version: filled by the sender
  std::string enum_name;
  std::string units;
  std::string display;       // "bitmask" where the XML says so
  uint16_t wire_offset = 0;  // byte offset in the payload (set by compute_layout)

  size_t wire_size() const noexcept { return type_size(type) * (array_len ? array_len : 1); }
};

struct MessageDef {
  uint32_t id = 0;
  std::string name;
  std::vector<FieldDef> fields;  // XML order (the order people read and typed code declares)
  std::string file;              // where it was defined, for error messages
  int line = 0;
  bool wip = false;
  bool deprecated = false;

  // Derived by compute_layout():
  std::vector<uint16_t> wire_order;  // indices into fields, in payload order
  uint8_t crc_extra = 0;
  uint16_t min_len = 0;
  uint16_t max_len = 0;
  int16_t target_system_offset = -1;
  int16_t target_component_offset = -1;
};

struct EnumEntry {
  std::string name;
  uint64_t value = 0;
};

struct EnumDef {
  std::string name;
  bool bitmask = false;
  std::vector<EnumEntry> entries;
};

struct Dialect {
  std::string name;                  // file stem of the top-level XML
  std::vector<MessageDef> messages;  // sorted by id
  std::vector<EnumDef> enums;        // sorted by name; entries merged across files
  std::vector<std::string> files;    // every XML file read, top-level first

  const MessageDef* find(uint32_t id) const noexcept;
  const MessageDef* find(std::string_view name) const noexcept;
  const EnumDef* find_enum(std::string_view name) const noexcept;

  // The per-id facts the wire layer needs. Names point into this Dialect: keep it alive.
  protocol::MessageTable message_table() const;
};

// Orders fields for the wire (by type size, largest first, stable; extensions last in XML
// order), and computes offsets, lengths, CRC_EXTRA and target offsets.
void compute_layout(MessageDef& message);

}  // namespace mavswitch::dialect
