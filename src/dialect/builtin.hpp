// The dialect compiled in at configure time (MAVSWITCH_DIALECT, ardupilotmega by default).
// Implemented by code that codegen/ generates into the build tree.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "dialect/field_sink.hpp"
#include "dialect/model.hpp"
#include "protocol/message_table.hpp"

namespace mavswitch::dialect::builtin {

std::string_view name() noexcept;
// The message table of the built-in dialect (static storage; built once, thread-safe).
const protocol::MessageTable& message_table();
// Decodes `payload` of message `msgid` with the typed, generated code. False for an unknown id.
bool decode_fields(uint32_t msgid, std::span<const uint8_t> payload, FieldSink& sink);
// The whole model (messages with their fields' enums and units, the enums), as the XML said:
// built once from tables generated at build time (thread-safe), for what decodes to names.
const Dialect& model();

}  // namespace mavswitch::dialect::builtin
