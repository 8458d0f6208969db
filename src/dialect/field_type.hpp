// The MAVLink field types, their wire sizes and their spelling in the XML.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mavswitch::dialect {

enum class FieldType : uint8_t {
  kChar,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat,
  kDouble
};

constexpr size_t type_size(FieldType t) noexcept {
  switch (t) {
    case FieldType::kChar:
    case FieldType::kInt8:
    case FieldType::kUInt8: return 1;
    case FieldType::kInt16:
    case FieldType::kUInt16: return 2;
    case FieldType::kInt32:
    case FieldType::kUInt32:
    case FieldType::kFloat: return 4;
    case FieldType::kInt64:
    case FieldType::kUInt64:
    case FieldType::kDouble: return 8;
  }
  return 0;
}

// The name used in the XML and in the CRC_EXTRA seed ("uint8_t", "char", "float", ...).
std::string_view type_name(FieldType t) noexcept;
// Parses a base type name; "uint8_t_mavlink_version" is a uint8_t. Arrays are handled by the loader.
std::optional<FieldType> parse_type_name(std::string_view name) noexcept;

}  // namespace mavswitch::dialect
