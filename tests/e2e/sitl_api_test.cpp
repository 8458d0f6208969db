// The vehicle data API against a real ArduPilot (ArduCopter SITL, ../shared/sitl): every
// parameter read through GET /v1/vehicles/1/1/parameters, one of each kind set and read back,
// a command ArduPilot accepts and one it does not support answered by name, a command to a
// system that is not there answered 504, and the tree holding ArduPilot's telemetry.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e/daemon_process.hpp"
#include "e2e/free_ports.hpp"
#include "e2e/http_client.hpp"
#include "e2e/sitl_process.hpp"
#include "support/test_support.hpp"

namespace mavswitch::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace std::chrono_literals;

TEST(Sitl, TheVehicleDataApiReadsAndSetsArduPilotsParametersAndCommandsIt) {
  const fs::path shared = shared_dir();
  if (shared.empty() || !fs::exists(shared / "sitl" / "start.sh"))
    GTEST_SKIP() << "../shared/sitl is not here: the end-to-end test against ArduPilot SITL needs it";
  ScratchDir scratch("mavswitch-sitl-api");
  std::ofstream(scratch / "none.parm") << "";
  constexpr int kInstance = 9;
  const uint16_t sitl_port = 5760 + 10 * kInstance;
  Sitl sitl(shared / "sitl" / "start.sh", kInstance, scratch / "run", scratch / "none.parm");
  const uint16_t http = free_tcp_port();
  const fs::path conf = scratch / "main.conf";
  std::ofstream(conf) << "[General]\nTcpServerPort = 0\n[TcpEndpoint sitl]\nAddress = 127.0.0.1\nPort = " << sitl_port
                      << "\n";
  DaemonProcess d({"-c", conf.string(), "--http=127.0.0.1:" + std::to_string(http)});
  ASSERT_TRUE(wait_until(
      [&] { return http_request(http, "GET", "/v1/mavlink/vehicles/1/components/1/messages/HEARTBEAT").status == 200; },
      20'000ms))
      << d.err();
  const Json hb = Json::parse(http_request(http, "GET", "/v1/mavlink/vehicles/1/components/1/messages/HEARTBEAT").body);
  EXPECT_EQ(hb["message"]["mavtype"]["type"], "MAV_TYPE_QUADROTOR");
  EXPECT_EQ(hb["message"]["autopilot"]["type"], "MAV_AUTOPILOT_ARDUPILOTMEGA");

  // Every parameter, once; then from what the router keeps.
  const auto started = std::chrono::steady_clock::now();
  const HttpReply all = http_request(http, "GET", "/v1/vehicles/1/1/parameters", "", "", 50);
  const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(all.status, 200) << all.body << d.err();
  const Json params = Json::parse(all.body);
  EXPECT_TRUE(params["complete"].get<bool>()) << params["missing"];
  EXPECT_GT(params["count"].get<int>(), 1000);
  EXPECT_EQ(params["parameters"].size(), params["count"].get<size_t>());
  std::cout << "[ info ] " << params["count"] << " parameters in " << took << " s\n";
  ASSERT_TRUE(params["parameters"].contains("WPNAV_SPEED"));
  EXPECT_EQ(params["parameters"]["WPNAV_SPEED"]["type"], "MAV_PARAM_TYPE_REAL32");
  EXPECT_EQ(http_request(http, "GET", "/v1/vehicles/1/1/parameters").status, 200) << "the second read is the cache";

  // A float and an integer parameter set, and read back by name.
  const HttpReply set = http_request(http, "PUT", "/v1/vehicles/1/1/parameters/WPNAV_SPEED", R"({"value": 725.5})");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_FLOAT_EQ(Json::parse(set.body)["value"].get<float>(), 725.5f);
  const HttpReply read = http_request(http, "GET", "/v1/vehicles/1/1/parameters/WPNAV_SPEED");
  ASSERT_EQ(read.status, 200) << read.body;
  EXPECT_FLOAT_EQ(Json::parse(read.body)["value"].get<float>(), 725.5f);
  const std::string int_name = params["parameters"].contains("RTL_ALT") ? "RTL_ALT" : "FENCE_ENABLE";
  const HttpReply set_int = http_request(http, "PUT", "/v1/vehicles/1/1/parameters/" + int_name, "1234");
  ASSERT_EQ(set_int.status, 200) << set_int.body;
  EXPECT_EQ(Json::parse(set_int.body)["value"], 1234) << set_int.body;
  EXPECT_NE(Json::parse(set_int.body)["type"], "MAV_PARAM_TYPE_REAL32");
  EXPECT_EQ(http_request(http, "GET", "/v1/vehicles/1/1/parameters/NO_SUCH_PARAM").status, 504);

  // Commands: one ArduPilot accepts, one it does not know, one to a system that is not there.
  const HttpReply accepted =
      http_request(http, "POST", "/v1/vehicles/1/1/command", R"({"command":"MAV_CMD_REQUEST_MESSAGE","params":[148]})");
  ASSERT_EQ(accepted.status, 200) << accepted.body;
  EXPECT_EQ(Json::parse(accepted.body)["result"], "MAV_RESULT_ACCEPTED");
  const HttpReply unsupported = http_request(http, "POST", "/v1/vehicles/1/1/command", R"({"command":31010})");
  ASSERT_EQ(unsupported.status, 200) << unsupported.body;
  EXPECT_EQ(Json::parse(unsupported.body)["result"], "MAV_RESULT_UNSUPPORTED");
  const auto asked = std::chrono::steady_clock::now();
  const HttpReply silent = http_request(http, "POST", "/v1/vehicles/42/1/command", R"({"command":400,"params":[1]})");
  EXPECT_EQ(silent.status, 504) << silent.body;
  EXPECT_GE(std::chrono::steady_clock::now() - asked, 4s) << "five attempts a second apart";
  EXPECT_EQ(Json::parse(silent.body)["error"],
            "no COMMAND_ACK from 42/1 for MAV_CMD_COMPONENT_ARM_DISARM after 5 attempts");
}

}  // namespace
}  // namespace mavswitch::test
