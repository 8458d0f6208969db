// Decodes any payload with a run-time MessageDef: the path for dialects loaded from XML at run
// time, where no generated code exists.
#pragma once

#include <cstdint>
#include <span>

#include "dialect/field_sink.hpp"
#include "dialect/model.hpp"

namespace mavswitch::dialect {

// Emits every field of `message` in XML order. A zero-truncated (or short v1) payload reads as
// if padded with zeros; bytes beyond max_len are ignored.
void decode_fields(const MessageDef& message, std::span<const uint8_t> payload, FieldSink& sink);

}  // namespace mavswitch::dialect
