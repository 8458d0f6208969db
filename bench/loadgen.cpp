// loadgen: vehicles and ground stations as separate sockets around a router under test.
// Vehicles send the telemetry mix (per 16 frames: ATTITUDE 8, GLOBAL_POSITION_INT 4, VFR_HUD 2,
// SYS_STATUS 1, HEARTBEAT 1; MAVLink 2), paced in bursts of up to 32 frames per millisecond
// or flooded; ground stations receive. Reports offered and delivered msg/s, loss, duplicates,
// reordering, one-way latency, per vehicle->GCS balance, and the router's CPU time per
// delivered message (from the scheduler's per-thread run time, /proc/PID/task/*/schedstat), and
// its context switches per second (sleeps_s: voluntary; preemptions_s: involuntary).
//
//   loadgen --transport udp|tcp --vehicles N --gcs M --rate MSGS_PER_S|flood --seconds S
//           [--vehicle-to-vehicle] [--slow-gcs K] [--kernel-send-times] [--backlog N]
//           [--settle S] [--ports-from P] -- ROUTER COMMAND with {udp}, {tcp}, {gcs_endpoints}
//
// --ports-from P (UDP): the router's port P, the ground stations' and vehicles' from P + 1 on, so
// that routers sharing a port among threads by the kernel's hash see the same placement.
// --settle S: seconds between the introductions and the measurement (default 0.3), for a
// router that arranges itself once it knows its peers (mavswitch's workers gather a quiet
// router's peers within about a second): the measurement then sees its steady state.
//
// --slow-gcs K: the first K ground stations connect, introduce themselves and then never read
// (a GCS that hung): loss, latency and balance are reported for the others, which must not
// suffer for it.
//
// --backlog N (UDP): how fast the router drains a backlog with the machine to itself, for measuring
// its throughput with 1 and more workers where a load generator running alongside would take
// a core of the two. The router is stopped (SIGSTOP), the vehicles send N frames in all into its
// sockets, the router is continued (SIGCONT) and this program waits, idle, until the router's
// CPU time stops growing; only then do the ground stations read what they were sent. Rates are
// over the drain: from SIGCONT to the kernel's receive timestamp of the last delivery
// (drain_ms). N must fit the router's socket buffers (a loss says it did not); latency here is
// time spent in the backlog, not the router's.
//
// Latency runs from a frame's send time to the kernel's receive timestamp at the ground
// station's socket. The send time is taken just before the send call that carries the frame,
// or with --kernel-send-times (UDP) when its datagram left the vehicle's socket (see below).
//
// {udp}: the router's UDP port vehicles (and, over UDP, nothing else) send to; {tcp}: its TCP
// server port (vehicles and GCS connect as clients); {gcs_endpoints}: "-e 127.0.0.1:P" per GCS.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
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

// One MAVLink network has 254 system ids: past kSystems vehicles, a vehicle is a (system,
// component) pair of its own. Vehicle 1 is system 1 component 1, vehicle 251 system 1 component 2.
constexpr int kSystems = 250;
uint8_t sysid_of(int v) { return static_cast<uint8_t>(v % kSystems + 1); }
uint8_t compid_of(int v) { return static_cast<uint8_t>(v / kSystems + 1); }
int vehicle_of(uint8_t sysid, uint8_t compid) { return (compid - 1) * kSystems + sysid - 1; }

struct Options {
  bool tcp = false;
  int vehicles = 1, gcs = 1;
  double rate = 20000;  // total offered msg/s; 0: flood
  double seconds = 3;
  bool vehicle_to_vehicle = false;
  int slow_gcs = 0;
  bool kernel_send_times = false;
  size_t backlog = 0;       // --backlog N: the drain measurement (see below); 0: paced or flood
  double settle = 0.3;      // --settle S
  uint16_t ports_from = 0;  // --ports-from P (0: ports the kernel picks)
  std::vector<std::string> command;
};

// Send and arrival times: CLOCK_REALTIME, because that is the clock of the kernel's receive
// timestamps (SO_TIMESTAMPNS), which time a frame's arrival at the ground station's socket
// rather than the moment this program got round to reading it: the latency figures are the
// router's, not this generator's own scheduling on a shared machine.
uint64_t wall_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// The kernel's arrival time of what recvmsg returned (for TCP, of the newest segment in it), or
// now when the kernel gave none.
uint64_t arrival_ns(const msghdr& m) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(const_cast<msghdr*>(&m), c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts;
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
    }
  }
  return wall_ns();
}

// --kernel-send-times (UDP): a frame's send time is the kernel's too, the moment its datagram
// left the vehicle's socket (a software transmit timestamp, SO_TIMESTAMPING, read back from the
// socket's error queue), so a frame that waited behind the others of its sendmmsg call, or
// behind this generator being descheduled, does not count that wait against the router. With
// the receive timestamp that leaves the time from the router's socket to the ground station's:
// the router's wake-up, work and send. Each timestamp carries the datagram's number on its
// socket (OPT_ID), counted from when the option is set. Not the default: stamping slows the
// generator's sends (a burst reaches the router spread over more time, so a router wakes more
// often per burst and its CPU per message rises), so CPU figures come from runs without it.
void stamp_transmits(int fd) {
  const unsigned flags =
      SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
  if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) < 0) std::perror("loadgen: SO_TIMESTAMPING");
}

// Reads the transmit timestamps queued on fd: on_stamp(datagram number, ns) for each.
template <class OnStamp>
void drain_transmit_stamps(int fd, OnStamp on_stamp) {
  constexpr unsigned kBatch = 64;
  alignas(cmsghdr) static thread_local uint8_t controls[kBatch][256];
  mmsghdr msgs[kBatch];
  for (;;) {
    for (unsigned k = 0; k < kBatch; ++k) {
      msgs[k] = {};
      msgs[k].msg_hdr.msg_control = controls[k];
      msgs[k].msg_hdr.msg_controllen = sizeof controls[k];
    }
    const int got = recvmmsg(fd, msgs, kBatch, MSG_ERRQUEUE | MSG_DONTWAIT, nullptr);
    if (got <= 0) return;
    for (int k = 0; k < got; ++k) {
      msghdr& m = msgs[k].msg_hdr;
      uint64_t ns = 0;
      const sock_extended_err* err = nullptr;
      for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING) {
          scm_timestamping ts;
          std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
          ns = static_cast<uint64_t>(ts.ts[0].tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.ts[0].tv_nsec);
        } else if (c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) {
          err = reinterpret_cast<const sock_extended_err*>(CMSG_DATA(c));
        }
      }
      if (ns != 0 && err != nullptr && err->ee_origin == SO_EE_ORIGIN_TIMESTAMPING && err->ee_info == SCM_TSTAMP_SND) {
        on_stamp(err->ee_data, ns);
      }
    }
    if (static_cast<unsigned>(got) < kBatch) return;
  }
}

using bench::free_port;
using bench::loopback;

void big_buffers(int fd) {
  const int size = 8 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) < 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
}

// The mix, one 16-frame cycle of message ids.
constexpr uint32_t kMix[16] = {30, 33, 30, 74, 30, 33, 30, 1, 30, 33, 30, 74, 30, 33, 30, 0};

// Frame `index` of vehicle v: the index sits in payload bytes 0..3 of every message of the mix
// (ATTITUDE and GLOBAL_POSITION_INT time_boot_ms, VFR_HUD airspeed's bits, SYS_STATUS's sensor
// bitmap, HEARTBEAT custom_mode), the rest is non-zero filler.
size_t make_frame(int v, uint32_t index, uint8_t* out) {
  const uint32_t msgid = kMix[index % 16];
  const auto* info = dialect::builtin::message_table().find(msgid);
  uint8_t payload[64];
  std::memset(payload, 0x5A, sizeof payload);
  std::memcpy(payload, &index, 4);
  return protocol::encode_v2(
      {.seq = static_cast<uint8_t>(index), .sysid = sysid_of(v), .compid = compid_of(v), .msgid = msgid},
      {payload, info->max_len}, info->crc_extra, {out, protocol::kMaxFrameLen});
}

struct Receiver {
  int fd;
  int gcs;  // -1 for a vehicle socket
  protocol::FrameParser parser{dialect::builtin::message_table()};
};

// Per (receiver, vehicle): what arrived.
struct Flow {
  uint64_t received = 0, duplicates = 0, reordered = 0;
  uint32_t highest = 0;
  bool any = false;
  std::vector<uint8_t> seen;  // bitmap by index
};

// Calls read(in) with /proc/PID/task/TID/<file> open, for each of the router's threads.
template <class Read>
void for_each_thread(pid_t pid, const char* file, Read read) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(task.path() / file);
    read(in);
  }
}

// The router's CPU time in nanoseconds: the sum over its threads of the scheduler's run time
// (schedstat), exact where /proc/PID/stat counts 10 ms ticks.
uint64_t cpu_ns(pid_t pid) {
  uint64_t total = 0;
  for_each_thread(pid, "schedstat", [&](std::ifstream& in) {
    uint64_t run_ns = 0;
    if (in >> run_ns) total += run_ns;
  });
  return total;
}

// Each of the router's threads' run time in nanoseconds, by thread id: how the work divided.
std::map<std::string, uint64_t> thread_cpu_ns(pid_t pid) {
  std::map<std::string, uint64_t> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(task.path() / "schedstat");
    uint64_t run_ns = 0;
    if (in >> run_ns) out[task.path().filename().string()] = run_ns;
  }
  return out;
}

// The whole machine's busy and idle time so far (/proc/stat, in clock ticks).
struct MachineTime {
  uint64_t busy = 0, idle = 0;
};
MachineTime machine_time() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return {user + nice + system + irq + softirq + steal, idle + iowait};
}

// The router's context switches, summed over its threads (status): the voluntary ones (it went
// to sleep: about one per burst) and the involuntary ones (the scheduler took the CPU from it
// while it ran). On a machine the load generator shares, every microsecond a router runs per
// wake-up adds to its chance of being preempted, and each preemption costs it two more context
// switches: this shows how much of its CPU time that is.
struct Switches {
  uint64_t voluntary = 0, involuntary = 0;
};
Switches context_switches(pid_t pid) {
  Switches total;
  for_each_thread(pid, "status", [&](std::ifstream& in) {
    std::string key;
    uint64_t value = 0;
    while (in >> key) {
      if (key == "voluntary_ctxt_switches:" && in >> value) total.voluntary += value;
      if (key == "nonvoluntary_ctxt_switches:" && in >> value) total.involuntary += value;
    }
  });
  return total;
}

pid_t start_router(std::vector<std::string> cmd, uint16_t udp, uint16_t tcp, const std::vector<uint16_t>& gcs_ports) {
  std::vector<std::string> argv;
  for (auto& a : cmd) {
    if (a == "{gcs_endpoints}") {
      for (uint16_t p : gcs_ports) {
        argv.push_back("-e");
        argv.push_back("127.0.0.1:" + std::to_string(p));
      }
      continue;
    }
    for (auto [key, value] : {std::pair{"{udp}", udp}, std::pair{"{tcp}", tcp}}) {
      for (size_t pos; (pos = a.find(key)) != std::string::npos;)
        a.replace(pos, std::strlen(key), std::to_string(value));
    }
    argv.push_back(a);
  }
  return bench::start_quietly(argv);
}

int tcp_connect(uint16_t port) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(port);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      big_buffers(fd);
      return fd;
    }
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    const std::string v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--transport")
      o.tcp = v == "tcp", ++i;
    else if (a == "--vehicles")
      o.vehicles = std::stoi(v), ++i;
    else if (a == "--gcs")
      o.gcs = std::stoi(v), ++i;
    else if (a == "--rate")
      o.rate = v == "flood" ? 0 : std::stod(v), ++i;
    else if (a == "--seconds")
      o.seconds = std::stod(v), ++i;
    else if (a == "--vehicle-to-vehicle")
      o.vehicle_to_vehicle = true;
    else if (a == "--slow-gcs")
      o.slow_gcs = std::stoi(v), ++i;
    else if (a == "--kernel-send-times")
      o.kernel_send_times = true;
    else if (a == "--backlog")
      o.backlog = std::stoul(v), ++i;
    else if (a == "--settle")
      o.settle = std::stod(v), ++i;
    else if (a == "--ports-from")
      o.ports_from = static_cast<uint16_t>(std::stoul(v)), ++i;
    else
      return std::fprintf(stderr, "unknown option %s\n", a.c_str()), 2;
  }
  for (++i; i < argc; ++i) o.command.push_back(argv[i]);
  if (o.command.empty()) return std::fprintf(stderr, "usage: loadgen [options] -- ROUTER COMMAND\n"), 2;
  // Over TCP the vehicles' writes would block on a stopped router once its buffers fill.
  if (o.backlog > 0 && o.tcp) return std::fprintf(stderr, "loadgen: --backlog is for UDP\n"), 2;

  // Sockets.
  // --ports-from P: the router's UDP port P, the ground stations' and the vehicles' from P + 1 on.
  // The kernel's hash places a UDP sender on one of several sockets sharing a port by these
  // addresses: routers run with the same P see the same placement, so they compare fairly.
  const uint16_t udp_port = o.ports_from ? o.ports_from : free_port(SOCK_DGRAM), tcp_port = free_port(SOCK_STREAM);
  uint16_t next_port = o.ports_from ? static_cast<uint16_t>(o.ports_from + 1) : 0;
  auto bind_next = [&](int fd) {
    sockaddr_in a = loopback(next_port);
    if (next_port != 0) ++next_port;
    return bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  };
  std::vector<int> vehicle_fd(static_cast<size_t>(o.vehicles)), gcs_fd(static_cast<size_t>(o.gcs));
  std::vector<uint16_t> gcs_ports;
  if (!o.tcp) {
    for (auto& fd : gcs_fd) {
      fd = socket(AF_INET, SOCK_DGRAM, 0);
      big_buffers(fd);
      if (!bind_next(fd)) return std::fprintf(stderr, "loadgen: cannot bind a ground station's port\n"), 1;
      sockaddr_in a{};
      socklen_t len = sizeof a;
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
      gcs_ports.push_back(ntohs(a.sin_port));
    }
  }
  const pid_t router = start_router(o.command, udp_port, tcp_port, gcs_ports);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (o.tcp) {
    for (auto& fd : gcs_fd) fd = tcp_connect(tcp_port);
    for (auto& fd : vehicle_fd) fd = tcp_connect(tcp_port);
  } else {
    for (auto& fd : vehicle_fd) {
      fd = socket(AF_INET, SOCK_DGRAM, 0);
      big_buffers(fd);
      if (next_port != 0 && !bind_next(fd)) return std::fprintf(stderr, "loadgen: cannot bind a vehicle's port\n"), 1;
      sockaddr_in to = loopback(udp_port);
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);
    }
  }
  for (int fd : vehicle_fd) {
    if (fd < 0) return std::fprintf(stderr, "loadgen: cannot reach the router\n"), 1;
  }
  for (int fd : gcs_fd) {
    if (fd < 0) return std::fprintf(stderr, "loadgen: cannot reach the router\n"), 1;
  }

  // Everyone introduces themselves with a HEARTBEAT before the measurement (a router learns peers
  // from traffic): TCP ground stations, and vehicles, so that with --vehicle-to-vehicle each
  // vehicle is known before the others' first frames. UDP ground stations are the router's
  // client endpoints and need no introduction.
  uint8_t hello[protocol::kMaxFrameLen];
  auto introduce = [&](int fd, uint8_t sysid, uint8_t compid) {
    const uint8_t payload[9] = {0, 0, 0, 0, 6, 8, 0, 0, 3};
    const size_t n = protocol::encode_v2({.sysid = sysid, .compid = compid}, payload, 50, hello);
    [[maybe_unused]] auto w = write(fd, hello, n);
  };
  for (int g = 0; o.tcp && g < o.gcs; ++g)
    introduce(gcs_fd[static_cast<size_t>(g)], static_cast<uint8_t>(200 + g), 190);
  for (int v = 0; v < o.vehicles; ++v) introduce(vehicle_fd[static_cast<size_t>(v)], sysid_of(v), compid_of(v));
  std::this_thread::sleep_for(std::chrono::duration<double>(o.settle));
  const bool kernel_send_times = o.kernel_send_times && !o.tcp;
  if (kernel_send_times) {
    for (int fd : vehicle_fd) stamp_transmits(fd);  // after the introductions: numbering starts here
  }

  const double total_rate = o.rate;
  // Index space per vehicle, with headroom over the nominal count (pacing rounds per tick).
  const auto per_vehicle_frames =
      static_cast<uint32_t>(o.backlog > 0    ? static_cast<double>(o.backlog) / o.vehicles + 1000
                            : total_rate > 0 ? total_rate * o.seconds / o.vehicles * 1.1 + 1000
                                             : 50'000'000);
  // Written by the sender thread only; read after it has finished.
  std::vector<std::vector<uint64_t>> sent_at(static_cast<size_t>(o.vehicles),
                                             std::vector<uint64_t>(per_vehicle_frames + 1, 0));
  // UDP: the frame index of each datagram a vehicle's socket sent, by the datagram's number.
  std::vector<std::vector<uint32_t>> datagram_index(static_cast<size_t>(o.vehicles));
  if (kernel_send_times && total_rate > 0) {
    for (auto& d : datagram_index) d.reserve(per_vehicle_frames);
  }
  uint64_t kernel_stamped = 0;  // frames whose send time is the kernel's transmit timestamp

  // Receivers: GCS sockets, and vehicles when they should hear each other.
  std::vector<Receiver> receivers;
  for (int g = o.slow_gcs; g < o.gcs; ++g) receivers.push_back({gcs_fd[static_cast<size_t>(g)], g});
  if (o.vehicle_to_vehicle) {
    for (int v = 0; v < o.vehicles; ++v) receivers.push_back({vehicle_fd[static_cast<size_t>(v)], -1 - v});
  }
  // Receive timestamps from before the first frame: the kernel stamps a datagram on arrival only
  // while some socket asks for it, and one that arrived unstamped is stamped when it is read
  // (with --backlog, long after the router delivered it).
  const int on = 1;
  for (const Receiver& r : receivers) setsockopt(r.fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
  const size_t flows_per = static_cast<size_t>(o.vehicles);
  std::vector<Flow> flows(receivers.size() * flows_per);
  for (auto& f : flows) f.seen.assign(per_vehicle_frames / 8 + 1, 0);
  // Arrivals, matched with their send times once the sender is done (a transmit timestamp may be
  // read after the frame it times has arrived).
  struct Arrival {
    uint32_t vehicle, index;
    uint64_t ns;
  };
  std::vector<Arrival> arrivals;
  arrivals.reserve(1 << 22);
  std::atomic<bool> sending{true};
  uint64_t continued_ns = 0;                  // --backlog: when the router was continued
  MachineTime machine_before, machine_after;  // --backlog: around the drain (to 10 ms)
  std::atomic<uint64_t> offered{0};

  const uint64_t cpu_before = cpu_ns(router);
  const auto threads_before = thread_cpu_ns(router);
  const Switches switches_before = context_switches(router);
  const auto t0 = Clock::now();
  std::thread sender([&] {
    uint8_t frames[32][protocol::kMaxFrameLen];
    size_t lens[32];
    std::vector<uint32_t> next(static_cast<size_t>(o.vehicles), 1);
    const auto vehicles = static_cast<size_t>(o.vehicles);
    // Sends `count` frames from vehicle v in bursts of at most 32 (one sendmmsg or write each).
    auto send_from = [&](size_t v, size_t count) {
      while (count > 0) {
        size_t k = 0;
        auto& nv = next[v];
        for (; k < std::min<size_t>(count, 32) && nv <= per_vehicle_frames; ++k, ++nv) {
          lens[k] = make_frame(static_cast<int>(v), nv, frames[k]);
          sent_at[v][nv] = wall_ns();
        }
        if (k == 0) return;  // this vehicle's index space is used up
        count -= k;
        const int fd = vehicle_fd[v];
        if (o.tcp) {
          uint8_t joined[32 * protocol::kMaxFrameLen];
          size_t total = 0;
          for (size_t j = 0; j < k; ++j) std::memcpy(joined + total, frames[j], lens[j]), total += lens[j];
          for (size_t off = 0; off < total;) {
            const ssize_t w = write(fd, joined + off, total - off);
            if (w <= 0) break;
            off += static_cast<size_t>(w);
          }
        } else {
          mmsghdr msgs[32];
          iovec iov[32];
          for (size_t j = 0; j < k; ++j) {
            iov[j] = {frames[j], lens[j]};
            msgs[j] = {};
            msgs[j].msg_hdr.msg_iov = &iov[j];
            msgs[j].msg_hdr.msg_iovlen = 1;
          }
          const int sent = sendmmsg(fd, msgs, static_cast<unsigned>(k), 0);
          for (int j = 0; kernel_send_times && j < sent; ++j)
            datagram_index[v].push_back(nv - static_cast<uint32_t>(k) + static_cast<uint32_t>(j));
        }
        offered += k;
      }
    };
    auto read_transmit_stamps = [&] {
      if (!kernel_send_times) return;
      for (size_t v = 0; v < vehicles; ++v) {
        drain_transmit_stamps(vehicle_fd[v], [&](uint32_t number, uint64_t ns) {
          if (number >= datagram_index[v].size()) return;
          sent_at[v][datagram_index[v][number]] = ns;
          ++kernel_stamped;
        });
      }
    };
    const double per_ms = total_rate / 1000.0;
    double budget = 0;
    size_t cursor = 0;  // who gets the remainder this tick: rotates, so every vehicle is even
    if (o.backlog > 0) {
      kill(router, SIGSTOP);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      for (size_t v = 0; v < vehicles; ++v) send_from(v, o.backlog / vehicles + (v < o.backlog % vehicles ? 1 : 0));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continued_ns = wall_ns();
      machine_before = machine_after = machine_time();
      kill(router, SIGCONT);
      // Done when the router has used no CPU for 50 ms (it has no periodic work that often).
      uint64_t last = cpu_ns(router);
      for (int idle = 0, waited = 0; idle < 5 && waited < 6000; ++waited) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const uint64_t now = cpu_ns(router);
        if (now - last >= 100'000) machine_after = machine_time();  // the router still worked
        idle = now - last < 100'000 ? idle + 1 : 0;
        last = now;
      }
      sending = false;
      return;
    }
    auto tick = Clock::now();
    while (Clock::now() - t0 < std::chrono::duration<double>(o.seconds)) {
      if (total_rate > 0) {
        budget += per_ms;
        const auto to_send = static_cast<size_t>(budget);
        budget -= static_cast<double>(to_send);
        const size_t each = to_send / vehicles;
        size_t extra = to_send % vehicles;
        for (size_t j = 0; j < vehicles; ++j) {
          const size_t v = (cursor + j) % vehicles;
          send_from(v, each + (extra > 0 ? 1 : 0));
          if (extra > 0) --extra;
        }
        cursor = (cursor + to_send % vehicles) % vehicles;
        read_transmit_stamps();
        tick += std::chrono::milliseconds(1);
        std::this_thread::sleep_until(tick);
      } else {
        for (size_t v = 0; v < vehicles; ++v) send_from(v, 32);
        read_transmit_stamps();
      }
    }
    sending = false;
    for (int settle = 0; kernel_send_times && settle < 20; ++settle) {  // the last datagrams' stamps
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      read_transmit_stamps();
    }
  });

  if (o.backlog > 0) sender.join();  // the ground stations read only once the router is done
  // Receive until the sender is done and the pipes are quiet.
  const int ep = epoll_create1(0);
  for (size_t r = 0; r < receivers.size(); ++r) {
    fcntl(receivers[r].fd, F_SETFL, O_NONBLOCK);
    epoll_event ev{EPOLLIN, {.u64 = r}};
    epoll_ctl(ep, EPOLL_CTL_ADD, receivers[r].fd, &ev);
  }
  auto quiet_since = Clock::now();
  // recvmmsg: up to kBatch datagrams (or one TCP read) per call, each with its arrival time.
  constexpr size_t kBatch = 64, kSlot = 2048;
  static uint8_t bufs[kBatch][kSlot];
  static uint8_t stream_buf[1 << 16];
  alignas(cmsghdr) static uint8_t controls[kBatch][CMSG_SPACE(sizeof(timespec))];
  iovec iovs[kBatch];
  mmsghdr msgs[kBatch];
  while (sending || Clock::now() - quiet_since < std::chrono::milliseconds(300)) {
    epoll_event events[64];
    const int n = epoll_wait(ep, events, 64, 50);
    for (int e = 0; e < n; ++e) {
      Receiver& r = receivers[events[e].data.u64];
      for (;;) {
        const size_t batch = o.tcp ? 1 : kBatch;
        for (size_t k = 0; k < batch; ++k) {
          iovs[k] = o.tcp ? iovec{stream_buf, sizeof stream_buf} : iovec{bufs[k], kSlot};
          msgs[k] = {};
          msgs[k].msg_hdr.msg_iov = &iovs[k];
          msgs[k].msg_hdr.msg_iovlen = 1;
          msgs[k].msg_hdr.msg_control = controls[k];
          msgs[k].msg_hdr.msg_controllen = sizeof controls[k];
        }
        const int got = recvmmsg(r.fd, msgs, static_cast<unsigned>(batch), MSG_DONTWAIT, nullptr);
        if (got <= 0 || (o.tcp && msgs[0].msg_len == 0)) break;
        quiet_since = Clock::now();
        for (int k = 0; k < got; ++k) {
          const uint64_t now = arrival_ns(msgs[k].msg_hdr);
          auto sink = [&](const protocol::FrameView& f) {
            const int v = f.compid() == 0 ? -1 : vehicle_of(f.sysid(), f.compid());
            if (v < 0 || v >= o.vehicles || f.payload_len() < 4) return;
            if (r.gcs < 0 && -1 - r.gcs == v) return;  // its own frame back: would be a bug, not counted
            uint32_t index;
            std::memcpy(&index, f.payload().data(), 4);
            if (index == 0 || index > per_vehicle_frames) return;
            Flow& fl = flows[events[e].data.u64 * flows_per + static_cast<size_t>(v)];
            uint8_t& bits = fl.seen[index / 8];
            if (bits & (1u << (index % 8))) {
              ++fl.duplicates;
              return;
            }
            bits = static_cast<uint8_t>(bits | (1u << (index % 8)));
            ++fl.received;
            if (fl.any && index < fl.highest) ++fl.reordered;
            fl.highest = std::max(fl.highest, index);
            fl.any = true;
            if (arrivals.size() < arrivals.capacity()) arrivals.push_back({static_cast<uint32_t>(v), index, now});
          };
          r.parser.feed({static_cast<const uint8_t*>(iovs[k].iov_base), msgs[k].msg_len}, sink);
          r.parser.flush(sink);
        }
      }
    }
  }
  if (sender.joinable()) sender.join();
  // Rates over the sending window (the drain adds no traffic), or over the router's drain.
  uint64_t last_arrival = 0;
  for (const Arrival& a : arrivals) last_arrival = std::max(last_arrival, a.ns);
  const double drain_s = last_arrival > continued_ns ? static_cast<double>(last_arrival - continued_ns) / 1e9 : 0.0;
  const double elapsed = o.backlog > 0 ? std::max(drain_s, 1e-6) : o.seconds;
  const uint64_t cpu_after = cpu_ns(router);
  const auto threads_after = thread_cpu_ns(router);
  const Switches switches_after = context_switches(router);
  kill(router, SIGTERM);
  waitpid(router, nullptr, 0);

  uint64_t delivered = 0, dups = 0, reorders = 0, min_flow = UINT64_MAX, max_flow = 0;
  const size_t expected_receivers_per_vehicle =
      static_cast<size_t>(o.gcs - o.slow_gcs) + (o.vehicle_to_vehicle ? static_cast<size_t>(o.vehicles - 1) : 0);
  for (size_t r = 0; r < receivers.size(); ++r) {
    for (int v = 0; v < o.vehicles; ++v) {
      if (receivers[r].gcs < 0 && -1 - receivers[r].gcs == v) continue;
      const Flow& f = flows[r * flows_per + static_cast<size_t>(v)];
      delivered += f.received;
      dups += f.duplicates;
      reorders += f.reordered;
      min_flow = std::min(min_flow, f.received);
      max_flow = std::max(max_flow, f.received);
    }
  }
  const double expected = static_cast<double>(offered.load()) / o.vehicles * o.vehicles *
                          static_cast<double>(expected_receivers_per_vehicle);
  std::vector<uint64_t> latencies;
  latencies.reserve(arrivals.size());
  for (const Arrival& a : arrivals) {
    const uint64_t sent = sent_at[a.vehicle][a.index];
    latencies.push_back(a.ns > sent ? a.ns - sent : 0);
  }
  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double p) {
    return latencies.empty()
               ? 0.0
               : static_cast<double>(latencies[static_cast<size_t>(p * static_cast<double>(latencies.size() - 1))]) /
                     1000.0;
  };
  const double cpu_s = static_cast<double>(cpu_after - cpu_before) / 1e9;
  std::printf(
      "offered_msg_s=%.0f delivered_msg_s=%.0f loss_pct=%.4f duplicates=%lu reordered=%lu "
      "latency_us_p50=%.1f p99=%.1f max=%.1f balance_min=%lu balance_max=%lu router_cpu_s=%.3f "
      "cpu_us_per_delivered=%.3f sleeps_s=%.0f preemptions_s=%.0f kernel_send_times_pct=%.1f",
      static_cast<double>(offered.load()) / elapsed, static_cast<double>(delivered) / elapsed,
      expected > 0 ? std::max(0.0, 100.0 * (1.0 - static_cast<double>(delivered) / expected)) : 0.0, dups, reorders,
      pct(0.5), pct(0.99), latencies.empty() ? 0.0 : static_cast<double>(latencies.back()) / 1000.0, min_flow, max_flow,
      cpu_s, delivered ? cpu_s * 1e6 / static_cast<double>(delivered) : 0.0,
      static_cast<double>(switches_after.voluntary - switches_before.voluntary) / elapsed,
      static_cast<double>(switches_after.involuntary - switches_before.involuntary) / elapsed,
      offered.load() ? 100.0 * static_cast<double>(kernel_stamped) / static_cast<double>(offered.load()) : 0.0);
  if (o.backlog > 0) {
    // How many of the machine's cores were busy during the drain (router, kernel, anyone).
    const uint64_t busy = machine_after.busy - machine_before.busy,
                   all = busy + machine_after.idle - machine_before.idle;
    std::printf(" drain_ms=%.1f machine_busy_pct=%.0f", drain_s * 1e3,
                all ? 100.0 * static_cast<double>(busy) / static_cast<double>(all) : 0.0);
    // Each router thread's share of the drain's CPU (how evenly the workers divided it).
    std::printf(" thread_cpu_ms=");
    const char* sep = "";
    for (const auto& [tid, ns] : threads_after) {
      const auto before = threads_before.find(tid);
      std::printf("%s%.1f", sep, static_cast<double>(ns - (before != threads_before.end() ? before->second : 0)) / 1e6);
      sep = ",";
    }
  }
  std::printf("\n");
  return 0;
}
