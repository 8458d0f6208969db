// The operator's window of a running mavswitchd, end to end on loopback: /metrics (checked by
// promtool and scraped by a real Prometheus), the JSON API, endpoints added and removed while
// frames flow elsewhere, who may change what, bad requests that change nothing, and SIGHUP.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "e2e/daemon_process.hpp"
#include "e2e/http_client.hpp"
#include "e2e/peers.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/radio_status.hpp"
#include "mavswitch/msg/statustext.hpp"
#include "mavswitch/msg/sys_status.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
namespace fs = std::filesystem;

namespace {

constexpr const char* kToken = "a-test-token-of-32-characters-xx";

// A counter's value in a Prometheus exposition, or -1.
double sample(const std::string& exposition, const std::string& series) {
  const auto at = exposition.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(exposition.substr(at + series.size() + 2));
}

// A daemon with a vehicle's and a ground station's UDP servers and the HTTP server on its own
// port, the token in a file of mode 600.
class Http : public ::testing::Test {
 protected:
  void SetUp() override {
    token_file_ = scratch_.write("token", std::string(kToken) + "\n").string();
    ::chmod(token_file_.c_str(), 0600);
  }
  std::string config(const std::string& http_keys, const std::string& more = "") {
    return scratch_
        .write(
            "main.conf",
            "[General]\nTcpServerPort = 0\n[Http]\n" + http_keys +
                "[UdpEndpoint vehicle]\nMode = Server\nAddress = 127.0.0.1\nPort = " + std::to_string(vehicle_port_) +
                "\n[UdpEndpoint gcs]\nMode = Server\nAddress = 127.0.0.1\nPort = " + std::to_string(gcs_port_) + "\n" +
                more)
        .string();
  }
  std::unique_ptr<DaemonProcess> start(const std::string& http_keys, const std::string& more = "") {
    const std::string conf = config(http_keys, more);
    auto d = std::make_unique<DaemonProcess>(
        std::vector<std::string>{"-c", conf, "--http=127.0.0.1:" + std::to_string(http_port_)});
    EXPECT_TRUE(wait_until([&] { return http_request(http_port_, "GET", "/api/v1").status == 200; }, 5000ms))
        << d->err();
    return d;
  }
  // The vehicle and the ground station are heard, so routes exist both ways.
  void connect_peers() { ASSERT_TRUE(introduce(vehicle_, vehicle_port_, gcs_, gcs_port_)); }
  std::string token_keys() const { return "TokenFile = " + token_file_ + "\n"; }
  // promtool's lint of an exposition: no findings expected. False when promtool is not installed.
  bool linted_by_promtool(const std::string& exposition) {
    const std::string promtool = found_program("promtool");
    if (promtool.empty()) return false;
    const fs::path file = scratch_.write("metrics.txt", exposition);
    std::string out;
    EXPECT_EQ(run_command(promtool + " check metrics < " + file.string() + " 2>&1", &out), 0) << out;
    EXPECT_EQ(out, "") << "no lint findings";
    return true;
  }

  ScratchDir scratch_{"mavswitch-http"};
  std::string token_file_;
  const uint16_t vehicle_port_ = free_udp_port(), gcs_port_ = free_udp_port(), http_port_ = free_tcp_port();
  UdpPeer vehicle_, gcs_;
};

}  // namespace

TEST_F(Http, MetricsPassPromtoolAndMoveWithTheTraffic) {
  auto d = start(token_keys(), "[General]\nLog = " + (scratch_ / "logs").string() + "\nLogTelemetry = true\n");
  connect_peers();
  const std::string series = R"(mavswitch_link_received_frames_total{endpoint="vehicle",kind="udp-server"})";
  const double before = sample(http_request(http_port_, "GET", "/metrics").body, series);
  ASSERT_GE(before, 1);
  for (uint32_t i = 0; i < 50; ++i) vehicle_.send_to(vehicle_port_, attitude(1, 1, i, static_cast<uint8_t>(i)));
  EXPECT_TRUE(wait_until([&] { return gcs_.received().count_msgid(msg::Attitude::kId) == 50; }));
  HttpReply metrics;
  EXPECT_TRUE(wait_until([&] {
    metrics = http_request(http_port_, "GET", "/metrics");
    return sample(metrics.body, series) >= before + 50;
  }));
  EXPECT_GE(sample(metrics.body, R"(mavswitch_link_sent_frames_total{endpoint="gcs",kind="udp-server"})"), 50);
  EXPECT_GE(sample(metrics.body, "process_resident_memory_bytes"), 1e5);
  EXPECT_EQ(sample(metrics.body, "mavswitch_routes"), 4)
      << "the vehicle, the ground station, the flight log writer, the vehicle watch";
  EXPECT_GT(sample(metrics.body, R"(mavswitch_worker_busy_seconds_total{worker="0"})"), 0);
  // Per vehicle (component 1 HEARTBEATs; the ground station at 255/190 is none): last heard, armed,
  // battery remaining; and the build.
  msg::Heartbeat armed;
  armed.autopilot = 3;
  armed.base_mode = 128 | 1;
  msg::SysStatus status;
  status.battery_remaining = 77;
  vehicle_.send_to(vehicle_port_, frame_of(status, 1, 1));
  vehicle_.send_to(vehicle_port_, frame_of(armed, 1, 1));
  EXPECT_TRUE(wait_until([&] {
    metrics = http_request(http_port_, "GET", "/metrics");
    return sample(metrics.body, R"(mavswitch_vehicle_armed{system="1"})") == 1;
  })) << metrics.body;
  EXPECT_EQ(sample(metrics.body, R"(mavswitch_vehicle_battery_remaining_percent{system="1"})"), 77);
  const double heard = sample(metrics.body, R"(mavswitch_vehicle_last_heard_seconds{system="1"})");
  EXPECT_GE(heard, 0);
  EXPECT_LT(heard, 5);
  EXPECT_EQ(metrics.body.find(R"({system="255"})"), std::string::npos) << "a ground station is no vehicle";
  EXPECT_NE(metrics.body.find("\nmavswitch_build_info{version=\""), std::string::npos);
  EXPECT_TRUE(wait_until([&] {  // the telemetry log is written once a second
    metrics = http_request(http_port_, "GET", "/metrics");
    return sample(metrics.body, R"(mavswitch_log_written_bytes_total{log="telemetry"})") > 1000;
  })) << metrics.body;

  if (!linted_by_promtool(metrics.body))
    GTEST_SKIP() << "promtool not installed (Debian's prometheus package): not linted";
}

// A telemetry radio's RADIO_STATUS describes the link it arrives on (under whatever system id the
// radio borrows): the API, /metrics and the text statistics show it on that link only, newest first,
// and the frame is routed on as any other.
TEST_F(Http, RadioStatusIsShownOnTheLinkItCameFrom) {
  auto d = start(token_keys(), "[General]\nReportStats = true\nStatsInterval = 1\n");
  connect_peers();
  HttpReply metrics = http_request(http_port_, "GET", "/metrics");
  EXPECT_EQ(metrics.body.find("mavswitch_link_radio_"), std::string::npos) << "no radio heard, no radio family";
  msg::RadioStatus radio;
  radio.rssi = 150, radio.remrssi = 140, radio.noise = 40, radio.remnoise = 38, radio.rxerrors = 2, radio.fixed = 1,
  radio.txbuf = 95;
  vehicle_.send_to(vehicle_port_, frame_of(radio, 51, 68));
  radio.rssi = 180, radio.remrssi = 175, radio.rxerrors = 3;  // the newest counts
  vehicle_.send_to(vehicle_port_, frame_of(radio, 51, 68, 1));
  EXPECT_TRUE(wait_until([&] { return gcs_.received().count_msgid(msg::RadioStatus::kId) == 2; }))
      << "routed on like any frame";
  const std::regex rssi(R"(mavswitch_link_radio_rssi\{endpoint="vehicle",kind="udp-server",link="[^"]+"\} 180)");
  ASSERT_TRUE(wait_until([&] {
    metrics = http_request(http_port_, "GET", "/metrics");
    return std::regex_search(metrics.body, rssi);
  })) << metrics.body;
  EXPECT_TRUE(std::regex_search(
      metrics.body,
      std::regex(R"(mavswitch_link_radio_remote_noise\{endpoint="vehicle",kind="udp-server",link="[^"]+"\} 38)")))
      << metrics.body;
  EXPECT_TRUE(std::regex_search(
      metrics.body,
      std::regex(R"(mavswitch_link_radio_rx_errors\{endpoint="vehicle",kind="udp-server",link="[^"]+"\} 3)")));
  EXPECT_EQ(metrics.body.find(R"(mavswitch_link_radio_rssi{endpoint="gcs")"), std::string::npos) << "only its own link";
  const std::string links = http_request(http_port_, "GET", "/api/v1/links").body;
  const auto vehicle_at = links.find(R"("endpoint": "vehicle")");
  const auto gcs_at = links.find(R"("endpoint": "gcs")");
  ASSERT_NE(vehicle_at, std::string::npos) << links;
  ASSERT_NE(gcs_at, std::string::npos) << links;
  const auto radio_at = links.find(R"("radio": {)");
  ASSERT_NE(radio_at, std::string::npos) << links;
  EXPECT_EQ(links.find(R"("radio": {)", radio_at + 1), std::string::npos) << "one link has a radio: " << links;
  // The radio object lies inside the vehicle link's object.
  const auto vehicle_object = links.rfind('{', vehicle_at);
  EXPECT_LT(vehicle_object, radio_at) << links;
  EXPECT_TRUE(gcs_at < vehicle_object || gcs_at > links.find('}', radio_at)) << links;
  for (const char* field : {R"("rssi": 180)", R"("remote_rssi": 175)", R"("noise": 40)", R"("remote_noise": 38)",
                            R"("rx_errors": 3)", R"("fixed": 1)", R"("tx_buffer_percent": 95)", R"("reports": 2)"}) {
    EXPECT_NE(links.find(field), std::string::npos) << field << " in " << links;
  }
  EXPECT_TRUE(
      wait_until([&] { return d->out().find("radio: rssi 180, remote rssi 175") != std::string::npos; }, 5000ms))
      << d->out();

  if (!linted_by_promtool(metrics.body))
    GTEST_SKIP() << "promtool not installed (Debian's prometheus package): not linted";
}

// What a vehicle said before anyone looked: /api/v1/statustext has each system's last lines,
// oldest first, with their severity; bytes that are not UTF-8 do not break the JSON.
TEST_F(Http, StatusTextSaidBeforeAnyoneAskedIsKept) {
  auto d = start(token_keys());
  connect_peers();
  auto say = [&](const std::string& text, uint8_t severity, uint8_t seq) {
    msg::Statustext m;
    m.severity = severity;
    std::copy_n(text.begin(), std::min(text.size(), m.text.size()), m.text.begin());
    vehicle_.send_to(vehicle_port_, frame_of(m, 1, 1, seq));
  };
  say("PreArm: Compass not calibrated", 2, 1);
  say("EKF3 IMU0 is using GPS", 6, 2);
  say(std::string("bad \xff\xfe bytes"), 4, 3);
  ASSERT_TRUE(wait_until([&] { return gcs_.received().count_msgid(msg::Statustext::kId) == 3; }));
  HttpReply reply;
  ASSERT_TRUE(wait_until([&] {
    reply = http_request(http_port_, "GET", "/api/v1/statustext");
    return reply.status == 200 && reply.body.find("bad ") != std::string::npos;
  })) << reply.status
      << " " << reply.body;
  const auto prearm = reply.body.find(R"("text": "PreArm: Compass not calibrated")");
  const auto ekf = reply.body.find(R"("text": "EKF3 IMU0 is using GPS")");
  ASSERT_NE(prearm, std::string::npos) << reply.body;
  ASSERT_NE(ekf, std::string::npos) << reply.body;
  EXPECT_LT(prearm, ekf) << "oldest first";
  EXPECT_NE(reply.body.find(R"("severity_name": "CRITICAL")"), std::string::npos) << reply.body;
  EXPECT_NE(reply.body.find(R"("system": 1)"), std::string::npos) << reply.body;
  EXPECT_EQ(reply.body.find("\xff"), std::string::npos) << "replaced, as JSON must be UTF-8";
  EXPECT_NE(http_request(http_port_, "GET", "/api/v1").body.find("/api/v1/statustext"), std::string::npos);
}

// The live feed (/api/v1/events) sends each state once: its events come on the stream's own
// clock and the state is gathered on the window's, so before, an event could repeat the last
// state (the same "at_ms"). Four events in a row, each newer than the one before.
TEST_F(Http, EachLiveEventIsANewState) {
  auto d = start(token_keys());
  const auto events = [](const std::string& raw) {
    std::vector<int64_t> at;
    for (size_t i = raw.find("data: "); i != std::string::npos; i = raw.find("data: ", i + 1)) {
      const size_t field = raw.find("\"at_ms\":", i);
      if (field == std::string::npos || raw.find("\n\n", i) == std::string::npos) break;  // not whole yet
      at.push_back(std::stoll(raw.substr(field + 8)));
    }
    return at;
  };
  const std::string raw = raw_exchange(http_port_, "GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 15,
                                       [&](const std::string& so_far) { return events(so_far).size() >= 5; });
  std::vector<int64_t> at = events(raw);
  ASSERT_GE(at.size(), 5u) << raw.substr(0, 400);
  at.erase(at.begin());  // the first may come before the first state was gathered (0)
  for (size_t i = 1; i < at.size(); ++i) EXPECT_GT(at[i], at[i - 1]) << "event " << i << " repeats a state";
}

// Queue fill: a TCP client that stops reading holds the vehicle's frames in its link's queue,
// and /metrics and /api/v1/links say how many bytes wait there.
TEST_F(Http, AStalledClientsBacklogShowsAsQueueFill) {
  const uint16_t tcp = free_tcp_port();
  auto d = start("", "[TcpServerEndpoint stalled]\nAddress = 127.0.0.1\nPort = " + std::to_string(tcp) + "\n");
  connect_peers();
  const int stalled = ::socket(AF_INET, SOCK_STREAM, 0);
  const int small = 4096;
  ::setsockopt(stalled, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in a = loopback(tcp);
  ASSERT_EQ(::connect(stalled, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const std::string series = R"(mavswitch_link_queued_bytes{endpoint="stalled",kind="tcp-server"})";
  const std::regex in_json(R"("endpoint": "stalled",\s*"kind": "tcp-server",[^}]*"queued_bytes": [1-9])");
  double queued = 0;
  std::string links;
  // The kernel's socket buffers take megabytes first, and grow as they fill: the vehicle goes
  // on until both views show a backlog (up to 400k frames, 15 MB, are offered).
  for (int burst = 0; burst < 200; ++burst) {
    for (uint32_t i = 0; i < 2000; ++i) vehicle_.send_to(vehicle_port_, attitude(1, 1, i, static_cast<uint8_t>(i)));
    queued = sample(http_request(http_port_, "GET", "/metrics").body, series);
    links = http_request(http_port_, "GET", "/api/v1/links").body;
    if (queued > 0 && std::regex_search(links, in_json)) break;
  }
  EXPECT_GT(queued, 0) << "bytes wait for the client";
  EXPECT_LE(queued, 256 * 1024) << "bounded by QueueSize";
  EXPECT_TRUE(std::regex_search(links, in_json)) << links;
  // The last burst may still be on its way to the ground station as /metrics is read (a slow
  // machine, arm64 under qemu): what waits for a reader drains, while the stalled one's stays.
  const auto gcs_queued = [&] {
    return sample(http_request(http_port_, "GET", "/metrics").body,
                  R"(mavswitch_link_queued_bytes{endpoint="gcs",kind="udp-server"})");
  };
  EXPECT_TRUE(wait_until([&] { return gcs_queued() == 0; }, 5000ms))
      << "the ground station reads: nothing waits for it (" << gcs_queued() << " bytes)";
  ::close(stalled);
}

TEST_F(Http, EndpointsAddedAndRemovedWhileFramesFlowElsewhere) {
  auto d = start(token_keys());
  connect_peers();
  constexpr uint32_t kFrames = 3000;
  std::atomic<bool> streaming{true};
  std::thread stream([&] {
    for (uint32_t i = 0; i < kFrames; ++i) {
      vehicle_.send_to(vehicle_port_, attitude(1, 1, i, static_cast<uint8_t>(i)));
      if (i % 10 == 9) pace(10ms);
    }
    streaming = false;
  });
  // A TCP server as JSON, a UDP client as a config section.
  const uint16_t tcp_port = free_tcp_port();
  UdpPeer listener;
  const auto tcp =
      http_request(http_port_, "POST", "/api/v1/endpoints",
                   R"({"section": "TcpServerEndpoint", "name": "added-tcp", "Address": "127.0.0.1", "Port": )" +
                       std::to_string(tcp_port) + "}",
                   kToken);
  EXPECT_EQ(tcp.status, 201) << tcp.body;
  const auto udp = http_request(
      http_port_, "POST", "/api/v1/endpoints",
      "[UdpEndpoint added-udp]\nMode = Normal\nAddress = 127.0.0.1\nPort = " + std::to_string(listener.port()) + "\n",
      kToken);
  EXPECT_EQ(udp.status, 201) << udp.body;
  TcpPeer client(tcp_port);
  EXPECT_TRUE(wait_until([&] { return client.received().count_msgid(msg::Attitude::kId) > 20; }));
  EXPECT_TRUE(wait_until([&] { return listener.received().count_msgid(msg::Attitude::kId) > 20; }));
  const std::string listed = http_request(http_port_, "GET", "/api/v1/endpoints").body;
  EXPECT_NE(listed.find("\"added-tcp\""), std::string::npos) << listed;
  EXPECT_NE(listed.find("\"added-udp\""), std::string::npos) << listed;

  const auto removed = http_request(http_port_, "DELETE", "/api/v1/endpoints/added-tcp", "", kToken);
  EXPECT_EQ(removed.status, 200) << removed.body;
  EXPECT_TRUE(port_free(SOCK_STREAM, tcp_port)) << "the removed server's port is free again";
  EXPECT_TRUE(wait_until([&] {
    client.poll();
    return client.closed_by_peer();
  }));
  EXPECT_TRUE(streaming) << "the changes happened while frames flowed";
  stream.join();
  EXPECT_TRUE(wait_until([&] { return gcs_.received().count_msgid(msg::Attitude::kId) == kFrames; }, 5000ms))
      << gcs_.received().count_msgid(msg::Attitude::kId) << " of " << kFrames << " reached the ground station";
  gcs_.send(command_long(255, 190, 1, 1));
  EXPECT_TRUE(wait_until([&] { return vehicle_.received().count_msgid(msg::CommandLong::kId) == 1; }))
      << "the route to the vehicle held";
  EXPECT_EQ(http_request(http_port_, "GET", "/api/v1/endpoints").body.find("added-tcp"), std::string::npos);
}

TEST_F(Http, ChangesNeedTheTokenAndNoTokenFileMeansNoChanges) {
  const std::string add =
      "[UdpEndpoint x]\nMode = Server\nAddress = 127.0.0.1\nPort = " + std::to_string(free_udp_port()) + "\n";
  {
    auto d = start(token_keys());
    EXPECT_EQ(http_request(http_port_, "POST", "/api/v1/endpoints", add).status, 401);
    EXPECT_EQ(http_request(http_port_, "POST", "/api/v1/endpoints", add, "not-the-token-but-just-as-long-x").status,
              401);
    EXPECT_EQ(http_request(http_port_, "DELETE", "/api/v1/endpoints/vehicle").status, 401);
    EXPECT_EQ(http_request(http_port_, "GET", "/metrics").status, 200) << "reads on loopback need no token";
    EXPECT_EQ(http_request(http_port_, "GET", "/api/v1/endpoints").body.find("\"x\""), std::string::npos);
  }
  {
    auto d = start("");
    const auto r = http_request(http_port_, "POST", "/api/v1/endpoints", add, kToken);
    EXPECT_EQ(r.status, 403) << r.body;
    EXPECT_NE(r.body.find("TokenFile"), std::string::npos) << r.body;
  }
}

TEST_F(Http, BeyondLoopbackEveryRequestNeedsTheToken) {
  {
    const std::string conf = config(token_keys());
    DaemonProcess d({"-c", conf, "--http=0.0.0.0:" + std::to_string(http_port_)});
    ASSERT_TRUE(wait_until([&] { return http_request(http_port_, "GET", "/metrics").status == 401; }, 5000ms))
        << d.err();
    EXPECT_EQ(http_request(http_port_, "GET", "/metrics", "", kToken).status, 200) << d.err();
    EXPECT_EQ(d.err().find("without a TokenFile"), std::string::npos);
  }
  const std::string conf = config("");
  DaemonProcess d({"-c", conf, "--http=0.0.0.0:" + std::to_string(http_port_)});
  ASSERT_TRUE(wait_until([&] { return http_request(http_port_, "GET", "/metrics").status == 200; }, 5000ms));
  EXPECT_NE(d.err().find("without a TokenFile"), std::string::npos) << "a warning at start: " << d.err();
}

TEST_F(Http, BadRequestsGetA4xxAndChangeNothing) {
  auto d = start(token_keys());
  const std::string before = http_request(http_port_, "GET", "/api/v1/endpoints").body;
  auto post = [&](const std::string& body) {
    return http_request(http_port_, "POST", "/api/v1/endpoints", body, kToken);
  };
  const auto bad_port = post("[UdpEndpoint x]\nMode = Server\nPort = 99999\n");
  EXPECT_EQ(bad_port.status, 400);
  EXPECT_NE(bad_port.body.find("request:3: Port:"), std::string::npos) << "names the line and key: " << bad_port.body;
  EXPECT_EQ(post("{\"section\": \"UdpEndpoint\", \"name\": ").status, 400) << "broken JSON";
  EXPECT_EQ(post(R"({"section": "UdpEndpoint", "name": "x", "Port": [1]})").status, 400);
  EXPECT_EQ(post("[Bogus x]\nPort = 1\n").status, 400);
  EXPECT_EQ(post("[UdpEndpoint a]\nMode = Server\nPort = 1\n[UdpEndpoint b]\nMode = Server\nPort = 2\n").status, 400)
      << "one section at a time";
  EXPECT_EQ(post("[UdpEndpoint vehicle]\nMode = Server\nAddress = 127.0.0.1\nPort = 1\n").status, 409) << "name taken";
  const auto taken =
      post("[UdpEndpoint y]\nMode = Server\nAddress = 127.0.0.1\nPort = " + std::to_string(vehicle_port_) + "\n");
  EXPECT_EQ(taken.status, 409) << taken.body;
  EXPECT_EQ(post(std::string(70 * 1024, '#')).status, 413);
  EXPECT_EQ(http_request(http_port_, "DELETE", "/api/v1/endpoints/nobody", "", kToken).status, 404);
  EXPECT_EQ(http_request(http_port_, "PUT", "/api/v1/endpoints", "", kToken).status, 405);
  EXPECT_EQ(http_request(http_port_, "GET", "/nothing/here").status, 404);
  EXPECT_EQ(http_request(http_port_, "GET", "/api/v1/endpoints").body, before) << d->err();
  connect_peers();  // and the router routes on
  EXPECT_TRUE(d->running()) << d->err();
}

// A body is read as parts, never pasted into config text: a key holding a newline, a key given
// twice, a name that is not UTF-8 are each a 400 that changes nothing, and nothing a client sends
// makes a later request fail.
TEST_F(Http, NewlinesDuplicatesAndBytesThatAreNotUtf8ChangeNothing) {
  auto d = start(token_keys());
  const std::string before = http_request(http_port_, "GET", "/api/v1/endpoints").body;
  auto post = [&](const std::string& body) {
    return http_request(http_port_, "POST", "/api/v1/endpoints", body, kToken);
  };
  const std::string server = R"("section": "UdpEndpoint", "Mode": "Server", "Address": "127.0.0.1", )";
  const auto newline = post("{" + server + R"("name": "x", "Port\n[TcpServerEndpoint evil]\nPort": "5799"})");
  EXPECT_EQ(newline.status, 400) << newline.body;
  EXPECT_NE(newline.body.find("control character"), std::string::npos) << newline.body;
  const auto value = post("{" + server + R"("name": "x", "Port": "1\n[TcpServerEndpoint evil]"})");
  EXPECT_EQ(value.status, 400) << value.body;
  const auto twice = post("{" + server + R"("name": "x", "Port": 5798, "Port": 5797})");
  EXPECT_EQ(twice.status, 400) << twice.body;
  EXPECT_NE(twice.body.find("'Port': given twice"), std::string::npos) << twice.body;
  const auto text_name = post("[UdpEndpoint \xff\xfe]\nMode = Server\nAddress = 127.0.0.1\nPort = 5796\n");
  EXPECT_EQ(text_name.status, 400) << text_name.body;
  EXPECT_NE(text_name.body.find("is not UTF-8"), std::string::npos) << text_name.body;
  const auto json_name = post("{" + server + R"("name": "caf\u00e9\u0001", "Port": 5795})");
  EXPECT_EQ(json_name.status, 400) << json_name.body;
  for (const char* name : {"%ff%fe", "%ff\xff"}) {
    const int status = http_request(http_port_, "DELETE", std::string("/api/v1/endpoints/") + name, "", kToken).status;
    EXPECT_TRUE(status >= 400 && status < 500) << name << ": " << status;
  }
  for (const char* path : {"/api/v1/endpoints", "/api/v1/stats", "/api/v1/links", "/api/v1/systems", "/metrics"})
    EXPECT_EQ(http_request(http_port_, "GET", path).status, 200) << path;
  EXPECT_EQ(http_request(http_port_, "GET", "/api/v1/endpoints").body, before) << d->err();
  // A name in UTF-8 beyond ASCII is a name like any other.
  const auto accented = post("{" + server + R"("name": "caf\u00e9", "Port": )" + std::to_string(free_udp_port()) + "}");
  EXPECT_EQ(accented.status, 201) << accented.body;
  EXPECT_EQ(http_request(http_port_, "GET", "/api/v1/stats").status, 200);
}

TEST_F(Http, AUsableTokenFileIsPrivateAndAPortTakenIsOneErrorLine) {
  {
    ::chmod(token_file_.c_str(), 0644);
    auto conf = config(token_keys());
    DaemonProcess d({"-c", conf, "--http=127.0.0.1:" + std::to_string(http_port_)});
    connect_peers();
    EXPECT_NE(d.err().find("must not be readable by group or others"), std::string::npos) << d.err();
    EXPECT_EQ(http_request(http_port_, "GET", "/metrics").status, 0) << "no HTTP server with a readable token";
    ::chmod(token_file_.c_str(), 0600);
  }
  TcpListener holder(http_port_);
  auto conf = config(token_keys());
  DaemonProcess d({"-c", conf, "--http=127.0.0.1:" + std::to_string(http_port_)});
  connect_peers();
  EXPECT_TRUE(wait_until([&] { return d.err().find("routing on without it") != std::string::npos; })) << d.err();
  EXPECT_TRUE(d.running());
}

// A FIFO named where a certificate, a CA or a client certificate should be (a mistake, or a
// hostile file): each is an error at start naming the key and the file, never a hang; the router
// routes, and SIGTERM stops it at once.
TEST_F(Http, FifosForCertificatesAreErrorsAtStartNotHangs) {
  const fs::path fifo = scratch_ / "cert.pem";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string conf =
      config(token_keys() + "Certificate = " + fifo.string() + "\n",
             "[NatsEndpoint ca]\nUrl = nats://127.0.0.1:1\nCaFile = " + fifo.string() +
                 "\n[NatsEndpoint client]\nUrl = nats://127.0.0.1:1\nCertificateFile = " + fifo.string() +
                 "\nKeyFile = " + fifo.string() + "\n");
  DaemonProcess d({"-c", conf, "--http=127.0.0.1:" + std::to_string(http_port_)});
  connect_peers();
  const std::string not_regular = fifo.string() + ": is not a regular file";
  for (const std::string key : {"Certificate: ", "CaFile: ", "CertificateFile: "}) {
    EXPECT_TRUE(wait_until([&] { return d.err().find(key + not_regular) != std::string::npos; })) << key << d.err();
  }
  const auto start = std::chrono::steady_clock::now();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(2000ms), 0) << d.err();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(Http, SighupReloadsAddedRemovedAndChangedEndpointsOnly) {
  const uint16_t b_port = free_udp_port(), c_port = free_udp_port(), c_new = free_udp_port(), d_port = free_udp_port();
  auto section = [](const std::string& name, uint16_t port) {
    return "[UdpEndpoint " + name + "]\nMode = Server\nAddress = 127.0.0.1\nPort = " + std::to_string(port) + "\n";
  };
  auto d = start(token_keys(), section("b", b_port) + section("c", c_port));
  connect_peers();
  config(token_keys(), section("c", c_new) + section("d", d_port));  // b gone, c changed, d new
  d->signal(SIGHUP);
  EXPECT_TRUE(wait_until([&] { return d->err().find("reload: 1 added, 1 removed, 1 changed") != std::string::npos; }))
      << d->err();
  const std::string listed = http_request(http_port_, "GET", "/api/v1/endpoints").body;
  EXPECT_EQ(listed.find("\"b\""), std::string::npos) << listed;
  EXPECT_NE(listed.find("\"port\": " + std::to_string(c_new)), std::string::npos) << listed;
  EXPECT_NE(listed.find("\"port\": " + std::to_string(d_port)), std::string::npos) << listed;
  EXPECT_EQ(d->err().find("vehicle 127.0.0.1:" + std::to_string(vehicle_port_) + ": closed"), std::string::npos)
      << "an unchanged endpoint is not touched";
  // The vehicle's link was not touched: its frames still reach the ground station.
  gcs_.clear();
  vehicle_.send_to(vehicle_port_, attitude(1, 1, 7));
  EXPECT_TRUE(wait_until([&] { return gcs_.received().count_msgid(msg::Attitude::kId) == 1; }));
  // A file with an error: one error line, nothing changes.
  scratch_.write("main.conf", "[UdpEndpoint broken]\nPort = many\n");
  d->signal(SIGHUP);
  EXPECT_TRUE(wait_until([&] { return d->err().find("nothing changed") != std::string::npos; })) << d->err();
  EXPECT_EQ(http_request(http_port_, "GET", "/api/v1/endpoints").body, listed);
}

// A real Prometheus server scrapes the router once a second; its query API shows the counter
// moving as the traffic did.
TEST_F(Http, PrometheusScrapesTheRouter) {
  const std::string prometheus = found_program("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << "prometheus not installed (Debian's prometheus package)";
  auto d = start(token_keys());
  connect_peers();
  const uint16_t prom_port = free_tcp_port();
  const fs::path prom_conf =
      scratch_.write("prometheus.yml",
                     "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: mavswitch\n    static_configs:\n"
                     "      - targets: ['127.0.0.1:" +
                         std::to_string(http_port_) + "']\n");
  DaemonProcess prom(DaemonProcess::Program{prometheus},
                     {"--config.file=" + prom_conf.string(), "--storage.tsdb.path=" + (scratch_ / "tsdb").string(),
                      "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)});
  const std::string query = "/api/v1/query?query=mavswitch_link_received_frames_total%7Bendpoint%3D%22vehicle%22%7D";
  auto scraped = [&]() -> double {
    static const std::regex value(R"re("value":\[[0-9.]+,"([0-9.]+)"\])re");
    std::smatch m;
    const std::string body = http_request(prom_port, "GET", query).body;
    return std::regex_search(body, m, value) ? std::stod(m[1]) : -1;
  };
  double first = -1;
  ASSERT_TRUE(wait_until([&] { return (first = scraped()) >= 1; }, 30000ms)) << prom.err();
  for (uint32_t i = 0; i < 200; ++i) vehicle_.send_to(vehicle_port_, attitude(1, 1, i));
  EXPECT_TRUE(wait_until([&] { return scraped() >= first + 200; }, 15000ms)) << "Prometheus saw the counter move";
}

// `mavswitch status` and `mavswitch endpoints` against the running daemon.
TEST_F(Http, TheToolShowsLinksAndSystemsAndChangesEndpoints) {
  auto d = start(token_keys());
  connect_peers();
  const std::string tool = tool_path() + " ", url = " --url http://127.0.0.1:" + std::to_string(http_port_);
  std::string out;
  ASSERT_EQ(run_command(tool + "status --interval 0.2" + url + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("vehicle 127.0.0.1:"), std::string::npos) << out;
  EXPECT_NE(out.find("RX f/s"), std::string::npos) << out;
  EXPECT_NE(out.find("quadrotor        ArduPilot  base mode 0"), std::string::npos)
      << "the vehicle's HEARTBEAT: " << out;
  EXPECT_NE(out.find("gcs 127.0.0.1:"), std::string::npos) << "the ground station, heard on gcs: " << out;
  ASSERT_EQ(run_command(tool + "status --json" + url + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("\"system\": 1"), std::string::npos) << out;

  const uint16_t port = free_udp_port();
  const std::string add = "endpoints add UdpEndpoint extra Mode=Server Address=127.0.0.1 Port=" + std::to_string(port);
  EXPECT_NE(run_command(tool + add + url + " 2>&1", &out), 0) << "no token: refused";
  EXPECT_NE(out.find("bearer token"), std::string::npos) << out;
  ASSERT_EQ(run_command(tool + add + url + " --token-file " + token_file_ + " 2>&1", &out), 0) << out;
  ASSERT_EQ(run_command(tool + "endpoints list" + url + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("udp-server extra 127.0.0.1:" + std::to_string(port)), std::string::npos) << out;
  ASSERT_EQ(
      run_command("MAVSWITCH_TOKEN_FILE=" + token_file_ + " " + tool + "endpoints remove extra" + url + " 2>&1", &out),
      0)
      << out;
  EXPECT_NE(run_command(tool + "endpoints remove extra" + url + " --token-file " + token_file_ + " 2>&1", &out), 0);
  EXPECT_NE(out.find("no open endpoint named 'extra'"), std::string::npos) << out;
  EXPECT_NE(run_command(tool + "status --url http://127.0.0.1:1 2>&1", &out), 0);
  EXPECT_NE(out.find("cannot reach the router"), std::string::npos) << out;
}

// Malformed HTTP and huge headers: a 4xx (or the connection closed), never a crash, and the
// router and its HTTP server go on.
TEST_F(Http, MalformedRequestsAndHugeHeadersChangeNothing) {
  auto d = start(token_keys());
  connect_peers();
  const std::string before = http_request(http_port_, "GET", "/api/v1/endpoints").body;
  auto status_of = [](const std::string& reply) { return reply.size() > 12 ? std::atoi(reply.c_str() + 9) : 0; };
  const std::string garbage = raw_exchange(http_port_, "\x16\x03\x01 this is not HTTP\r\n\r\n", 2);
  EXPECT_TRUE(garbage.empty() || (status_of(garbage) >= 400 && status_of(garbage) < 500)) << garbage;
  const std::string no_version = raw_exchange(http_port_, "GET /metrics\r\n\r\n", 2);
  // A request line without a version is read as HTTP/1.0 or refused; either way the same rules.
  EXPECT_TRUE(no_version.empty() || status_of(no_version) >= 400 || no_version.starts_with("HTTP/1.0 200"))
      << no_version;
  const std::string huge = raw_exchange(
      http_port_, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(200 * 1024, 'a') + "\r\n\r\n", 2);
  EXPECT_TRUE(huge.empty() || (status_of(huge) >= 400 && status_of(huge) < 500)) << huge.substr(0, 200);
  const std::string many = [] {
    std::string r = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (int i = 0; i < 500; ++i) r += "X-H" + std::to_string(i) + ": v\r\n";
    return r + "\r\n";
  }();
  const std::string many_reply = raw_exchange(http_port_, many, 2);
  EXPECT_TRUE(many_reply.empty() || status_of(many_reply) >= 400 || status_of(many_reply) == 200);
  const std::string lying_length =
      raw_exchange(http_port_,
                   "POST /api/v1/endpoints HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
                       std::string(kToken) + "\r\nContent-Length: 999999999\r\n\r\n[UdpEndpoint z]\n",
                   2);
  EXPECT_EQ(status_of(lying_length), 413) << lying_length.substr(0, 200);
  EXPECT_EQ(http_request(http_port_, "GET", "/api/v1/endpoints").body, before) << "nothing changed";
  EXPECT_EQ(http_request(http_port_, "GET", "/metrics").status, 200) << "the server goes on";
  gcs_.clear();
  vehicle_.send_to(vehicle_port_, attitude(1, 1, 3));
  EXPECT_TRUE(wait_until([&] { return gcs_.received().count_msgid(msg::Attitude::kId) == 1; })) << "and the router";
  EXPECT_TRUE(d->running());
}

// The TCP ports a process listens on, from /proc: its sockets' inodes, found in /proc/net/tcp.
std::vector<uint16_t> listening_ports(pid_t pid) {
  std::set<std::string> inodes;
  for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    std::error_code e;
    const std::string target = fs::read_symlink(fd.path(), e).string();
    if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::vector<uint16_t> ports;
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  std::getline(tcp, line);  // the header
  while (std::getline(tcp, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
    if (state == "0A" && inodes.count(inode) != 0)
      ports.push_back(static_cast<uint16_t>(std::stoul(local.substr(local.find(':') + 1), nullptr, 16)));
  }
  return ports;
}

// A Certificate: HTTPS only (libwebsockets on OpenSSL). openssl's client and the tool (libcurl)
// check the certificate and read through it; the tool refuses a certificate it cannot check;
// plain HTTP gets nothing, and the daemon listens on no other port.
TEST_F(Http, ACertificateMeansHttpsOnly) {
  const std::string openssl = found_program("openssl");
  if (openssl.empty()) GTEST_SKIP() << "openssl (Debian's openssl package) not installed";
  const std::string pem = (scratch_ / "server.pem").string(), cert = (scratch_ / "cert.pem").string();
  std::string out;
  ASSERT_EQ(run_command(openssl +
                            " req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext "
                            "subjectAltName=IP:127.0.0.1 -keyout " +
                            (scratch_ / "key.pem").string() + " -out " + cert + " 2>&1 && cat " + cert + " " +
                            (scratch_ / "key.pem").string() + " > " + pem,
                        &out),
            0)
      << out;
  const std::string conf = config(token_keys() + "Certificate = " + pem + "\n");
  DaemonProcess d({"-c", conf, "--http=127.0.0.1:" + std::to_string(http_port_)});
  connect_peers();
  const std::string url = "https://127.0.0.1:" + std::to_string(http_port_);
  ASSERT_TRUE(wait_until([&] { return d.err().find("listening on " + url) != std::string::npos; })) << d.err();
  EXPECT_EQ(http_request(http_port_, "GET", "/metrics").status, 0) << "never plain HTTP";

  const std::string get = "printf 'GET /metrics HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n' | " +
                          openssl + " s_client -quiet -verify_return_error -CAfile " + cert +
                          " -connect 127.0.0.1:" + std::to_string(http_port_) + " 2>&1";
  ASSERT_EQ(run_command(get, &out), 0) << out;
  EXPECT_NE(out.find("mavswitch_link_received_frames_total"), std::string::npos) << out;

  const std::string tool = tool_path() + " ", where = " --url " + url + " --ca-file " + cert;
  ASSERT_EQ(run_command(tool + "status --json" + where + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("\"system\": 1"), std::string::npos) << out;
  const uint16_t port = free_udp_port();
  const std::string add = "endpoints add UdpEndpoint extra Mode=Server Address=127.0.0.1 Port=" + std::to_string(port);
  ASSERT_EQ(run_command(tool + add + where + " --token-file " + token_file_ + " 2>&1", &out), 0) << out;
  ASSERT_EQ(run_command(tool + "endpoints list" + where + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("udp-server extra 127.0.0.1:" + std::to_string(port)), std::string::npos) << out;
  // The system's authorities never signed this certificate: no request goes out.
  EXPECT_NE(run_command(tool + "status --url " + url + " 2>&1", &out), 0);
  EXPECT_NE(out.find("certificate"), std::string::npos) << out;

  // One TLS server: no private plain port behind it.
  for (const uint16_t p : listening_ports(d.pid())) EXPECT_EQ(p, http_port_) << "a port besides the HTTPS one";
  EXPECT_TRUE(d.running());
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0) << d.err();
}
