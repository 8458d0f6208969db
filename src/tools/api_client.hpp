// The `mavswitch` tool's side of the daemon's HTTP API: one request, one answer, through
// libcurl (certificates checked).
#pragma once

#include <string>

namespace mavswitch::tools {

struct ApiTarget {
  std::string url = "http://127.0.0.1:8080";  // http:// or https://, host, port
  std::string token;                          // empty: none sent
  // https: the certificate authorities the router's certificate is checked against (a
  // self-signed router: its own certificate); empty: the system's bundle.
  std::string ca_file;
  long timeout_ms = 10'000;  // the whole request: a vehicle's transfer through a lossy link takes longer
};

struct ApiReply {
  int status = 0;  // 0: no answer; `error` says why
  std::string body;
  std::string error;
};

ApiReply api_call(const ApiTarget& target, const std::string& method, const std::string& path,
                  const std::string& body = "");

// The token from --token-file or MAVSWITCH_TOKEN_FILE (empty when neither is given); false
// with *error set when the file cannot be read.
bool read_token(const std::string& file, std::string* token, std::string* error);

}  // namespace mavswitch::tools
