#include "tools/api_client.hpp"

#include <civetweb.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include "tools/tls_tunnel.hpp"

namespace mavswitch::tools {
namespace {

struct Where {
  std::string host;
  int port = 80;
  bool tls = false;
};

bool parse_url(const std::string& url, Where* w, std::string* error) {
  std::string rest = url;
  if (rest.rfind("https://", 0) == 0) {
    w->tls = true;
    w->port = 443;
    rest = rest.substr(8);
  } else if (rest.rfind("http://", 0) == 0) {
    rest = rest.substr(7);
  }
  rest = rest.substr(0, rest.find('/'));
  size_t colon = rest.rfind(':');
  if (!rest.empty() && rest[0] == '[') {  // [::1]:8080
    const size_t close = rest.find(']');
    if (close == std::string::npos) {
      *error = url + ": an IPv6 address ends with ']'";
      return false;
    }
    w->host = rest.substr(1, close - 1);
    colon = rest.find(':', close);
  } else {
    w->host = rest.substr(0, colon);
  }
  if (colon != std::string::npos) w->port = std::atoi(rest.c_str() + colon + 1);
  if (w->host.empty() || w->port <= 0 || w->port > 65535) {
    *error = url + ": not a URL as http://HOST:PORT";
    return false;
  }
  return true;
}

}  // namespace

ApiReply api_call(const ApiTarget& target, const std::string& method, const std::string& path,
                  const std::string& body) {
  static std::once_flag once;
  std::call_once(once, [] { mg_init_library(MG_FEATURES_DEFAULT); });
  ApiReply reply;
  Where w;
  if (!parse_url(target.url, &w, &reply.error)) return reply;
  char error[256] = "";
  mg_connection* conn = nullptr;
  std::unique_ptr<TlsTunnel> tunnel;
  if (w.tls) {  // always verified: a token must not go to whoever answers
    try {
      tunnel = std::make_unique<TlsTunnel>(w.host, w.port, target.ca_file);
    } catch (const std::runtime_error& e) {
      reply.error = "cannot reach the router at " + target.url + ": " + e.what();
      return reply;
    }
    conn = mg_connect_client("127.0.0.1", tunnel->port(), 0, error, sizeof error);
  } else {
    conn = mg_connect_client(w.host.c_str(), w.port, 0, error, sizeof error);
  }
  if (conn == nullptr) {
    reply.error = "cannot reach the router at " + target.url + ": " + error;
    return reply;
  }
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: " + w.host + "\r\nConnection: close\r\n";
  if (!target.token.empty()) request += "Authorization: Bearer " + target.token + "\r\n";
  request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  mg_write(conn, request.data(), request.size());
  constexpr int kTimeoutMs = 10'000;
  if (mg_get_response(conn, error, sizeof error, kTimeoutMs) < 0) {
    reply.error = "no answer from " + target.url + ": " + error;
    mg_close_connection(conn);
    return reply;
  }
  reply.status = mg_get_response_info(conn)->status_code;
  char buf[16384];
  for (int n; (n = mg_read(conn, buf, sizeof buf)) > 0;) reply.body.append(buf, static_cast<size_t>(n));
  mg_close_connection(conn);
  return reply;
}

bool read_token(const std::string& file, std::string* token, std::string* error) {
  std::string path = file;
  if (path.empty()) {
    const char* env = std::getenv("MAVSWITCH_TOKEN_FILE");
    if (env == nullptr) return true;
    path = env;
  }
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot read the token file";
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  *token = text.str();
  while (!token->empty() && (token->back() == '\n' || token->back() == '\r' || token->back() == ' ')) token->pop_back();
  return true;
}

}  // namespace mavswitch::tools
