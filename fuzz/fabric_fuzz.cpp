// A hostile member of the fleet's NATS cluster: what any client of the cluster publishes reaches
// every router's fabric link. A server of its own on loopback (a thread here) hands a running
// router's libnats the messages the input makes, on the subjects the router subscribed to (their
// wildcards filled by the input, or bent), with any reply subject (the origin and count the link
// reads) and any payload (a frame of the dialect with its source, target and bytes chosen, or
// plain bytes). The router has two fabric links: one that takes vehicles by name and pattern
// (renumbering them) and one that serves a vehicle (and yields its name to an earlier router).
// After each input the server sends PING: libnats answers it after the messages before it,
// which the link has routed by then. No crash, leak or hang; the router still answers.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../tests/support/loopback_listener.hpp"  // header-only: no test library here
#include "dialect/builtin.hpp"
#include "fabric/nats_endpoint.hpp"
#include "fuzz_world.hpp"
#include "protocol/encoder.hpp"

using namespace mavswitch;

namespace {

using fuzz::Input;

// A NATS server of a few lines: INFO, PING/PONG, SUB and UNSUB remembered, PUB read and dropped.
// `deliver` writes messages to one client, then a PING, and returns once that client's PONG
// (the sign it has read them) came.
class FakeServer {
 public:
  struct Client {
    int fd = -1;
    std::string in;
    std::vector<std::pair<std::string, std::string>> subs;  // (sid, subject)
    size_t pongs = 0;
  };

  FakeServer() {
    listener_ = test::loopback_listener(port_);
    if (listener_ < 0) std::abort();
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    for (const Client& c : clients_) ::close(c.fd);
    ::close(listener_);
  }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

  // Waits (10 s at most) for `count` clients that subscribed to something.
  bool wait_clients(size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] {
      size_t ready = 0;
      for (const Client& c : clients_) ready += !c.subs.empty();
      return ready >= count;
    });
  }
  // The subscriptions of client `k` (a copy).
  std::vector<std::pair<std::string, std::string>> subs(size_t k) {
    std::lock_guard lock(mutex_);
    return k < clients_.size() ? clients_[k].subs : std::vector<std::pair<std::string, std::string>>{};
  }
  size_t clients() {
    std::lock_guard lock(mutex_);
    return clients_.size();
  }
  // Writes `bytes` and a PING to client `k`; true once its PONG came (10 s at most).
  bool deliver(size_t k, const std::string& bytes) {
    std::unique_lock lock(mutex_);
    if (k >= clients_.size()) return false;
    const size_t before = clients_[k].pongs;
    const std::string all = bytes + "PING\r\n";
    if (!write_all(clients_[k].fd, all)) return false;
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return clients_[k].pongs > before; });
  }

 private:
  static bool write_all(int fd, const std::string& s) {
    for (size_t at = 0; at < s.size();) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 10'000) <= 0) return false;
      const ssize_t n = ::send(fd, s.data() + at, s.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += size_t(n);
    }
    return true;
  }

  // One line of the client's protocol (without its CRLF); PUB's payload is skipped by the caller.
  void line(Client& c, const std::string& l, size_t& skip) {
    auto word = [&](size_t i) {
      size_t at = 0;
      for (size_t k = 0; k < i; ++k) at = l.find(' ', at) + 1;
      return l.substr(at, l.find(' ', at) - at);
    };
    if (l.starts_with("PING")) {
      (void)write_all(c.fd, "PONG\r\n");
    } else if (l.starts_with("PONG")) {
      ++c.pongs;
    } else if (l.starts_with("SUB ")) {
      const size_t words = size_t(std::count(l.begin(), l.end(), ' ')) + 1;
      c.subs.emplace_back(word(words - 1), word(1));
    } else if (l.starts_with("UNSUB ")) {
      const std::string sid = word(1);
      std::erase_if(c.subs, [&](const auto& s) { return s.first == sid; });
    } else if (l.starts_with("PUB ")) {
      skip = std::stoul(l.substr(l.rfind(' ') + 1)) + 2;  // the payload and its CRLF
    }
  }

  void serve() {
    const std::string info = R"(INFO {"server_id":"fuzz","version":"2.9.0","max_payload":1048576,"proto":1})"
                             "\r\n";
    std::vector<size_t> skips;
    while (!stop_) {
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      {
        std::lock_guard lock(mutex_);
        for (const Client& c : clients_) fds.push_back({c.fd, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
      std::lock_guard lock(mutex_);
      if ((fds[0].revents & POLLIN) && clients_.size() < 8) {
        const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0 && write_all(fd, info)) clients_.push_back({fd, "", {}, 0}), skips.push_back(0);
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Client& c = clients_[i - 1];
        char buf[16384];
        const ssize_t n = ::read(c.fd, buf, sizeof buf);
        if (n <= 0) continue;  // a router that went: its slot stays, silent
        c.in.append(buf, size_t(n));
        size_t& skip = skips[i - 1];
        for (;;) {
          if (skip > 0) {
            const size_t gone = std::min(skip, c.in.size());
            c.in.erase(0, gone);
            skip -= gone;
            if (skip > 0) break;
          }
          const size_t end = c.in.find("\r\n");
          if (end == std::string::npos) break;
          const std::string l = c.in.substr(0, end);
          c.in.erase(0, end + 2);
          line(c, l, skip);
        }
      }
      changed_.notify_all();
    }
  }

  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Client> clients_;  // under mutex_
  std::thread thread_;
};

// Tokens a subject or reply is made of: the fabric's own, names the routers take, and wildcards.
constexpr const char* kTokens[] = {"mavlink",
                                   "from",
                                   "to",
                                   "origin",
                                   "1",
                                   "11",
                                   "255",
                                   "0",
                                   "boat-1",
                                   "boat-xyz",
                                   "v1",
                                   "v2",
                                   "HEARTBEAT",
                                   "COMMAND_LONG",
                                   "ATTITUDE",
                                   "*",
                                   ">",
                                   "1700000000000-ab12",
                                   "18446744073709551615",
                                   "42",
                                   "-",
                                   ""};

// A token the input chooses, or a few of its bytes made subject-safe (no space, no control byte).
std::string token(Input& in) {
  const uint8_t choice = in.byte();
  if (choice < 200) return kTokens[choice % std::size(kTokens)];
  std::string t = in.text(12);
  for (char& ch : t) {
    if (static_cast<unsigned char>(ch) <= ' ' || static_cast<unsigned char>(ch) >= 0x7f) ch = 'x';
  }
  return t;
}

// A subscription's subject with its wildcards filled, or tokens bent.
std::string subject_from(Input& in, const std::string& pattern) {
  std::string out;
  size_t at = 0;
  while (at <= pattern.size()) {
    const size_t dot = std::min(pattern.find('.', at), pattern.size());
    std::string t = pattern.substr(at, dot - at);
    const uint8_t how = in.byte();
    if (t == "*" || how % 8 == 0) t = token(in);
    if (t == ">") {
      t = token(in);
      for (int more = in.byte() % 4; more > 0; --more) t += "." + token(in);
    }
    out += (out.empty() ? "" : ".") + (t.empty() ? std::string("x") : t);
    at = dot + 1;
  }
  return out;
}

// A message's payload: a frame of the dialect (any source, its payload bytes from the input,
// a byte of it bent now and then) or the input's bytes as they are.
std::string payload(Input& in) {
  if (in.byte() % 8 == 0) return in.text(300);
  const auto infos = dialect::builtin::message_table().all();
  const protocol::MessageInfo& info = infos[(in.byte() | in.byte() << 8) % infos.size()];
  uint8_t body[255]{};
  for (size_t i = 0; i < info.max_len; ++i) body[i] = in.byte();
  uint8_t frame[protocol::kMaxFrameLen];
  protocol::FrameHeader header;
  header.seq = in.byte();
  header.sysid = in.byte();
  header.compid = in.byte();
  header.msgid = info.id;
  const size_t n = protocol::encode_v2(header, {body, info.max_len}, info.crc_extra, frame);
  if (n > 0 && in.byte() % 4 == 0) frame[in.byte() % n] ^= in.byte();
  return std::string(reinterpret_cast<const char*>(frame), n);
}

struct World : fuzz::RunningRouter {
  World() {
    for (int which = 0; which < 2; ++which) {
      config::NatsSettings& s = settings[size_t(which)];
      s.urls = {server.url()};
      if (which == 0) {
        s.vehicles = {{"v1", 11}, {"boat-*", 0}};
        s.vehicle_timeout_ms = 1000;
      } else {
        s.vehicle = "v2";
      }
      transport::EndpointSpec spec;
      spec.kind = transport::EndpointSpec::Kind::kMade;
      spec.name = which == 0 ? "ground" : "vehicle";
      spec.maker = fabric::nats_maker(s, nullptr, router.routing().route_timeout());
      router.run_on_loop([&] { router.open_endpoint(spec); });
    }
    if (!server.wait_clients(2)) std::abort();
  }
  FakeServer server;  // made before the endpoints; at exit it goes first, then the router stops
  config::NatsSettings settings[2];
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World world;
  Input in(data, size);
  const size_t client = in.byte() % world.server.clients();
  const auto subs = world.server.subs(client);
  if (subs.empty()) return 0;
  std::string bytes;
  for (int m = 0; m < 8 && !in.empty(); ++m) {
    const auto& [sid, pattern] = subs[in.byte() % subs.size()];
    const std::string subject = subject_from(in, pattern);
    std::string reply;
    const uint8_t r = in.byte() % 4;
    if (r == 1) reply = "mavlink.origin." + token(in);
    if (r == 2) reply = "mavlink.origin." + token(in) + "." + token(in);
    if (r == 3) reply = subject_from(in, "*.*.*.*");
    const std::string body = payload(in);
    bytes += "MSG " + subject + " " + sid + (reply.empty() ? "" : " " + reply) + " " + std::to_string(body.size()) +
             "\r\n" + body + "\r\n";
  }
  // Its PONG says the router read them all; a router that stops answering is a hang.
  if (!world.server.deliver(client, bytes)) std::abort();
  return 0;
}
