#include "e2e/peers.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <thread>

#include "dialect/builtin.hpp"

namespace mavswitch::test {

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

namespace {

uint16_t bound_port(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

void pace(std::chrono::milliseconds between) { std::this_thread::sleep_for(between); }

size_t Received::count_msgid(uint32_t msgid, uint8_t sysid, uint8_t compid) const {
  size_t n = 0;
  for (const auto& f : frames) {
    const auto p = protocol::probe_frame(dialect::builtin::message_table(), f.data(), f.size());
    if (p.status == protocol::Probe::Status::kFrame && p.frame.msgid() == msgid &&
        (sysid == 0 || p.frame.sysid() == sysid) && (compid == 0 || p.frame.compid() == compid))
      ++n;
  }
  return n;
}

Peer::Peer(int fd) : fd_(fd), parser_(dialect::builtin::message_table()) {}
Peer::~Peer() {
  if (fd_ >= 0) ::close(fd_);
}

void Peer::poll() {
  if (fd_ < 0) return;
  uint8_t buf[65536];
  for (int i = 0; i < 10000; ++i) {
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const ssize_t n = datagrams_ ? ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len)
                                 : ::read(fd_, buf, sizeof buf);
    if (n <= 0) break;
    if (datagrams_) received_.source_ports.push_back(ntohs(from.sin_port));
    auto sink = [&](const protocol::FrameView& f) {
      received_.frames.emplace_back(f.bytes().begin(), f.bytes().end());
    };
    parser_.feed({buf, static_cast<size_t>(n)}, sink);
    parser_.flush(sink);
  }
  received_.stats = parser_.stats();
}

bool Peer::wait_frames(size_t n, std::chrono::milliseconds timeout) {
  return wait_until(
      [&] {
        poll();
        return received_.frames.size() >= n;
      },
      timeout);
}

UdpPeer::UdpPeer() : Peer(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) {
  datagrams_ = true;
  const int size = 4 << 20;
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0) {
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  }
  sockaddr_in a = loopback(0);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) throw std::runtime_error("bind");
}

uint16_t UdpPeer::port() const { return bound_port(fd_); }

void UdpPeer::send_to(uint16_t port, const Bytes& bytes) {
  target_ = port;
  sockaddr_in a = loopback(port);
  ::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a);
}

void UdpPeer::send(const Bytes& bytes) { send_to(target_, bytes); }

TcpPeer::TcpPeer(uint16_t port) : Peer(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  sockaddr_in a = loopback(port);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) throw std::runtime_error("connect");
  set_nonblocking(fd_);
}

TcpPeer::TcpPeer(int connected_fd) : Peer(connected_fd) { set_nonblocking(fd_); }

void TcpPeer::send(const Bytes& bytes) {
  size_t off = 0;
  for (int i = 0; i < 1000 && off < bytes.size(); ++i) {
    const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n > 0)
      off += static_cast<size_t>(n);
    else if (errno == EAGAIN)
      std::this_thread::sleep_for(1ms);
    else
      break;
  }
}

bool TcpPeer::closed_by_peer() {
  uint8_t b;
  return ::recv(fd_, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

void TcpPeer::close_now() {
  ::close(fd_);
  fd_ = -1;
}

TcpListener::TcpListener(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  const int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a = loopback(port);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 || ::listen(fd_, 8) < 0)
    throw std::runtime_error("listen");
  port_ = bound_port(fd_);
}

TcpListener::~TcpListener() { ::close(fd_); }

std::unique_ptr<TcpPeer> TcpListener::accept(std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return nullptr;
  const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  return c < 0 ? nullptr : std::make_unique<TcpPeer>(c);
}

PtyPeer::PtyPeer() : Peer(-1) {
  int master = -1, slave = -1;
  char name[256];
  if (openpty(&master, &slave, name, nullptr, nullptr) < 0) throw std::runtime_error("openpty");
  termios t;
  tcgetattr(slave, &t);
  cfmakeraw(&t);
  tcsetattr(slave, TCSANOW, &t);
  tcgetattr(master, &t);
  cfmakeraw(&t);
  tcsetattr(master, TCSANOW, &t);
  ::close(slave);  // the router opens it by name
  fd_ = master;
  set_nonblocking(fd_);
  slave_ = name;
}

void PtyPeer::send(const Bytes& bytes) {
  size_t off = 0;  // a pty holds only a few KiB: wait for the router to take them
  for (int i = 0; i < 2000 && off < bytes.size() && fd_ >= 0; ++i) {
    const ssize_t n = ::write(fd_, bytes.data() + off, bytes.size() - off);
    if (n > 0)
      off += static_cast<size_t>(n);
    else
      std::this_thread::sleep_for(1ms);
  }
}

void PtyPeer::close_master() {
  ::close(fd_);
  fd_ = -1;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool introduce(UdpPeer& vehicle, uint16_t vehicle_port, UdpPeer& gcs, uint16_t gcs_port) {
  return wait_until(
      [&] {
        vehicle.send_to(vehicle_port, heartbeat(1, 1));
        gcs.send_to(gcs_port, heartbeat(255, 190));
        return gcs.wait_frames(1, 50ms) && vehicle.wait_frames(1, 50ms);
      },
      5000ms);
}

}  // namespace mavswitch::test
