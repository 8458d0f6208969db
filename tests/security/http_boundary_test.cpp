// The HTTP boundary (docs/SECURITY.md): which Host is answered, where a token may travel, one
// answer per request, bounded memory for answers nobody reads, refusals that name no internals.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "base/sanitizers.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/file_transfer_protocol.hpp"
#include "security/daemon_fixture.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
using Clock = std::chrono::steady_clock;

namespace {

// The README's arm example for mavlink2rest's POST /v1/mavlink, with a param1 that tells the
// requests apart.
std::string arm_body(int param1) {
  return R"({"header":{"system_id":255,"component_id":240,"sequence":0},"message":{"type":"COMMAND_LONG","param1":)" +
         std::to_string(param1) +
         R"(,"param2":0,"param3":0,"param4":0,"param5":0,"param6":0,"param7":0,)"
         R"("command":{"type":"MAV_CMD_COMPONENT_ARM_DISARM"},"target_system":1,"target_component":1,"confirmation":0}})";
}

std::string post(const std::string& path, const std::string& host, const std::string& origin, const std::string& body,
                 const std::string& extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nOrigin: " + origin +
         "\r\nContent-Type: text/plain\r\nConnection: close\r\n" + extra +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// The param1 of each COMMAND_LONG 400 the vehicle got.
std::vector<int> arms_heard(Peer& vehicle) {
  std::vector<int> out;
  for (const auto& f : vehicle.received().frames) {
    const protocol::FrameView v = view_of(f);
    if (v.msgid() != msg::CommandLong::kId) continue;
    const auto c = msg::CommandLong::decode(v.payload());
    if (c.command == 400) out.push_back(static_cast<int>(c.param1));
  }
  return out;
}

}  // namespace

// DNS rebinding: a page on attacker.example made to reach 127.0.0.1 sends its own name in Host
// and, as a same-origin page, an Origin to match. Refused with 421 before anything is read or
// sent: the vehicle hears only the request sent after it with a literal address.
TEST_F(DaemonUnderAttack, a_page_on_a_rebound_name_is_refused_421_and_the_vehicle_hears_nothing) {
  auto d = start();
  connect_peers();
  const std::string host = "attacker.example:" + std::to_string(http_port_);
  const std::string refused = raw_exchange(http_port_, post("/v1/mavlink", host, "http://" + host, arm_body(7)), 5);
  EXPECT_EQ(status_of(refused), 421) << refused;
  EXPECT_EQ(status_of(raw_exchange(http_port_,
                                   "GET /v1/mavlink HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n", 5)),
            421)
      << "reads too";
  const std::string local = "127.0.0.1:" + std::to_string(http_port_);
  EXPECT_EQ(status_of(raw_exchange(http_port_, post("/v1/mavlink", local, "http://" + local, arm_body(9)), 5)), 200);
  ASSERT_TRUE(wait_until([&] { return !arms_heard(vehicle_).empty(); })) << d->err();
  EXPECT_EQ(arms_heard(vehicle_), std::vector<int>{9}) << "only the request that named a literal address";
  EXPECT_NE(d->err().find("refused (421)"), std::string::npos) << d->err();
}

// A name the operator gives (ServerName) is answered, as are loopback names and literal
// addresses; the check is the Host's name, whatever its case and port.
TEST_F(DaemonUnderAttack, a_configured_server_name_and_literal_addresses_are_answered) {
  auto d = start("ServerName = Drone.Example, companion.local\n");
  const auto get = [&](const std::string& host) {
    return status_of(
        raw_exchange(http_port_, "GET /info HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n", 5));
  };
  const std::string port = ":" + std::to_string(http_port_);
  for (const std::string& host :
       std::vector<std::string>{"drone.example" + port, "DRONE.EXAMPLE", "companion.local" + port, "localhost" + port,
                                "127.0.0.1" + port, "[::1]" + port, "192.0.2.7"})
    EXPECT_EQ(get(host), 200) << host;
  for (const std::string& host : std::vector<std::string>{"attacker.example" + port, "drone.example.attacker.example",
                                                          "127.0.0.1.nip.io" + port, "drone.example:port"})
    EXPECT_EQ(get(host), 421) << host;
}

// Content-Length: 0 is one request: one status line, one reload (the project's own CLI sends
// such requests).
TEST_F(DaemonUnderAttack, a_request_with_content_length_zero_gets_one_answer) {
  auto d = start(token_keys());
  const std::string reply = raw_exchange(
      http_port_,
      "POST /api/v1/reload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + std::string(kToken) +
          "\r\nContent-Length: 0\r\n\r\nGET /info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
      5);
  EXPECT_EQ(count_of(reply, "HTTP/1.1 "), 2u) << "the reload's answer, then /info's: " << reply;
  EXPECT_EQ(status_of(reply), 200) << reply;
  ASSERT_TRUE(wait_until([&] { return count_of(d->err(), "reload: ") >= 1; })) << d->err();
  EXPECT_EQ(count_of(d->err(), "reload: "), 1u) << d->err();
}

// A token in a URL ends up in logs and history: it opens a WebSocket upgrade (which a browser
// cannot give a header) and nothing else.
TEST_F(DaemonUnderAttack, a_token_in_the_url_counts_only_for_a_websocket_upgrade) {
  auto d = start(token_keys());
  connect_peers();
  const std::string local = "127.0.0.1:" + std::to_string(http_port_);
  const std::string in_url =
      raw_exchange(http_port_, post("/v1/mavlink?token=" + std::string(kToken), local, "", arm_body(3)), 5);
  EXPECT_EQ(status_of(in_url), 401) << in_url;
  const std::string command = raw_exchange(
      http_port_, post("/v1/vehicles/1/1/command?token=" + std::string(kToken), local, "", R"({"command":400})"), 5);
  EXPECT_EQ(status_of(command), 401) << command;
  const std::string upgrade =
      raw_exchange(http_port_,
                   "GET /v1/ws/mavlink?token=" + std::string(kToken) + " HTTP/1.1\r\nHost: " + local +
                       "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                       "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                   1);
  EXPECT_EQ(status_of(upgrade), 101) << upgrade;
  const std::string with_header = raw_exchange(
      http_port_, post("/v1/mavlink", local, "", arm_body(4), "Authorization: Bearer " + std::string(kToken) + "\r\n"),
      5);
  EXPECT_EQ(status_of(with_header), 200) << with_header;
  ASSERT_TRUE(wait_until([&] { return !arms_heard(vehicle_).empty(); }));
  EXPECT_EQ(arms_heard(vehicle_), std::vector<int>{4});
}

// Values MAVLink cannot carry are refused, not sent as infinity; a bad pointer names no library.
TEST_F(DaemonUnderAttack, values_beyond_float_range_and_bad_pointers_get_a_4xx_that_names_no_internals) {
  auto d = start();
  connect_peers();
  const auto command =
      http_request(http_port_, "POST", "/v1/vehicles/1/1/command", R"({"command":400,"params":[1e39]})");
  EXPECT_EQ(command.status, 400) << command.body;
  const auto parameter =
      http_request(http_port_, "PUT", "/v1/vehicles/1/1/parameters/SYSID_THISMAV", R"({"value":1e39})");
  EXPECT_EQ(parameter.status, 400) << parameter.body;
  const auto from_zero = http_request(http_port_, "POST", "/v1/mavlink",
                                      R"({"header":{"system_id":0,"component_id":1},"message":{"type":"HEARTBEAT"}})");
  EXPECT_EQ(from_zero.status, 400) << "system 0 is broadcast, never a sender: " << from_zero.body;
  const auto pointer = http_request(http_port_, "GET", "/v1/mavlink/vehicles/%FF%FE/x");
  EXPECT_EQ(pointer.status, 404) << pointer.body;
  EXPECT_EQ(pointer.body.find("json"), std::string::npos) << pointer.body;
  EXPECT_EQ(pointer.body.find("exception"), std::string::npos) << pointer.body;
  vehicle_.clear();
  gcs_.send_to(gcs_port_, heartbeat(255, 190));
  EXPECT_TRUE(wait_until([&] { return vehicle_.received().count_msgid(0) > 0; })) << "routing goes on";
  EXPECT_EQ(vehicle_.received().count_msgid(msg::CommandLong::kId), 0u) << "nothing was sent";
}

// A path or a query longer than the server keeps gets an answer (414), never a silent close; the
// server goes on.
TEST_F(DaemonUnderAttack, a_request_too_long_for_the_server_is_answered_414) {
  auto d = start();
  const std::string long_path =
      raw_exchange(http_port_, "GET /" + std::string(10'000, 'a') + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 5);
  EXPECT_EQ(status_of(long_path), 414) << long_path.substr(0, 200);
  const std::string long_filter = raw_exchange(
      http_port_, "GET /v1/ws/mavlink?filter=" + std::string(100'000, 'x') + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 5);
  EXPECT_EQ(status_of(long_filter), 414) << long_filter.substr(0, 200);
  const std::string nul = raw_exchange(http_port_, "GET /v1/mavlink/%00x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 5);
  EXPECT_GT(status_of(nul), 0) << "a NUL in the path is answered too";
  EXPECT_EQ(http_request(http_port_, "GET", "/info").status, 200);
}

// 60 connections ask for a tree of several MB and never read. The answer they share is held
// once and the bytes held for unread answers are capped: the daemon's memory grows by a few MB,
// and /info answers meanwhile.
TEST_F(DaemonUnderAttack, sixty_slow_readers_of_a_full_tree_cost_a_few_megabytes) {
  auto d = start();
  connect_peers();
  // A large tree: 250 systems x 20 components, each with an FTP frame (a 251-byte array, about
  // 1 KB of JSON).
  msg::FileTransferProtocol ftp;
  for (size_t i = 0; i < ftp.payload.size(); ++i) ftp.payload[i] = static_cast<uint8_t>(200 + i % 50);
  for (int sys = 2; sys < 252; ++sys) {
    for (int comp = 1; comp <= 20; ++comp) vehicle_.send_to(vehicle_port_, frame_of(ftp, uint8_t(sys), uint8_t(comp)));
    pace(2ms);  // the router's socket buffer takes each batch
  }
  HttpReply tree;
  ASSERT_TRUE(wait_until(
      [&] {
        tree = http_request(http_port_, "GET", "/v1/mavlink");
        return tree.body.size() > 4'000'000;
      },
      10000ms))
      << tree.body.size();
  const size_t before = rss_of(d->pid());
  std::vector<int> readers;
  for (int i = 0; i < 60; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int small = 4096;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(http_port_);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    const std::string get = "GET /v1/mavlink HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ASSERT_EQ(::send(fd, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
    readers.push_back(fd);
    pace(20ms);  // over a second: some come in the same render, others after it
  }
  size_t most = 0;
  const auto end = Clock::now() + 2s;
  Clock::duration slowest_info{};
  while (Clock::now() < end) {
    most = std::max(most, rss_of(d->pid()));
    const auto asked = Clock::now();
    EXPECT_EQ(http_request(http_port_, "GET", "/info").status, 200);
    slowest_info = std::max(slowest_info, Clock::now() - asked);
  }
  for (const int fd : readers) ::close(fd);
  const double grown_mb = static_cast<double>(most - std::min(most, before)) / 1e6;
  std::cout << "[ figures  ] a " << static_cast<double>(tree.body.size()) / 1e6
            << " MB tree, 60 readers that do not read: RSS +" << grown_mb << " MB; /info at most "
            << std::chrono::duration_cast<std::chrono::milliseconds>(slowest_info).count() << " ms\n";
#if MAVSWITCH_SANITIZED
  constexpr double kBoundMb = 96;  // ThreadSanitizer's shadow memory on top
  constexpr auto kInfoBound = 3000ms;
#else
  constexpr double kBoundMb = 24;
  constexpr auto kInfoBound = 1000ms;
#endif
  // AddressSanitizer's quarantine keeps what is freed (up to 256 MB): no bound says anything there.
  if (!MAVSWITCH_ADDRESS_SANITIZER) {
    EXPECT_LT(grown_mb, kBoundMb) << "the held-answer cap (8 MB) and one render, not 60 copies";
  }
  EXPECT_LT(slowest_info, kInfoBound);
  EXPECT_TRUE(d->running());
}
