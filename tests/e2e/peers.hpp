// Test peers on loopback: a UDP socket, a TCP client or server, a pseudo-terminal; each sends
// frames and collects the frames it receives. Every wait is bounded in time.
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "e2e/free_ports.hpp"
#include "protocol/parser.hpp"
#include "support/frames.hpp"

namespace mavswitch::test {

using namespace std::chrono_literals;
// Polls pred every few milliseconds until it holds or the timeout passes.
bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout = 3000ms);

// How often `what` occurs in `text` (lines in a daemon's log, answers in a raw exchange).
size_t count_of(const std::string& text, const std::string& what);

// Milliseconds from t0 until now.
inline int64_t ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
}

// A pause that shapes the traffic a test sends (bursts, a stream at a rate), never a wait for
// something to happen: those wait on a condition (wait_until, Router::settle).
void pace(std::chrono::milliseconds between);

// Received frames, parsed with the built-in dialect.
struct Received {
  std::vector<Bytes> frames;
  std::vector<uint16_t> source_ports;  // UDP: the port each datagram came from, in order
  protocol::ParserStats stats;
  // Frames of `msgid`; only from system `sysid` and component `compid` where each is not 0.
  size_t count_msgid(uint32_t msgid, uint8_t sysid = 0, uint8_t compid = 0) const;
};

class Peer {
 public:
  virtual ~Peer();
  virtual void send(const Bytes& bytes) = 0;
  // Reads whatever is available now (non-blocking) into received().
  void poll();
  // Polls until at least n frames have arrived or the timeout passes.
  bool wait_frames(size_t n, std::chrono::milliseconds timeout = 3000ms);
  const Received& received() {
    poll();
    return received_;
  }
  void clear() {
    received_.frames.clear();
    received_.source_ports.clear();
  }
  int fd() const { return fd_; }

 protected:
  explicit Peer(int fd);
  int fd_;
  bool datagrams_ = false;  // a UDP socket: record where each datagram came from
  protocol::FrameParser parser_;
  Received received_;
};

class UdpPeer final : public Peer {
 public:
  UdpPeer();  // bound to 127.0.0.1, an ephemeral port
  uint16_t port() const;
  void send_to(uint16_t port, const Bytes& bytes);
  void send(const Bytes& bytes) override;  // to the last port used with send_to / connect_to
  void connect_to(uint16_t port) { target_ = port; }

 private:
  uint16_t target_ = 0;
};

class TcpPeer final : public Peer {
 public:
  explicit TcpPeer(uint16_t port);  // connects to 127.0.0.1:port
  explicit TcpPeer(int connected_fd);
  void send(const Bytes& bytes) override;
  bool closed_by_peer();
  void close_now();
};

class TcpListener {
 public:
  explicit TcpListener(uint16_t port = 0);  // 0: ephemeral
  ~TcpListener();
  uint16_t port() const { return port_; }
  // Accepts one connection within the timeout; nullptr if none came.
  std::unique_ptr<TcpPeer> accept(std::chrono::milliseconds timeout = 5000ms);

 private:
  int fd_;
  uint16_t port_;
};

// A pseudo-terminal: the router opens the slave side (through a symlink the test controls);
// the test reads and writes the master side.
class PtyPeer final : public Peer {
 public:
  PtyPeer();
  const std::string& slave_path() const { return slave_; }
  void send(const Bytes& bytes) override;
  void close_master();

 private:
  std::string slave_;
};

// 127.0.0.1:port.
sockaddr_in loopback(uint16_t port);

// A vehicle (1/1) and a ground station (255/190), each on its own UDP server of a router, heard
// both ways: routes exist in both directions. False after 5 s without.
bool introduce(UdpPeer& vehicle, uint16_t vehicle_port, UdpPeer& gcs, uint16_t gcs_port);

}  // namespace mavswitch::test
