#include "dialect/field_type.hpp"

#include <array>
#include <utility>

namespace mavswitch::dialect {
namespace {

constexpr std::array<std::pair<std::string_view, FieldType>, 11> kNames{{
    {"char", FieldType::kChar},
    {"int8_t", FieldType::kInt8},
    {"uint8_t", FieldType::kUInt8},
    {"int16_t", FieldType::kInt16},
    {"uint16_t", FieldType::kUInt16},
    {"int32_t", FieldType::kInt32},
    {"uint32_t", FieldType::kUInt32},
    {"int64_t", FieldType::kInt64},
    {"uint64_t", FieldType::kUInt64},
    {"float", FieldType::kFloat},
    {"double", FieldType::kDouble},
}};

}  // namespace

std::string_view type_name(FieldType t) noexcept {
  for (const auto& [name, type] : kNames) {
    if (type == t) return name;
  }
  return "?";
}

std::optional<FieldType> parse_type_name(std::string_view name) noexcept {
  if (name == "uint8_t_mavlink_version") return FieldType::kUInt8;
  for (const auto& [n, type] : kNames) {
    if (n == name) return type;
  }
  return std::nullopt;
}

}  // namespace mavswitch::dialect
