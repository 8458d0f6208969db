#include "fabric/nats_handshake_guard.hpp"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

namespace mavswitch::fabric {
namespace {

uint16_t port_of(const std::string& url) {
  std::string rest = url;
  if (const auto scheme = rest.find("://"); scheme != std::string::npos) rest.erase(0, scheme + 3);
  if (const auto at = rest.rfind('@'); at != std::string::npos) rest.erase(0, at + 1);
  rest = rest.substr(0, rest.find('/'));
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || rest.back() == ']') return 4222;
  const long port = std::strtol(rest.c_str() + colon + 1, nullptr, 10);
  return port > 0 && port < 65536 ? static_cast<uint16_t>(port) : 4222;
}

// Calls f(fd, inode) for each stream socket of the process.
template <class F>
void each_stream_socket(F f) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  const int own = ::dirfd(dir);
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == own) continue;
    struct stat st {};
    int type = 0;
    socklen_t len = sizeof type;
    if (::fstat(int(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (::getsockopt(int(fd), SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
    f(int(fd), uint64_t(st.st_ino));
  }
  ::closedir(dir);
}

// The peer's port, or 0 when not connected (or not IP).
uint16_t peer_port(int fd) {
  sockaddr_storage peer{};
  socklen_t len = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return 0;
  if (peer.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(peer).sin_port);
  if (peer.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(peer).sin6_port);
  return 0;
}

}  // namespace

HandshakeGuard::HandshakeGuard(const std::vector<std::string>& urls) {
  for (const auto& u : urls) ports_.insert(port_of(u));
}

void HandshakeGuard::begin() {
  std::set<uint64_t> before;
  each_stream_socket([&](int, uint64_t inode) { before.insert(inode); });
  std::lock_guard lock(mutex_);
  before_ = std::move(before);
  active_ = true;
}

void HandshakeGuard::end() {
  std::lock_guard lock(mutex_);
  active_ = false;
}

bool HandshakeGuard::look(bool all) {
  std::set<uint64_t> before;
  {
    std::lock_guard lock(mutex_);
    if (!active_) {
      seen_.clear();
      return false;
    }
    before = before_;
  }
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::pair<uint64_t, std::chrono::steady_clock::time_point>> still;
  each_stream_socket([&](int fd, uint64_t inode) {
    if (before.contains(inode)) return;
    const uint16_t port = peer_port(fd);
    // Stopping: a new socket still connecting goes too (its peer is not known yet).
    if (!(all && port == 0) && !ports_.contains(port)) return;
    auto it = std::find_if(seen_.begin(), seen_.end(), [&](const auto& s) { return s.first == inode; });
    const auto since = it != seen_.end() ? it->second : now;
    if (all || now - since >= kHandshake) {
      ::shutdown(fd, SHUT_RDWR);
    } else {
      still.emplace_back(inode, since);
    }
  });
  seen_ = std::move(still);
  std::lock_guard lock(mutex_);
  return active_;
}

}  // namespace mavswitch::fabric
