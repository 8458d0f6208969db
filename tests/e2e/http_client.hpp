// A small HTTP/1.1 client for tests of the daemon's HTTP server: one request per connection,
// on 127.0.0.1, every wait bounded.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace mavswitch::test {

struct HttpReply {
  int status = 0;  // 0: no answer (nothing listening, or no reply in time)
  std::string body;
};

// Waits up to `seconds` for the answer.
HttpReply http_request(uint16_t port, const std::string& method, const std::string& path, const std::string& body = "",
                       const std::string& token = "", int seconds = 10);
// Sends `request` as it is (a malformed one, say) and returns everything that came back.
// Waits up to `seconds` for the server to close, or for `enough` to say what came is enough
// (an event stream, which never closes).
std::string raw_exchange(uint16_t port, const std::string& request, int seconds = 10,
                         const std::function<bool(const std::string&)>& enough = {});

}  // namespace mavswitch::test
