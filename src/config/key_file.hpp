// Reads a MAVLink signing key: 32 bytes, written as 64 hex digits, as base64, or raw. The file
// must not be readable by group or others.
#pragma once

#include <string>

#include "protocol/signing.hpp"

namespace mavswitch::config {

// Returns false with *error set ("...: readable by others: chmod 600 ...").
bool read_key_file(const std::string& path, protocol::SigningKey* key, std::string* error);
// A secret (a key, the HTTP token): a regular file of at most `max` bytes that neither group
// nor others may read or write. `what` names it in the error.
bool read_private_file(const std::string& path, const char* what, size_t max, std::string* out, std::string* error);

}  // namespace mavswitch::config
