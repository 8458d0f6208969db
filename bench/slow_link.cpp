// Command round-trip time through a 57,600-baud radio link oversubscribed by telemetry.
//
// A vehicle (UDP) streams telemetry at FACTOR times what the radio carries; the ground station
// is a TCP client that reads no faster than the radio (5,760 bytes a second) and sends a
// COMMAND_LONG every 250 ms, which the vehicle answers at once with a COMMAND_ACK. Reported:
// the round trips' p50/p99/max, how many commands were answered before the run ended, and how
// old the telemetry was when it arrived. The router is started from a mavlink-router style
// configuration written here (a UDP server for the vehicle, the [General] TCP server for the
// radio), with `TcpServerMaxRate = 57600baud` added for mavswitch's scheduler.
//
//   slow_link --factor 10 --seconds 10 [--budget] -- mavswitchd -c {conf}
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.hpp"
#include "dialect/builtin.hpp"
#include "dialect/typed_message.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "protocol/parser.hpp"

using namespace mavswitch;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kRadioBytesPerMs = 5.76;

template <class M>
std::vector<uint8_t> frame(const M& m, uint8_t sys, uint8_t comp, uint8_t seq) {
  std::vector<uint8_t> b(protocol::kMaxFrameLen);
  b.resize(dialect::typed::encode_frame(m, {.seq = seq, .sysid = sys, .compid = comp}, b));
  return b;
}

int64_t ms_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

int64_t percentile(std::vector<int64_t> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * double(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  double factor = 10;
  int seconds = 10;
  bool budget = false;
  std::vector<std::string> command;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--factor" && i + 1 < argc) {
      factor = std::atof(argv[++i]);
    } else if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atoi(argv[++i]);
    } else if (a == "--budget") {
      budget = true;
    } else if (a == "--") {
      command.assign(argv + i + 1, argv + argc);
      break;
    }
  }
  if (command.empty()) {
    std::fprintf(stderr, "usage: slow_link [--factor F] [--seconds S] [--budget] -- ROUTER ARGS ({conf})\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  const uint16_t vehicle_port = bench::free_port(SOCK_DGRAM), radio_port = bench::free_port(SOCK_STREAM);
  char conf[] = "/tmp/slow_link_XXXXXX";
  const int conf_fd = mkstemp(conf);
  close(conf_fd);
  std::ofstream(conf) << "[General]\nTcpServerPort = " << radio_port << "\n"
                      << (budget ? "TcpServerMaxRate = 57600baud\n" : "") << "[UdpEndpoint vehicle]\nMode = Server\n"
                      << "Address = 127.0.0.1\nPort = " << vehicle_port << "\n";
  for (auto& a : command) {
    if (const auto at = a.find("{conf}"); at != std::string::npos) a.replace(at, 6, conf);
  }
  const pid_t router = bench::start_quietly(command);

  const int vehicle = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  sockaddr_in to = bench::loopback(vehicle_port), any = bench::loopback(0);
  bind(vehicle, reinterpret_cast<sockaddr*>(&any), sizeof any);
  int gcs = -1;
  for (int i = 0; i < 100 && gcs < 0; ++i) {  // the router is up when its TCP port accepts
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gcs = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in r = bench::loopback(radio_port);
    if (connect(gcs, reinterpret_cast<sockaddr*>(&r), sizeof r) != 0) close(gcs), gcs = -1;
  }
  if (gcs < 0) {
    std::fprintf(stderr, "the router did not start\n");
    kill(router, SIGTERM);
    return 1;
  }
  fcntl(gcs, F_SETFL, O_NONBLOCK);
  auto vehicle_send = [&](const std::vector<uint8_t>& f) {
    sendto(vehicle, f.data(), f.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  };
  uint8_t seq = 0;
  vehicle_send(frame(msg::Heartbeat{}, 1, 1, seq++));
  const auto hb = frame(msg::Heartbeat{}, 255, 190, 0);
  (void)!write(gcs, hb.data(), hb.size());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  protocol::FrameParser gcs_parser(dialect::builtin::message_table()),
      vehicle_parser(dialect::builtin::message_table());
  std::map<uint16_t, int64_t> asked;
  std::vector<int64_t> round_trips, ages;
  const auto t0 = Clock::now();
  double offered = 0;  // telemetry bytes due by now
  size_t sent = 0, read_bytes = 0;
  uint16_t next_command = 1;
  int64_t next_command_at = 0;
  while (ms_since(t0) < seconds * 1000) {
    const int64_t now = ms_since(t0);
    offered = factor * kRadioBytesPerMs * double(now);
    for (uint8_t comp = 1; double(sent) < offered; comp = comp % 8 + 1) {
      msg::Attitude a;
      a.time_boot_ms = static_cast<uint32_t>(now);
      const auto f = frame(a, 1, comp, seq++);
      vehicle_send(f);
      sent += f.size();
    }
    if (now >= next_command_at) {
      msg::CommandLong c;
      c.target_system = 1;
      c.target_component = 1;
      c.command = next_command;
      const auto f = frame(c, 255, 190, uint8_t(next_command));
      (void)!write(gcs, f.data(), f.size());
      asked[next_command++] = now;
      next_command_at += 250;
    }
    uint8_t buf[4096];
    for (ssize_t n; (n = recv(vehicle, buf, sizeof buf, 0)) > 0;) {
      vehicle_parser.feed({buf, size_t(n)}, [&](const protocol::FrameView& f) {
        if (f.msgid() != msg::CommandLong::kId) return;
        msg::CommandAck ack;
        ack.command = msg::CommandLong::decode(f.payload()).command;
        ack.target_system = 255;
        ack.target_component = 190;
        vehicle_send(frame(ack, 1, 1, seq++));
      });
    }
    const auto allowed = static_cast<size_t>(kRadioBytesPerMs * double(now));
    while (read_bytes < allowed) {
      const ssize_t n = read(gcs, buf, std::min(sizeof buf, allowed - read_bytes));
      if (n <= 0) break;
      read_bytes += size_t(n);
      gcs_parser.feed({buf, size_t(n)}, [&](const protocol::FrameView& f) {
        if (f.msgid() == msg::CommandAck::kId) {
          const auto it = asked.find(msg::CommandAck::decode(f.payload()).command);
          if (it != asked.end()) round_trips.push_back(ms_since(t0) - it->second);
        } else if (f.msgid() == msg::Attitude::kId) {
          ages.push_back(ms_since(t0) - int64_t(msg::Attitude::decode(f.payload()).time_boot_ms));
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(router, SIGTERM);
  waitpid(router, nullptr, 0);
  std::remove(conf);
  std::printf(
      "factor=%.0f budget=%d commands=%zu answered=%zu rtt_ms_p50=%lld rtt_ms_p99=%lld rtt_ms_max=%lld "
      "telemetry_age_ms_p50=%lld telemetry_age_ms_p99=%lld\n",
      factor, budget ? 1 : 0, asked.size(), round_trips.size(), static_cast<long long>(percentile(round_trips, 0.5)),
      static_cast<long long>(percentile(round_trips, 0.99)), static_cast<long long>(percentile(round_trips, 1.0)),
      static_cast<long long>(percentile(ages, 0.5)), static_cast<long long>(percentile(ages, 0.99)));
  return 0;
}
