#include "tools/field_format.hpp"

#include <cmath>
#include <cstring>

namespace mavswitch::tools {

using dialect::FieldType;

void append_quoted(fmt::memory_buffer& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20 || u >= 0x7F) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", u);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

namespace {

template <class T>
T read(const void* at) {
  T v;
  std::memcpy(&v, at, sizeof(T));
  return v;
}

template <class F>
void append_float(fmt::memory_buffer& out, F v, bool json) {
  if (std::isfinite(v)) {
    fmt::format_to(std::back_inserter(out), "{}", v);
  } else {
    fmt::format_to(std::back_inserter(out), "{}", json ? "null" : (std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf")));
  }
}

}  // namespace

void FieldFormatter::value(FieldType type, const void* at) {
  auto it = std::back_inserter(out_);
  const bool json = style_ == Style::kJson;
  switch (type) {
    case FieldType::kChar: fmt::format_to(it, "{}", static_cast<int>(read<char>(at))); break;
    case FieldType::kInt8: fmt::format_to(it, "{}", read<int8_t>(at)); break;
    case FieldType::kUInt8: fmt::format_to(it, "{}", read<uint8_t>(at)); break;
    case FieldType::kInt16: fmt::format_to(it, "{}", read<int16_t>(at)); break;
    case FieldType::kUInt16: fmt::format_to(it, "{}", read<uint16_t>(at)); break;
    case FieldType::kInt32: fmt::format_to(it, "{}", read<int32_t>(at)); break;
    case FieldType::kUInt32: fmt::format_to(it, "{}", read<uint32_t>(at)); break;
    case FieldType::kInt64: fmt::format_to(it, "{}", read<int64_t>(at)); break;
    case FieldType::kUInt64: fmt::format_to(it, "{}", read<uint64_t>(at)); break;
    case FieldType::kFloat: append_float(out_, read<float>(at), json); break;
    case FieldType::kDouble: append_float(out_, read<double>(at), json); break;
  }
}

void FieldFormatter::field(std::string_view name, FieldType type, bool is_array, uint16_t count, const void* values) {
  const bool json = style_ == Style::kJson;
  if (json) {
    if (!first_) out_.push_back(',');
    append_quoted(out_, name);
    out_.push_back(':');
  } else {
    if (!first_) out_.push_back(' ');
    out_.append(name);
    out_.push_back('=');
  }
  first_ = false;

  if (type == FieldType::kChar && is_array) {  // a char array is a string, up to its first NUL
    const auto* chars = static_cast<const char*>(values);
    append_quoted(out_, std::string_view(chars, strnlen(chars, count)));
    return;
  }
  if (!is_array) {
    value(type, values);
    return;
  }
  out_.push_back('[');
  const size_t size = dialect::type_size(type);
  for (uint16_t i = 0; i < count; ++i) {
    if (i) out_.push_back(',');
    value(type, static_cast<const uint8_t*>(values) + i * size);
  }
  out_.push_back(']');
}

}  // namespace mavswitch::tools
