#include "e2e/http_client.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

namespace mavswitch::test {

std::string raw_exchange(uint16_t port, const std::string& request, int seconds,
                         const std::function<bool(const std::string&)>& enough) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string raw;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return raw;
  }
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  char buf[16384];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
    if (enough && enough(raw)) break;
  }
  ::close(fd);
  return raw;
}

HttpReply http_request(uint16_t port, const std::string& method, const std::string& path, const std::string& body,
                       const std::string& token, int seconds) {
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  const std::string raw = raw_exchange(port, request, seconds);
  HttpReply reply;
  const auto space = raw.find(' ');
  const auto end = raw.find("\r\n\r\n");
  if (space == std::string::npos || end == std::string::npos) return reply;
  reply.status = std::atoi(raw.c_str() + space + 1);
  reply.body = raw.substr(end + 4);
  return reply;
}

}  // namespace mavswitch::test
