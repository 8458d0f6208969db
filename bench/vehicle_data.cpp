// What the vehicle data API (mavlink2rest's) costs the router: its CPU while a vehicle streams
// ArduPilot's telemetry mix (every message of its REQUEST_DATA_STREAM groups, at RATE messages a
// second in all) and JSON WebSocket clients read it, against the same router with the HTTP
// server off (nothing decoded) and with the tree alone (no client). Then the latency of
// GET /v1/mavlink with 1,000 messages in the tree.
//
//   vehicle_data MAVSWITCHD [--rate 400] [--seconds 5] [--clients 0,1,20,20:ATTITUDE] [--gcs 0]
//   vehicle_data MAVSWITCHD --footprint    (a companion computer's day: --rate 100 --clients 5 --gcs 2)
//
// One line per case: clients, messages sent a second, JSON messages the clients received a
// second, the router's CPU as a share of one core, and that share over the tree-alone case's;
// its resident memory started and idle, and at the end of the run. With --gcs N, N ground
// stations (UDP peers that said one HEARTBEAT) get the vehicle's frames too.
// After each case with clients, its floor: the CPU the kernel alone takes to write the bytes
// the clients got to as many loopback sockets.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.hpp"
#include "dialect/builtin.hpp"
#include "protocol/crc.hpp"
#include "protocol/encoder.hpp"
#include "rates/stream_groups.hpp"

using namespace mavswitch;
using Clock = std::chrono::steady_clock;

namespace {

// A connected TCP socket to 127.0.0.1:port, or -1.
int connect_tcp(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = bench::loopback(port);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// One HTTP/1.1 GET, its whole answer (the server closes).
std::string http_get(uint16_t port, const std::string& path) {
  const int fd = connect_tcp(port);
  if (fd < 0) return "";
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (write(fd, request.data(), request.size()) != ssize_t(request.size())) {
    close(fd);
    return "";
  }
  std::string answer;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) answer.append(buf, size_t(n));
  close(fd);
  return answer;
}

// A WebSocket client that only reads: the messages it got (server frames are not masked).
struct Client {
  int fd = -1;
  std::string in;
  bool upgraded = false;
  uint64_t messages = 0, bytes = 0;
  void read_some() {
    char buf[65536];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return;
    bytes += uint64_t(n);
    in.append(buf, size_t(n));
    if (!upgraded) {
      const size_t end = in.find("\r\n\r\n");
      if (end == std::string::npos) return;
      upgraded = in.starts_with("HTTP/1.1 101");
      in.erase(0, end + 4);
    }
    size_t at = 0;
    while (in.size() - at >= 2) {
      const auto* p = reinterpret_cast<const uint8_t*>(in.data() + at);
      uint64_t len = p[1] & 0x7F;
      size_t head = 2;
      if (len == 126) {
        if (in.size() - at < 4) break;
        len = uint64_t(p[2]) << 8 | p[3];
        head = 4;
      } else if (len == 127) {
        if (in.size() - at < 10) break;
        len = 0;
        for (int i = 0; i < 8; ++i) len = len << 8 | p[2 + i];
        head = 10;
      }
      if (in.size() - at < head + len) break;
      if ((p[0] & 0x0F) == 1) ++messages;  // a text message
      at += head + len;
    }
    in.erase(0, at);
  }
};

Client open_client(uint16_t port, const std::string& query) {
  Client c;
  c.fd = connect_tcp(port);
  const std::string upgrade = "GET /v1/ws/mavlink" + query +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
  if (c.fd >= 0 && write(c.fd, upgrade.data(), upgrade.size()) != ssize_t(upgrade.size())) c.fd = -1;
  if (c.fd >= 0) fcntl(c.fd, F_SETFL, O_NONBLOCK);
  return c;
}

// The vehicle's frames: every message ArduPilot streams, with random field values.
std::vector<std::vector<uint8_t>> telemetry_mix(uint8_t systems) {
  std::mt19937 rng(1);
  std::vector<std::vector<uint8_t>> frames;
  for (uint8_t sys = 1; sys <= systems; ++sys) {
    for (const uint32_t id : rates::stream_group(0)) {
      const protocol::MessageInfo* info = dialect::builtin::message_table().find(id);
      if (info == nullptr) continue;
      uint8_t payload[255];
      for (auto& b : payload) b = uint8_t(rng());
      std::vector<uint8_t> f(protocol::kMaxFrameLen);
      f.resize(protocol::encode_v2({.seq = 0, .sysid = sys, .compid = 1, .msgid = id}, {payload, info->max_len},
                                   info->crc_extra, f));
      frames.push_back(std::move(f));
    }
  }
  return frames;
}

// A process's resident memory (VmRSS), in KiB.
long rss_kb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmRSS:")) return std::atol(line.c_str() + 6);
  return -1;
}

struct Router {
  pid_t pid = -1;
  uint16_t udp = 0, http = 0;
  long idle_rss_kb = 0;
  Router(const std::string& daemon, bool http_on) {
    udp = bench::free_port(SOCK_DGRAM);
    http = bench::free_port(SOCK_STREAM);
    pid = bench::start_quietly({daemon, "-t", "0", "--http", http_on ? "127.0.0.1:" + std::to_string(http) : "0",
                                "0.0.0.0:" + std::to_string(udp)});
    // Wait for it: its UDP port bound (a datagram to it is then not refused).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (http_on)
      for (int i = 0; i < 50 && http_get(http, "/info").empty(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    idle_rss_kb = rss_kb(pid);
  }
  ~Router() {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
  }
};

// Streams `frames` round and round to the router at `rate` a second for `seconds`, reading the
// clients meanwhile: the router's CPU share of one core, the clients' messages and bytes a second.
struct Streamed {
  double share = 0, messages = 0, bytes = 0;
};
Streamed stream(Router& r, std::vector<Client>& clients, const std::vector<std::vector<uint8_t>>& frames, double rate,
                double seconds, int gcs = 0) {
  const int out = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const sockaddr_in to = bench::loopback(r.udp);
  std::vector<pollfd> polls;
  for (const Client& c : clients) polls.push_back({c.fd, POLLIN, 0});
  // Ground stations: a HEARTBEAT each makes them peers of the router's UDP port.
  std::vector<int> stations;
  for (int i = 0; i < gcs; ++i) {
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    const protocol::MessageInfo* hb = dialect::builtin::message_table().find(0);
    uint8_t payload[9] = {0, 0, 0, 0, 6, 8, 0, 0, 3};  // MAV_TYPE_GCS, MAV_AUTOPILOT_INVALID
    std::vector<uint8_t> f(protocol::kMaxFrameLen);
    f.resize(protocol::encode_v2({.seq = 0, .sysid = uint8_t(255 - i), .compid = 190, .msgid = 0}, {payload, 9},
                                 hb->crc_extra, f));
    sendto(fd, f.data(), f.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    stations.push_back(fd);
  }
  const auto drain_stations = [&] {
    char buf[65536];
    for (const int fd : stations)
      while (read(fd, buf, sizeof buf) > 0) {
      }
  };
  size_t next = 0;
  uint8_t seq = 0;
  const auto send_due = [&](Clock::time_point t0, double& sent) {
    const double due = rate * std::chrono::duration<double>(Clock::now() - t0).count();
    for (; sent < due; sent += 1) {
      std::vector<uint8_t> f = frames[next++ % frames.size()];
      f[4] = seq++;
      // The checksum covers the sequence number: made again for it.
      const protocol::MessageInfo* info =
          dialect::builtin::message_table().find(uint32_t(f[7] | f[8] << 8 | f[9] << 16));
      uint16_t crc = protocol::crc16(f.data() + 1, f.size() - 3);
      crc = protocol::crc16_accumulate(info->crc_extra, crc);
      f[f.size() - 2] = uint8_t(crc), f[f.size() - 1] = uint8_t(crc >> 8);
      sendto(out, f.data(), f.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    }
  };
  double sent = 0;
  auto t0 = Clock::now();
  while (Clock::now() - t0 < std::chrono::seconds(1)) {  // settle: the tree fills, the clients start
    send_due(t0, sent);
    drain_stations();
    if (poll(polls.data(), polls.size(), 1) > 0)
      for (size_t i = 0; i < polls.size(); ++i)
        if (polls[i].revents & POLLIN) clients[i].read_some();
  }
  uint64_t got_before = 0, bytes_before = 0;
  for (const Client& c : clients) got_before += c.messages, bytes_before += c.bytes;
  const double cpu0 = bench::cpu_seconds(r.pid);
  t0 = Clock::now();
  sent = 0;
  while (Clock::now() - t0 < std::chrono::duration<double>(seconds)) {
    send_due(t0, sent);
    drain_stations();
    if (poll(polls.data(), polls.size(), 1) > 0)
      for (size_t i = 0; i < polls.size(); ++i)
        if (polls[i].revents & POLLIN) clients[i].read_some();
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu = bench::cpu_seconds(r.pid) - cpu0;
  uint64_t got = 0, bytes = 0;
  for (const Client& c : clients) got += c.messages, bytes += c.bytes;
  close(out);
  for (const int fd : stations) close(fd);
  return {cpu / elapsed, double(got - got_before) / elapsed, double(bytes - bytes_before) / elapsed};
}

// The floor under any server of n JSON streams: what the kernel alone charges a thread that
// writes `bytes_each` a second to each of n loopback TCP readers, in 16 KiB writes every 10 ms as
// the window does (on loopback the sender's call also runs the receiving side). Its CPU share.
double fanout_floor(int n, double bytes_each, double seconds) {
  const uint16_t port = bench::free_port(SOCK_STREAM);
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  const sockaddr_in a = bench::loopback(port);
  if (bind(listener, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || listen(listener, n) != 0) return -1;
  std::vector<int> readers, writers;
  for (int i = 0; i < n; ++i) {
    readers.push_back(connect_tcp(port));
    writers.push_back(accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
    fcntl(readers.back(), F_SETFL, O_NONBLOCK);
  }
  close(listener);
  std::atomic<bool> done{false};
  double share = 0;
  std::thread writer([&] {
    static char chunk[16 * 1024];
    std::memset(chunk, '{', sizeof chunk);
    timespec c0{}, c1{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    const auto t0 = Clock::now();
    std::vector<double> written(writers.size(), 0);
    while (Clock::now() - t0 < std::chrono::duration<double>(seconds)) {
      const double due = bytes_each * std::chrono::duration<double>(Clock::now() - t0).count();
      for (size_t i = 0; i < writers.size(); ++i) {
        while (written[i] + 1 <= due) {
          const size_t size = size_t(std::min<double>(sizeof chunk, due - written[i]));
          const ssize_t put = write(writers[i], chunk, size);
          if (put <= 0) break;
          written[i] += double(put);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    share = (double(c1.tv_sec - c0.tv_sec) + double(c1.tv_nsec - c0.tv_nsec) / 1e9) /
            std::chrono::duration<double>(Clock::now() - t0).count();
    done = true;
  });
  std::vector<pollfd> polls;
  for (const int fd : readers) polls.push_back({fd, POLLIN, 0});
  char buf[65536];
  while (!done) {
    if (poll(polls.data(), polls.size(), 5) > 0)
      for (const pollfd& p : polls)
        if (p.revents & POLLIN) (void)!read(p.fd, buf, sizeof buf);
  }
  writer.join();
  for (const int fd : readers) close(fd);
  for (const int fd : writers) close(fd);
  return share;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: vehicle_data MAVSWITCHD [--rate N] [--seconds S] [--clients 0,1,20,20:ATTITUDE]\n");
    return 2;
  }
  const std::string daemon = argv[1];
  double rate = 400, seconds = 5;
  std::string cases = "off,0,1,20,20:ATTITUDE";
  int gcs = 0;
  bool footprint = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--footprint") {
      footprint = true, rate = 100, cases = "5", gcs = 2, seconds = 10;
      continue;
    }
    if (i + 1 >= argc) break;
    if (a == "--rate") rate = std::atof(argv[++i]);
    if (a == "--seconds") seconds = std::atof(argv[++i]);
    if (a == "--clients") cases = argv[++i];
    if (a == "--gcs") gcs = std::atoi(argv[++i]);
  }
  signal(SIGPIPE, SIG_IGN);
  const auto frames = telemetry_mix(1);
  double tree_share = 0;
  std::stringstream list(cases);
  for (std::string item; std::getline(list, item, ',');) {
    const bool off = item == "off";
    const size_t colon = item.find(':');
    const int n = off ? 0 : std::atoi(item.substr(0, colon).c_str());
    const std::string filter = colon == std::string::npos ? "" : item.substr(colon + 1);
    Router r(daemon, !off);
    std::vector<Client> clients;
    for (int i = 0; i < n; ++i)
      clients.push_back(open_client(r.http, filter.empty() ? "" : "?filter=^" + filter + "$"));
    const auto [share, received, bytes] = stream(r, clients, frames, rate, seconds, gcs);
    const long rss_end_kb = rss_kb(r.pid);
    if (item == "0") tree_share = share;
    const std::string label = off      ? "http off"
                              : n == 0 ? "tree alone"
                                       : std::to_string(n) + " ws" + (filter.empty() ? "" : " " + filter);
    std::printf(
        "case=%-14s rate=%.0f gcs=%d json_msg_s=%.0f router_cpu_pct=%.2f cpu_us_per_msg=%.2f vs_tree=%s "
        "rss_idle_kb=%ld rss_kb=%ld\n",
        label.c_str(), rate, gcs, received, share * 100, share * 1e6 / rate,
        tree_share > 0 ? std::to_string(share / tree_share).substr(0, 4).c_str() : "-", r.idle_rss_kb, rss_end_kb);
    for (Client& c : clients) close(c.fd);
    if (n > 0 && bytes > 0)
      std::printf(
          "case=%-14s bytes_s=%.0f kernel_floor_cpu_pct=%.2f (the same bytes written to %d sockets, nothing else)\n",
          (label + " floor").c_str(), bytes, fanout_floor(n, bytes / n, seconds) * 100, n);
  }
  if (footprint) return 0;
  // GET /v1/mavlink with 1,000 messages in the tree: the mix from enough systems.
  const size_t per_system = frames.size();
  const auto many = telemetry_mix(uint8_t(std::min<size_t>(250, (1000 + per_system - 1) / per_system)));
  Router r(daemon, true);
  std::vector<Client> none;
  (void)stream(r, none, many, double(many.size()) * 2, 1);
  std::vector<double> ms;
  size_t bytes = 0;
  for (int i = 0; i < 50; ++i) {
    const auto t0 = Clock::now();
    bytes = http_get(r.http, "/v1/mavlink").size();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("get_tree messages=%zu bytes=%zu p50_ms=%.2f p99_ms=%.2f\n", many.size(), bytes, ms[ms.size() / 2],
              ms[ms.size() * 99 / 100]);
  return 0;
}
