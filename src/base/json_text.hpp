// JSON text that never throws: bytes that are not UTF-8 (a peer's parameter name, a path a
// client sent) become U+FFFD. Every answer and feed that can hold a peer's or a client's bytes
// is written through it; nlohmann's own dump() throws on such bytes, and that exception would
// fail a request (or, on the router's thread, stop the router).
#pragma once

#include <string>

namespace mavswitch {

template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace mavswitch
