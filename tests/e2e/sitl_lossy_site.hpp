// ArduPilot SITL behind a TCP hop that loses a share of frames each way, and mavswitchd reaching
// it through the hop with its HTTP window on and a token: the site of the vehicle-services tests
// (missions, parameter files, files). Construct it after checking `available()`.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "e2e/daemon_process.hpp"
#include "e2e/free_ports.hpp"
#include "e2e/http_client.hpp"
#include "e2e/lossy_relay.hpp"
#include "e2e/peers.hpp"
#include "e2e/sitl_process.hpp"
#include "support/test_support.hpp"

namespace mavswitch::test {

struct SitlLossySite {
  static bool available() {
    const std::filesystem::path shared = shared_dir();
    return !shared.empty() && std::filesystem::exists(shared / "sitl" / "start.sh");
  }
  static constexpr const char* kSkip =
      "../shared/sitl is not here: the end-to-end test against ArduPilot SITL needs it";

  // `parameters`: lines of a parameter file ArduPilot starts from (its defaults for the rest).
  SitlLossySite(const std::string& name, int instance, double loss, uint32_t seed, const std::string& parameters = "")
      : scratch("mavswitch-sitl-" + name), token(name + "-test-token-0123456789"), http(free_tcp_port()) {
    std::ofstream(scratch / "site.parm") << parameters;
    sitl = std::make_unique<Sitl>(shared_dir() / "sitl" / "start.sh", instance, scratch / "run", scratch / "site.parm");
    hop = std::make_unique<LossyRelay>(5760 + 10 * instance, loss, seed);
    std::ofstream(scratch / "token") << token << "\n";
    std::filesystem::permissions(scratch / "token",
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::replace);
    std::ofstream(scratch / "main.conf")
        << "[General]\nTcpServerPort = 0\n[TcpEndpoint sitl]\nAddress = 127.0.0.1\nPort = " << hop->port()
        << "\n[Http]\nTokenFile = " << (scratch / "token").string() << "\n";
    daemon = std::make_unique<DaemonProcess>(
        std::vector<std::string>{"-c", (scratch / "main.conf").string(), "--http=127.0.0.1:" + std::to_string(http)});
  }
  // The vehicle's HEARTBEAT came through the hop.
  bool heard() const {
    return wait_until(
        [&] {
          return http_request(http, "GET", "/v1/mavlink/vehicles/1/components/1/messages/HEARTBEAT").status == 200;
        },
        std::chrono::milliseconds(30'000));
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(http); }

  ScratchDir scratch;
  std::string token;
  uint16_t http;
  std::unique_ptr<Sitl> sitl;
  std::unique_ptr<LossyRelay> hop;
  std::unique_ptr<DaemonProcess> daemon;
};

}  // namespace mavswitch::test
