#include "dialect/runtime_decode.hpp"

#include <algorithm>
#include <cstring>

namespace mavswitch::dialect {

void decode_fields(const MessageDef& message, std::span<const uint8_t> payload, FieldSink& sink) {
  uint8_t padded[256] = {};
  std::memcpy(padded, payload.data(), std::min<size_t>(payload.size(), message.max_len));
  alignas(8) uint8_t native[256 * 8];
  for (const FieldDef& f : message.fields) {
    // The wire is little-endian like every host we build for; the copy gives the values alignment.
    std::memcpy(native, padded + f.wire_offset, f.wire_size());
    sink.field(f.name, f.type, f.array_len != 0, f.array_len ? f.array_len : uint16_t{1}, native);
  }
}

}  // namespace mavswitch::dialect
