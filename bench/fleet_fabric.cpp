// fleet_fabric: a fleet whose vehicles all say "system 1", through ground routers that each take
// some of them by name over the NATS fabric (Vehicles = boat-0:1, ...), against the same ground
// routers fed the same vehicles over plain UDP (each as a system of its own, as a fleet without
// names would have to be).
//   fleet_fabric MAVSWITCHD --mode nats|udp [--nats URL,URL,URL] [--vehicles 1000] [--rate 50000]
//                [--routers 3] [--take 50] [--seconds 3] [--settle 2] [--servers PID,PID,PID]
// NATS: the generator stands in for the vehicles' own routers (Vehicle = boat-N): it publishes
// what each would, byte for byte, on the same subjects with a router's reply subject: every
// vehicle's HEARTBEAT once a second and ATTITUDE frames at RATE msg/s in all, from 1/1. Router r
// connects to node r of --nats and takes TAKE vehicles (boat-r*TAKE ... : ids 1..TAKE). UDP: the
// taken vehicles only (nobody would carry the rest), sent to each router's UDP port as systems
// 1..TAKE, at the same rate each. Each router's ground station (a UDP client of it) receives;
// the generator reports delivered msg/s, loss and duplicates over the taken vehicles' frames,
// end-to-end latency, and each router's CPU per message it delivered (from /proc).
#include <fcntl.h>
#include <nats/nats.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.hpp"
#include "dialect/builtin.hpp"
#include "protocol/encoder.hpp"
#include "protocol/parser.hpp"

using namespace mavswitch;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string mavswitchd, mode = "nats";
  std::vector<std::string> nats;
  std::vector<int> servers;
  int vehicles = 1000, routers = 3, take = 50;
  double rate = 50000, seconds = 3, settle = 2;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

size_t encode(uint32_t msgid, uint8_t sysid, uint8_t compid, uint8_t seq, uint32_t first_word, uint8_t* out) {
  const auto* info = dialect::builtin::message_table().find(msgid);
  uint8_t payload[64];
  std::memset(payload, 0x5A, sizeof payload);
  std::memcpy(payload, &first_word, 4);
  if (msgid == 0) payload[4] = 2, payload[5] = 3;  // HEARTBEAT: a quadrotor, ArduPilot
  return protocol::encode_v2({.seq = seq, .sysid = sysid, .compid = compid, .msgid = msgid}, {payload, info->max_len},
                             info->crc_extra, {out, protocol::kMaxFrameLen});
}

constexpr uint32_t kAttitude = 30;

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (argc < 2) {
    std::fprintf(stderr, "usage: fleet_fabric MAVSWITCHD --mode nats|udp [--nats URL,...] [...]\n");
    return 2;
  }
  o.mavswitchd = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--mode")
      o.mode = v;
    else if (a == "--nats")
      o.nats = split(v);
    else if (a == "--servers")
      for (const auto& p : split(v)) o.servers.push_back(std::stoi(p));
    else if (a == "--vehicles")
      o.vehicles = std::stoi(v);
    else if (a == "--rate")
      o.rate = std::stod(v);
    else if (a == "--routers")
      o.routers = std::stoi(v);
    else if (a == "--take")
      o.take = std::stoi(v);
    else if (a == "--seconds")
      o.seconds = std::stod(v);
    else if (a == "--settle")
      o.settle = std::stod(v);
  }
  const bool nats = o.mode == "nats";
  if (nats && o.nats.empty()) {
    std::fprintf(stderr, "--mode nats needs --nats\n");
    return 2;
  }
  const int taken = o.routers * o.take;
  const int senders = nats ? o.vehicles : taken;  // UDP: only the taken vehicles are sent
  const double per_vehicle = o.rate / o.vehicles;
  const double rate = per_vehicle * senders;

  // The ground routers, each with its ground station's UDP port (and the fabric).
  const auto dir = std::filesystem::temp_directory_path() / ("fleet_fabric." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<uint16_t> ports;
  std::vector<pid_t> pids;
  for (int r = 0; r < o.routers; ++r) {
    ports.push_back(bench::free_port(SOCK_DGRAM));
    std::string conf =
        "[General]\nTcpServerPort = 0\n[UdpEndpoint ground]\nMode = Server\nAddress = 127.0.0.1\nPort = " +
        std::to_string(ports.back()) + "\n";
    if (nats) {
      conf += "[NatsEndpoint fabric]\nUrl = " + o.nats[size_t(r) % o.nats.size()] + "\nVehicles = ";
      for (int k = 0; k < o.take; ++k)
        conf += (k ? ", boat-" : "boat-") + std::to_string(r * o.take + k) + ":" + std::to_string(k + 1);
      conf += "\n";
    }
    const auto path = dir / ("ground" + std::to_string(r) + ".conf");
    std::ofstream(path) << conf;
    pids.push_back(bench::start_quietly({o.mavswitchd, "-c", path.string(), "--http=0"}));
  }

  // Ground stations: one UDP socket each, known to its router by its heartbeats.
  std::vector<int> gcs;
  for (int r = 0; r < o.routers; ++r) {
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    int size = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    const sockaddr_in any = bench::loopback(0);
    bind(fd, reinterpret_cast<const sockaddr*>(&any), sizeof any);
    gcs.push_back(fd);
  }
  uint8_t frame[protocol::kMaxFrameLen];
  auto gcs_hello = [&] {
    for (int r = 0; r < o.routers; ++r) {
      const size_t n = encode(0, 255, 190, 0, 0, frame);
      const sockaddr_in to = bench::loopback(ports[size_t(r)]);
      sendto(gcs[size_t(r)], frame, n, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    }
  };

  // The vehicles' side: NATS connections (one per node) or a UDP socket per router.
  std::vector<natsConnection*> connections;
  std::vector<std::string> origin, attitude_subject, heartbeat_subject;
  std::vector<int> vehicle_fd;
  if (nats) {
    std::mt19937_64 random(std::random_device{}());
    for (const auto& url : o.nats) {
      natsConnection* c = nullptr;
      for (int tries = 0; tries < 50 && natsConnection_ConnectTo(&c, url.c_str()) != NATS_OK; ++tries)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (c == nullptr) {
        std::fprintf(stderr, "cannot connect to %s\n", url.c_str());
        return 1;
      }
      connections.push_back(c);
      char id[32];
      std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(random()));
      origin.push_back(std::string("mavlink.origin.") + id);
    }
    for (int v = 0; v < o.vehicles; ++v) {
      attitude_subject.push_back("mavlink.boat-" + std::to_string(v) + ".from.1.1.ATTITUDE");
      heartbeat_subject.push_back("mavlink.boat-" + std::to_string(v) + ".from.1.1.HEARTBEAT");
    }
  } else {
    for (int r = 0; r < o.routers; ++r) vehicle_fd.push_back(socket(AF_INET, SOCK_DGRAM, 0));
  }
  // Vehicle v: in NATS every vehicle is 1/1 (its name tells it apart); over UDP, taken vehicle v
  // is system v % TAKE + 1 of router v / TAKE.
  auto send = [&](int v, uint32_t msgid, uint32_t word, uint8_t seq) {
    const size_t n = encode(msgid, nats ? 1 : uint8_t(v % o.take + 1), 1, seq, word, frame);
    if (nats) {
      const size_t c = size_t(v) % connections.size();
      natsConnection_PublishRequest(connections[c],
                                    (msgid == 0 ? heartbeat_subject : attitude_subject)[size_t(v)].c_str(),
                                    origin[c].c_str(), frame, static_cast<int>(n));
    } else {
      const sockaddr_in to = bench::loopback(ports[size_t(v / o.take)]);
      sendto(vehicle_fd[size_t(v / o.take)], frame, n, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    }
  };

  // When each taken vehicle's frames were sent (by index), and which arrived.
  const double total = o.settle + o.seconds;
  const auto capacity = static_cast<size_t>(per_vehicle * total * 1.2 + 100);
  // Written here, read by the receiver: atomics (relaxed: a frame is sent before it can arrive).
  std::vector<std::unique_ptr<std::atomic<int64_t>[]>> sent_at;
  for (int v = 0; v < taken; ++v) sent_at.push_back(std::make_unique<std::atomic<int64_t>[]>(capacity));
  std::vector<std::vector<uint8_t>> seen(size_t(taken), std::vector<uint8_t>(capacity, 0));
  std::vector<uint64_t> delivered_by(size_t(o.routers), 0);
  std::vector<double> latencies;
  latencies.reserve(static_cast<size_t>(per_vehicle * taken * o.seconds * 1.2));
  uint64_t duplicates = 0;
  std::atomic<int64_t> measure_from{INT64_MAX}, measure_to{INT64_MAX};
  std::atomic<bool> receiving{true};

  std::thread receiver([&] {
    std::vector<pollfd> fds;
    for (int fd : gcs) fds.push_back({fd, POLLIN, 0});
    std::deque<protocol::FrameParser> parsers;  // one per ground station
    for (size_t r = 0; r < gcs.size(); ++r) parsers.emplace_back(dialect::builtin::message_table());
    uint8_t buffer[65536];
    while (receiving.load()) {
      if (poll(fds.data(), fds.size(), 50) <= 0) continue;
      for (size_t r = 0; r < fds.size(); ++r) {
        for (;;) {
          const ssize_t n = recv(gcs[r], buffer, sizeof buffer, 0);
          if (n <= 0) break;
          const int64_t at = now_ns();
          parsers[r].feed({buffer, size_t(n)}, [&](const protocol::FrameView& f) {
            if (f.msgid() != kAttitude || f.sysid() < 1 || f.sysid() > o.take) return;
            const size_t v = r * size_t(o.take) + f.sysid() - 1;
            uint32_t index = 0;
            std::memcpy(&index, f.payload().data(), 4);
            if (index >= capacity) return;
            const int64_t sent = sent_at[v][index].load(std::memory_order_relaxed);
            if (sent < measure_from.load() || sent > measure_to.load()) return;
            if (seen[v][index]++) {
              ++duplicates;
              return;
            }
            ++delivered_by[r];
            latencies.push_back(double(at - sent) / 1000.0);
          });
          parsers[r].flush([](const protocol::FrameView&) {});
        }
      }
    }
  });

  // Send at the rate; heartbeats of every vehicle once a second; the ground stations' too.
  const int64_t start = now_ns();
  const int64_t end = start + static_cast<int64_t>(total * 1e9);
  std::vector<uint32_t> next(size_t(senders), 0);
  uint64_t sent = 0, offered_in_window = 0;
  int64_t next_second = start;
  size_t cursor = 0;
  std::vector<double> cpu_before(pids.size()), servers_before(o.servers.size());
  bool measuring = false;
  for (int64_t now = start; now < end; now = now_ns()) {
    if (!measuring && now >= start + static_cast<int64_t>(o.settle * 1e9)) {
      measuring = true;
      for (size_t i = 0; i < pids.size(); ++i) cpu_before[i] = bench::cpu_seconds(pids[i]);
      for (size_t i = 0; i < o.servers.size(); ++i) servers_before[i] = bench::cpu_seconds(o.servers[i]);
      measure_from = now;
    }
    if (now >= next_second) {
      gcs_hello();
      for (int v = 0; v < senders; ++v) send(v, 0, 0, 0);
      next_second += 1'000'000'000;
    }
    const auto due = static_cast<uint64_t>(rate * double(now - start) / 1e9);
    for (; sent < due; ++sent) {
      const size_t s = cursor++ % size_t(senders);
      const uint32_t index = next[s]++;
      if (int(s) < taken && index < capacity) sent_at[s][index].store(now_ns(), std::memory_order_relaxed);
      if (measuring && int(s) < taken) ++offered_in_window;
      send(int(s), kAttitude, index, uint8_t(index));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  measure_to = now_ns();
  std::vector<double> cpu(pids.size()), servers_cpu(o.servers.size());
  for (size_t i = 0; i < pids.size(); ++i) cpu[i] = bench::cpu_seconds(pids[i]) - cpu_before[i];
  double servers = 0;
  for (size_t i = 0; i < o.servers.size(); ++i) servers += bench::cpu_seconds(o.servers[i]) - servers_before[i];
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the last frames' way
  receiving = false;
  receiver.join();

  uint64_t delivered = 0;
  for (auto d : delivered_by) delivered += d;
  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double p) { return latencies.empty() ? 0.0 : latencies[size_t(p * double(latencies.size() - 1))]; };
  const double window = double(measure_to - measure_from) / 1e9;
  std::printf(
      "mode=%s vehicles=%d taken=%d offered_msg_s=%.0f delivered_msg_s=%.0f loss_pct=%.3f duplicates=%lu "
      "latency_us_p50=%.1f p99=%.1f router_cpu_us_per_delivered=",
      o.mode.c_str(), o.vehicles, taken, rate, double(delivered) / window,
      offered_in_window ? 100.0 * (1.0 - double(delivered) / double(offered_in_window)) : 0.0,
      static_cast<unsigned long>(duplicates), pct(0.5), pct(0.99));
  for (size_t r = 0; r < pids.size(); ++r)
    std::printf("%s%.2f", r ? "," : "", delivered_by[r] ? cpu[r] * 1e6 / double(delivered_by[r]) : 0.0);
  std::printf(" nats_servers_cpu_s=%.2f\n", servers);

  for (auto* c : connections) natsConnection_Destroy(c);
  for (pid_t p : pids) kill(p, SIGTERM);
  for (pid_t p : pids) waitpid(p, nullptr, 0);
  std::filesystem::remove_all(dir);
  return 0;
}
