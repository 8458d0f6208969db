// mavswitchd as a user runs it: configuration files, flags, signals, statistics, logs.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "base/sanitizers.hpp"
#include "e2e/daemon_process.hpp"
#include "e2e/log_streaming_autopilot.hpp"
#include "e2e/peers.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
namespace fs = std::filesystem;

namespace {

class DaemonTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) { return scratch_.write(name, text).string(); }
  ScratchDir scratch_{"mavswitchd"};
  const fs::path& dir_ = scratch_.path();
};

// Sends from `from` until `to` hears something (the daemon may still be starting).
bool reaches(UdpPeer& from, uint16_t port, Peer& to) {
  return wait_until(
      [&] {
        from.send_to(port, heartbeat(1, 1));
        return to.wait_frames(1, 50ms);
      },
      5000ms);
}

}  // namespace

TEST_F(DaemonTest, TheMavlinkRouterSampleConfigStartsAndRoutes) {
  const uint16_t server = free_udp_port(), tcp = free_tcp_port(), nobody = free_tcp_port();
  UdpPeer gcs;  // the "Normal" (client) endpoint's target
  const std::string conf = write(
      "main.conf",
      "[General]\nTcpServerPort=" + std::to_string(tcp) +
          "\nReportStats=false\nMavlinkDialect=auto\n\n[UdpEndpoint alfa]\nMode = Eavesdropping\nAddress = "
          "0.0.0.0\nPort = " +
          std::to_string(server) + "\n\n[UartEndpoint bravo]\nDevice = " + (dir_ / "no-such-tty").string() +
          "\nBaud = 52000\n\n[UdpEndpoint charlie]\nMode = Normal\nAddress = 127.0.0.1\nPort = " +
          std::to_string(gcs.port()) +
          "\n\n[TcpEndpoint delta]\nAddress = 127.0.0.1\nPort = " + std::to_string(nobody) + "\nRetryTimeout=10\n");
  DaemonProcess d({"-c", conf});
  UdpPeer vehicle;
  ASSERT_TRUE(reaches(vehicle, server, gcs)) << d.err();
  TcpPeer client(tcp);  // the TCP server of [General]
  // The client is routed to once the daemon has accepted it (on whichever worker): until then,
  // frames for it have nowhere to go.
  ASSERT_TRUE(wait_until(
      [&] {
        vehicle.send(attitude(1, 1, 5));
        return client.wait_frames(1, 50ms);
      },
      5000ms))
      << d.err();
  EXPECT_TRUE(d.running()) << "a missing serial device and an unreachable TCP target are not fatal";
  EXPECT_EQ(d.err().find("MavlinkDialect"), std::string::npos) << "auto, the default, is no cause for a warning";
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0) << d.err();
}

// mavlink-router's sample with Log set (and LogTelemetry not): the autopilot's own log lands in
// the directory as a .ulg, byte for byte, finished read-only when the router stops.
TEST_F(DaemonTest, TheSampleConfigWithLogCapturesTheFlightLog) {
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/captures/ulog is not here: PX4's ULog files are needed";
  const auto whole = read_bytes(shared / "captures" / "ulog" / "sample_px4_events.ulg");
  std::vector<uint8_t> ulog;
  for (const auto& [begin, end] : ulog_messages(whole)) {
    if (end > 200'000) break;
    ulog.assign(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(end));
  }
  const uint16_t server = free_udp_port();
  const fs::path logs = dir_ / "flight";
  const std::string conf =
      write("main.conf", "[General]\nTcpServerPort=0\nReportStats=false\nMavlinkDialect=auto\nLog=" + logs.string() +
                             "\n\n[UdpEndpoint alfa]\nMode = Eavesdropping\n"
                             "Address = 127.0.0.1\nPort = " +
                             std::to_string(server) + "\n");
  DaemonProcess d({"-c", conf});
  UdpPeer vehicle;
  vehicle.connect_to(server);
  LoggingAutopilot px4(vehicle, 12);
  ASSERT_TRUE(px4.wait_for_request(5000ms)) << d.err();
  ASSERT_TRUE(px4.stream_ulog(ulog));
  fs::path file;
  ASSERT_TRUE(wait_until([&] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(logs, ec))
      if (e.path().extension() == ".ulg" && fs::file_size(e.path(), ec) == ulog.size()) file = e.path();
    return !file.empty();
  })) << d.err();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0) << d.err();
  EXPECT_TRUE(read_bytes(file) == ulog);
  struct stat st;
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0222, 0u) << "finished: read-only";
}

TEST_F(DaemonTest, ABadConfigLineNamesFileLineAndKey) {
  const std::string conf =
      write("bad.conf", "[General]\nTcpServerPort = 5760\n\n[UartEndpoint fc]\nDevice=/dev/ttyS0\nBaud = fast\n");
  DaemonProcess d({"-c", conf});
  EXPECT_EQ(d.wait_exit(), 2);
  EXPECT_NE(d.err().find(conf + ":6: Baud: 'fast' is not a whole number"), std::string::npos) << d.err();
}

// A port another program holds is a mistake in the configuration for this machine: it is named
// by the file and line of the Port that asked for it, exit status 2, as a bad line is.
TEST_F(DaemonTest, APortInUseNamesTheLineThatAskedForIt) {
  UdpPeer holder;  // holds a UDP port on 127.0.0.1
  const std::string conf = write("taken.conf",
                                 "[General]\nTcpServerPort = 0\n\n[UdpEndpoint gcs]\nMode = Server\n"
                                 "Address = 127.0.0.1\nPort = " +
                                     std::to_string(holder.port()) + "\n");
  DaemonProcess d({"-c", conf});
  EXPECT_EQ(d.wait_exit(), 2);
  EXPECT_NE(d.err().find(conf + ":7: Port: udp-server gcs 127.0.0.1:" + std::to_string(holder.port())),
            std::string::npos)
      << d.err();
  EXPECT_NE(d.err().find("cannot bind"), std::string::npos) << d.err();
}

// As mavlink-routerd: a TCP server whose port is taken is an error line (and a line in the
// statistics), and the router routes on without it; --strict (Strict = true) makes it fatal.
TEST_F(DaemonTest, ATcpServerPortInUseIsAnErrorAndTheRouterRoutesOn) {
  const int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(holder, reinterpret_cast<sockaddr*>(&a), &len);
  const uint16_t taken = ntohs(a.sin_port), server = free_udp_port();
  UdpPeer gcs;
  const std::string conf = write("taken.conf", "[General]\nTcpServerPort = " + std::to_string(taken) +
                                                   "\nTcpServerAddress = 127.0.0.1\n\n[UdpEndpoint vehicle]\n"
                                                   "Mode = Server\nAddress = 127.0.0.1\nPort = " +
                                                   std::to_string(server) +
                                                   "\n[UdpEndpoint gcs]\nMode = Normal\n"
                                                   "Address = 127.0.0.1\nPort = " +
                                                   std::to_string(gcs.port()) + "\n");
  {
    DaemonProcess d({"-c", conf});
    UdpPeer vehicle;
    ASSERT_TRUE(reaches(vehicle, server, gcs)) << d.err();
    EXPECT_NE(d.err().find(conf + ":2: Port: tcp-server default"), std::string::npos) << d.err();
    EXPECT_NE(d.err().find("routing on without it"), std::string::npos) << d.err();
    d.signal(SIGUSR1);
    ASSERT_TRUE(wait_until([&] { return d.out().find("not open:") != std::string::npos; })) << d.out();
    d.signal(SIGTERM);
    EXPECT_EQ(d.wait_exit(), 0) << d.err();
  }
  DaemonProcess strict({"-c", conf, "--strict"});
  EXPECT_EQ(strict.wait_exit(), 2);
  EXPECT_NE(strict.err().find(conf + ":2: Port: tcp-server default"), std::string::npos) << strict.err();
  ::close(holder);
}

// Out of descriptors, the TCP server refuses the clients it cannot hold (they see the connection
// close), says so once (not once per try: it used to spin, printing millions of lines), counts
// them, and serves its clients on.
TEST_F(DaemonTest, OutOfDescriptorsTheTcpServerRefusesClientsAndDoesNotSpin) {
  // UndefinedBehaviorSanitizer checks a virtual call's object through a pipe it opens: with every
  // descriptor taken it cannot, and reports the first such call (the signal handler's) as bad.
  if (MAVSWITCH_ADDRESS_SANITIZER) GTEST_SKIP() << "the sanitizers need descriptors of their own";
  const uint16_t tcp = free_tcp_port();
  DaemonProcess d({"-t", std::to_string(tcp), "-r"}, 64);
  std::unique_ptr<TcpPeer> first;
  ASSERT_TRUE(wait_until([&] {
    try {
      first = std::make_unique<TcpPeer>(tcp);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  })) << d.err();
  // Both held before the crowd comes: with several workers, the crowd could otherwise take the
  // descriptors before the worker that has first in its backlog accepts it.
  auto witness = std::make_unique<TcpPeer>(tcp);
  uint8_t seq = 0;
  ASSERT_TRUE(wait_until([&] {
    first->send(heartbeat(2, 1, seq++));
    return witness->wait_frames(1, 50ms);
  })) << d.err();
  std::vector<std::unique_ptr<TcpPeer>> crowd;
  for (int k = 0; k < 100; ++k) crowd.push_back(std::make_unique<TcpPeer>(tcp));  // the kernel's backlog takes them
  // Some were refused: closed by the router, not left hanging in its backlog.
  ASSERT_TRUE(wait_until(
      [&] { return std::any_of(crowd.begin(), crowd.end(), [](auto& c) { return c->closed_by_peer(); }); }, 5000ms))
      << d.err();
  ASSERT_TRUE(wait_until([&] { return d.err().find("refusing new clients") != std::string::npos; })) << d.err();
  EXPECT_NE(d.err().find("file descriptors: up to 64"), std::string::npos) << "the limit is said at start";
  // Served on: a client that holds a descriptor still gets what another sends. Which of the
  // crowd hold one is the kernel's and the workers' business (with several workers each has its
  // own backlog): every one still open says something.
  first->clear();
  ASSERT_TRUE(wait_until(
      [&] {
        for (auto& c : crowd) {
          if (!c->closed_by_peer()) c->send(heartbeat(1, 1, seq++));
        }
        return first->wait_frames(1, 50ms);
      },
      5000ms));
  d.signal(SIGUSR1);
  ASSERT_TRUE(wait_until([&] { return d.out().find("out of file descriptors") != std::string::npos; })) << d.out();
  size_t lines = 0;
  for (size_t at = 0; (at = d.err().find("refusing new clients", at)) != std::string::npos; ++at) ++lines;
  // Each worker's socket of the port says it once per interval (the TSan pass runs three).
  const char* workers = std::getenv("MAVSWITCH_TEST_WORKERS");
  const size_t sayers = std::max<size_t>(2, workers != nullptr ? std::strtoul(workers, nullptr, 10) : 1);
  EXPECT_LE(lines, sayers) << "said once per interval and worker, not per try";
  EXPECT_TRUE(d.running());
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0) << d.err();
}

// mavlink-router's README command line, as written there: two -e flags, then the autopilot's
// serial port with its baud rate (here a pseudo-terminal), and the TCP server on by default.
TEST_F(DaemonTest, MavlinkRoutersReadmeCommandLineStartsAndRoutes) {
  PtyPeer autopilot;
  UdpPeer qgc, companion;
  const uint16_t tcp = free_tcp_port();
  DaemonProcess d({"-t", std::to_string(tcp), "-e", "127.0.0.1:" + std::to_string(qgc.port()), "-e",
                   "127.0.0.1:" + std::to_string(companion.port()), autopilot.slave_path() + ":1500000"});
  ASSERT_TRUE(wait_until(
      [&] {
        autopilot.send(heartbeat(1, 1));
        return qgc.wait_frames(1, 50ms) && companion.wait_frames(1, 50ms);
      },
      5000ms))
      << d.err();
  qgc.send_to(qgc.received().source_ports.front(), command_long(255, 190, 1, 1));
  ASSERT_TRUE(wait_until([&] { return autopilot.received().count_msgid(msg::CommandLong::kId) == 1; })) << d.err();
  EXPECT_EQ(companion.received().count_msgid(msg::CommandLong::kId), 0u) << "addressed to the autopilot only";
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0) << d.err();
}

TEST_F(DaemonTest, CommandLineFlagsLikeMavlinkRouterd) {
  const uint16_t server = free_udp_port();
  UdpPeer gcs;
  // positional host:port is a UDP server, -e a UDP client, -t 0 no TCP server.
  DaemonProcess d({"-t", "0", "127.0.0.1:" + std::to_string(server), "-e", "127.0.0.1:" + std::to_string(gcs.port())});
  UdpPeer vehicle;
  ASSERT_TRUE(reaches(vehicle, server, gcs)) << d.err();
  d.signal(SIGUSR1);
  ASSERT_TRUE(wait_until([&] { return d.out().find("stats:") != std::string::npos; })) << d.out();
  EXPECT_NE(d.out().find("udp-server"), std::string::npos);
  EXPECT_NE(d.out().find("source 1/1"), std::string::npos) << d.out();
  d.signal(SIGINT);
  EXPECT_EQ(d.wait_exit(), 0);
}

// ReportStats prints its block every StatsInterval only when something moved: a router with
// nothing to route says so once, not every interval, and speaks again when a frame goes through.
TEST_F(DaemonTest, PeriodicStatisticsOnlyWhenSomethingMoved) {
  const uint16_t server = free_udp_port();
  UdpPeer gcs;
  const std::string conf =
      write("main.conf",
            "[General]\nTcpServerPort=0\nReportStats=true\nStatsInterval=1\n\n[UdpEndpoint gcs]\nMode = "
            "Normal\nAddress = 127.0.0.1\nPort = " +
                std::to_string(gcs.port()) +
                "\n\n[UdpEndpoint vehicles]\nMode = Server\nAddress = "
                "127.0.0.1\nPort = " +
                std::to_string(server) + "\n");
  DaemonProcess d({"-c", conf});
  ASSERT_TRUE(wait_until([&] { return count_of(d.out(), "stats:") == 1; })) << d.out();
  EXPECT_FALSE(wait_until([&] { return count_of(d.out(), "stats:") > 1; }, 2500ms))
      << "two intervals with nothing moving printed again:\n"
      << d.out();
  UdpPeer vehicle;
  ASSERT_TRUE(reaches(vehicle, server, gcs)) << d.err();
  ASSERT_TRUE(wait_until([&] { return count_of(d.out(), "stats:") >= 2; }, 3000ms)) << d.out();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0);
}

// With two workers, two ground stations (UDP clients, dealt out to worker 0 and worker 1) and a
// vehicle wherever the kernel's hash put it: one of the ground stations lives on the other
// worker, which writes to its link itself. The statistics count those frames, and each ground
// station's link counts every frame it was sent, in its own "out" count.
TEST_F(DaemonTest, StatisticsCountFramesWrittenToAnotherWorkersUdpLink) {
  const uint16_t server = free_udp_port();
  UdpPeer gcs[2];
  DaemonProcess d({"-j", "2", "-t", "0", "127.0.0.1:" + std::to_string(server), "-e",
                   "127.0.0.1:" + std::to_string(gcs[0].port()), "-e", "127.0.0.1:" + std::to_string(gcs[1].port())});
  ASSERT_TRUE(wait_until([&] {
    const std::string err = d.err();
    const size_t first = err.find("sending to");
    return first != std::string::npos && err.find("sending to", first + 1) != std::string::npos;
  })) << d.err();
  UdpPeer vehicle;
  ASSERT_TRUE(reaches(vehicle, server, gcs[0])) << d.err();
  ASSERT_TRUE(gcs[1].wait_frames(1)) << d.err();
  for (auto& g : gcs) g.clear();
  constexpr uint32_t kFrames = 20;
  for (uint32_t i = 0; i < kFrames; ++i) vehicle.send(attitude(1, 1, i));
  for (auto& g : gcs) ASSERT_TRUE(g.wait_frames(kFrames));
  d.signal(SIGUSR1);
  const std::string direct = "frames written to another worker's UDP links: ";
  ASSERT_TRUE(wait_until([&] { return d.out().find(direct) != std::string::npos; })) << d.out();
  const std::string out = d.out();
  EXPECT_GE(std::stoul(out.substr(out.find(direct) + direct.size())), kFrames) << out;
  for (auto& g : gcs) {
    const std::string link = "127.0.0.1:" + std::to_string(g.port()) + ": in ";
    ASSERT_NE(out.find(link), std::string::npos) << out;
    const std::string after_in = out.substr(out.find(link));
    EXPECT_GE(std::stoul(after_in.substr(after_in.find(", out ") + 6)), kFrames) << out;
  }
  d.signal(SIGINT);
  EXPECT_EQ(d.wait_exit(), 0);
}

TEST_F(DaemonTest, FiltersFromTheConfigAct) {
  const uint16_t server = free_udp_port();
  UdpPeer gcs;
  const std::string conf =
      write("f.conf", "[General]\nTcpServerPort=0\n[UdpEndpoint in]\nMode=Server\nAddress=127.0.0.1\nPort=" +
                          std::to_string(server) + "\n[UdpEndpoint out]\nMode=Normal\nAddress=127.0.0.1\nPort=" +
                          std::to_string(gcs.port()) + "\nAllowMsgIdOut = 0\n");
  DaemonProcess d({"-c", conf});
  UdpPeer vehicle;
  ASSERT_TRUE(reaches(vehicle, server, gcs)) << d.err();
  for (uint32_t i = 0; i < 20; ++i) vehicle.send(attitude(1, 1, i));
  vehicle.send(heartbeat(1, 1, 99));
  ASSERT_TRUE(wait_until([&] { return gcs.received().count_msgid(msg::Heartbeat::kId) >= 2; }));
  EXPECT_EQ(gcs.received().count_msgid(msg::Attitude::kId), 0u) << "only HEARTBEAT (0) may go out there";
}

TEST_F(DaemonTest, TelemetryLogIsWrittenAndReadable) {
  const uint16_t server = free_udp_port();
  const fs::path logs = dir_ / "logs";
  UdpPeer gcs;
  DaemonProcess d({"-t", "0", "-l", logs.string(), "-T", "127.0.0.1:" + std::to_string(server), "-e",
                   "127.0.0.1:" + std::to_string(gcs.port())});
  UdpPeer vehicle;
  ASSERT_TRUE(reaches(vehicle, server, gcs)) << d.err();
  for (uint32_t i = 0; i < 100; ++i) vehicle.send(attitude(1, 1, i, static_cast<uint8_t>(i)));
  ASSERT_TRUE(wait_until([&] { return gcs.received().count_msgid(msg::Attitude::kId) == 100; }));
  d.signal(SIGTERM);
  ASSERT_EQ(d.wait_exit(), 0) << d.err();
  std::vector<fs::path> tlogs;
  for (const auto& e : fs::directory_iterator(logs)) tlogs.push_back(e.path());
  ASSERT_EQ(tlogs.size(), 1u);
  EXPECT_EQ(tlogs[0].extension(), ".tlog");
  const std::string cmd = tool_path() + " dump " + tlogs[0].string() + " 2>&1 | grep -c ATTITUDE";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[64] = {};
  ASSERT_NE(fgets(buf, sizeof buf, p), nullptr);
  pclose(p);
  EXPECT_EQ(std::stoi(buf), 100 + 1) << "100 frames, and the summary line naming ATTITUDE";
}

TEST_F(DaemonTest, AnOpenUnsignedListenerIsALoudWarning) {
  const uint16_t open = free_udp_port(), closed = free_udp_port();
  DaemonProcess d(
      {"-c", write("w.conf", "[General]\nTcpServerPort=0\n[UdpEndpoint open]\nMode=Server\nAddress=0.0.0.0\nPort=" +
                                 std::to_string(open) + "\n[UdpEndpoint closed]\nMode=Server\nAddress=0.0.0.0\nPort=" +
                                 std::to_string(closed) + "\nAllowFrom=127.0.0.0/8\n")});
  ASSERT_TRUE(wait_until([&] { return d.err().find("listening") != std::string::npos; })) << d.err();
  EXPECT_NE(
      d.err().find("udp-server open port " + std::to_string(open) + " accepts MAVLink from any address, unsigned"),
      std::string::npos)
      << d.err();
  EXPECT_EQ(d.err().find("udp-server closed port"), std::string::npos) << "restricted: no warning";
}

// -g trace (mavlink-router's sample config sets DebugLogLevel = trace) logs every routing
// decision with its outcome: what was delivered where, and what was dropped and why.
TEST_F(DaemonTest, TraceLogsEveryRoutingDecisionAndWhyAFrameWasDropped) {
  const uint16_t server = free_udp_port();
  UdpPeer gcs;
  DaemonProcess d({"-g", "trace", "-t", "0", "127.0.0.1:" + std::to_string(server), "-e",
                   "127.0.0.1:" + std::to_string(gcs.port())});
  UdpPeer vehicle;
  ASSERT_TRUE(reaches(vehicle, server, gcs)) << d.err();
  vehicle.send(command_long(1, 1, 77, 1));  // nobody is system 77
  ASSERT_TRUE(wait_until([&] { return d.err().find("dropped: unknown-target") != std::string::npos; })) << d.err();
  EXPECT_NE(d.err().find("trace: route: 1/1 HEARTBEAT (#0) seq 0 from link "), std::string::npos) << d.err();
  EXPECT_NE(d.err().find(": delivered to links "), std::string::npos) << d.err();
  EXPECT_NE(d.err().find("trace: route: 1/1 COMMAND_LONG (#76) seq 0 from link "), std::string::npos) << d.err();
  d.signal(SIGINT);
  EXPECT_EQ(d.wait_exit(), 0);
}

// -y: the log goes to syslog (mavlink-routerd's flag), not to stderr.
TEST_F(DaemonTest, SyslogTakesTheLogOffStderr) {
  const uint16_t server = free_udp_port();
  UdpPeer gcs;
  DaemonProcess d(
      {"-y", "-t", "0", "127.0.0.1:" + std::to_string(server), "-e", "127.0.0.1:" + std::to_string(gcs.port())});
  UdpPeer vehicle;
  ASSERT_TRUE(reaches(vehicle, server, gcs)) << d.err();
  d.signal(SIGINT);
  EXPECT_EQ(d.wait_exit(), 0);
  EXPECT_EQ(d.err(), "") << "the start-up lines went to syslog";
}

// Every file the daemon reads is a regular file of a bounded size: a directory, a FIFO or a
// device named by mistake is "file: what is wrong" and exit status 2, never a crash, a hang or
// a read without end.
TEST_F(DaemonTest, AFileThatIsNotAFileIsAClearError) {
  const fs::path dir = dir_ / "a-directory";
  fs::create_directory(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);  // as a key's would be
  const fs::path fifo = dir_ / "a-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string section =
      "[UdpEndpoint u]\nMode=Server\nAddress=127.0.0.1\nPort=" + std::to_string(free_udp_port()) + "\n";
  const std::string udp = "[General]\nTcpServerPort=0\n" + section;
  const struct {
    std::vector<std::string> args;
    std::string error;
  } cases[] = {
      {{"-c", dir.string()}, dir.string() + ": is a directory, not a file"},
      {{"-c", fifo.string()}, fifo.string() + ": is not a regular file"},
      {{"-c", write("k.conf", udp + "SigningKeyFile=" + dir.string() + "\n")}, dir.string() + ": is a directory"},
      {{"--dialect", dir.string(), "-t", "0", "127.0.0.1:14550"}, dir.string() + ": is a directory"},
      {{"--dialect", "/dev/zero", "-t", "0", "127.0.0.1:14550"}, "/dev/zero: is not a regular file"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args.back());
    DaemonProcess d(c.args);
    EXPECT_EQ(d.wait_exit(), 2) << d.err();
    EXPECT_NE(d.err().find(c.error), std::string::npos) << d.err();
  }
  // The signing state is read once the router is set up: a device there stops it the same way.
  const std::string key = write("key", std::string(64, 'a'));
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  DaemonProcess d({"-c", write("s.conf", "[General]\nTcpServerPort=0\nSigningStateFile=/dev/zero\n" + section +
                                             "SigningKeyFile=" + key + "\nSigning=verify\n")});
  EXPECT_EQ(d.wait_exit(), 2) << d.err();
  EXPECT_NE(d.err().find("SigningStateFile: /dev/zero: is not a regular file"), std::string::npos) << d.err();
}

TEST_F(DaemonTest, VersionAndHelp) {
  DaemonProcess version({"--version"});
  EXPECT_EQ(version.wait_exit(), 0);
  EXPECT_EQ(version.out().rfind("mavswitchd ", 0), 0u) << version.out();
  DaemonProcess help({"--help"});
  EXPECT_EQ(help.wait_exit(), 0);
  for (const char* flag :
       {"--endpoint", "--tcp-endpoint", "--tcp-port", "--conf-file", "--conf-dir", "--log", "--telemetry-log",
        "--sniffer-sysid", "--report_msg_statistics", "--no-coalesce", "--max-peers"}) {
    EXPECT_NE(help.out().find(flag), std::string::npos) << flag;
  }
}

TEST_F(DaemonTest, NothingToRouteIsAClearError) {
  DaemonProcess d({"-t", "0", "-c", write("empty.conf", "[General]\n")});
  EXPECT_EQ(d.wait_exit(), 2);
  EXPECT_NE(d.err().find("nothing to route"), std::string::npos) << d.err();
}
