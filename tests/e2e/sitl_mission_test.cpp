// Missions over HTTP against ArduPilot SITL, through a TCP hop that loses 10% of frames each way:
// a 100-item mission, a fence and rally points written as a .plan and read back equal; the
// mission as QGC WPL 110; the tool's get and put; a list cleared.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e/sitl_lossy_site.hpp"

namespace mavswitch::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace std::chrono_literals;

std::string read_text(const fs::path& path) {
  const auto bytes = read_bytes(path);
  return {bytes.begin(), bytes.end()};
}

Json hundred_item_plan() {
  Json items = Json::array();
  items.push_back({{"type", "SimpleItem"},
                   {"command", 22},
                   {"frame", 3},
                   {"autoContinue", true},
                   {"params", {0, 0, 0, 0, 0, 0, 15}}});  // NAV_TAKEOFF
  for (int k = 1; k < 100; ++k)
    items.push_back({{"type", "SimpleItem"},
                     {"command", 16},
                     {"frame", 3},
                     {"autoContinue", true},
                     {"params", {k % 3, 0, 0, 0, -35.3632 + 0.0001 * k, 149.1652 + 0.0001 * (k % 10), 20 + k % 7}}});
  return {{"fileType", "Plan"},
          {"version", 1},
          {"groundStation", "QGroundControl"},
          {"mission",
           {{"version", 2},
            {"firmwareType", 3},
            {"vehicleType", 2},
            {"cruiseSpeed", 15},
            {"hoverSpeed", 5},
            {"plannedHomePosition", {-35.3632621, 149.1652374, 584}},
            {"items", items}}},
          {"geoFence",
           {{"version", 2},
            {"circles",
             {{{"circle", {{"center", {-35.3632, 149.1652}}, {"radius", 300}}}, {"inclusion", true}, {"version", 1}}}},
            {"polygons",
             {{{"polygon", {{-35.36, 149.16}, {-35.36, 149.17}, {-35.37, 149.17}, {-35.37, 149.16}}},
               {"inclusion", true},
               {"version", 1}}}}}},
          {"rallyPoints", {{"version", 2}, {"points", {{-35.3635, 149.1655, 30}, {-35.364, 149.166, 40}}}}}};
}

// Each item's command, frame and params, to compare (params within float's precision).
void expect_same_items(const Json& sent, const Json& got) {
  ASSERT_EQ(got.size(), sent.size());
  for (size_t k = 0; k < sent.size(); ++k) {
    EXPECT_EQ(got[k]["command"], sent[k]["command"]) << k;
    EXPECT_EQ(got[k]["frame"], sent[k]["frame"]) << k;
    for (size_t p = 0; p < 7; ++p)
      EXPECT_NEAR(got[k]["params"][p].get<double>(), sent[k]["params"][p].get<double>(), 1e-6) << k << " param " << p;
  }
}

TEST(Sitl, AMissionFenceAndRallyPointsGoThroughALossyHopAndComeBackEqual) {
  if (!SitlLossySite::available()) GTEST_SKIP() << SitlLossySite::kSkip;
  SitlLossySite site("mission", 10, 0.10, 20261205);
  ASSERT_TRUE(site.heard()) << site.daemon->err();
  const uint16_t http = site.http;
  const std::string& token = site.token;
  const ScratchDir& scratch = site.scratch;
  LossyRelay& hop = *site.hop;
  DaemonProcess& d = *site.daemon;

  const Json plan = hundred_item_plan();
  auto start = std::chrono::steady_clock::now();
  // Just after boot ArduPilot answers NO_SPACE until its mission storage is ready: asked again.
  HttpReply put;
  ASSERT_TRUE(wait_until(
      [&] {
        start = std::chrono::steady_clock::now();
        put = http_request(http, "PUT", "/v1/vehicles/1/1/mission", plan.dump(), token, 120);
        return put.body.find("MAV_MISSION_NO_SPACE") == std::string::npos;
      },
      60'000ms))
      << put.body;
  const double put_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(put.status, 200) << put.body << d.err();
  const Json accepted = Json::parse(put.body);
  EXPECT_EQ(accepted["lists"]["mission"]["result"], "MAV_MISSION_ACCEPTED");
  EXPECT_EQ(accepted["lists"]["mission"]["items"], 101) << "home, then the hundred";
  EXPECT_EQ(accepted["lists"]["fence"]["result"], "MAV_MISSION_ACCEPTED");
  EXPECT_EQ(accepted["lists"]["rally"]["result"], "MAV_MISSION_ACCEPTED");
  start = std::chrono::steady_clock::now();
  const HttpReply get = http_request(http, "GET", "/v1/vehicles/1/1/mission", "", "", 120);
  const double get_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(get.status, 200) << get.body;
  const Json back = Json::parse(get.body);
  expect_same_items(plan["mission"]["items"], back["mission"]["items"]);
  EXPECT_EQ(back["mission"]["firmwareType"], 3);
  EXPECT_EQ(back["geoFence"]["polygons"][0]["polygon"].size(), 4u) << back["geoFence"];
  EXPECT_EQ(back["geoFence"]["circles"][0]["circle"]["radius"], 300.0) << back["geoFence"];
  EXPECT_EQ(back["rallyPoints"]["points"], plan["rallyPoints"]["points"]);
  std::cout << "[ figures  ] through 10% loss each way (" << hop.dropped() << " frames lost of "
            << hop.dropped() + hop.passed() << "): mission, fence and rally written in " << put_s << " s, read in "
            << get_s << " s\n";

  // The same mission as WPL text (the WPL parser's round trip is a unit test's: each write through
  // this hop takes about 25 s).
  const HttpReply wpl = http_request(http, "GET", "/v1/vehicles/1/1/mission?format=wpl", "", "", 120);
  ASSERT_EQ(wpl.status, 200) << wpl.body;
  EXPECT_EQ(wpl.body.rfind("QGC WPL 110\n", 0), 0u) << wpl.body.substr(0, 100);
  EXPECT_EQ(count_of(wpl.body, "\n"), 1u + 101u + 1u) << "the header, 101 lines, the answer's newline";

  // The tool: the mission to a file and back, as the API gives it.
  const std::string tool = tool_path() + " mission ", url = " --url http://127.0.0.1:" + std::to_string(http);
  std::string out;
  ASSERT_EQ(run_command(tool + "get " + (scratch / "got.plan").string() + url + " 2>&1", &out), 0) << out;
  // (Its home, item 0, moves with ArduPilot's GPS fix: the items are what stay.)
  expect_same_items(plan["mission"]["items"], Json::parse(read_text(scratch / "got.plan"))["mission"]["items"]);
  EXPECT_NE(run_command(tool + "put " + (scratch / "got.plan").string() + url + " 2>&1", &out), 0) << "no token";
  ASSERT_EQ(run_command(tool + "put " + (scratch / "got.plan").string() + url + " --token-file " +
                            (scratch / "token").string() + " 2>&1",
                        &out),
            0)
      << out;
  EXPECT_NE(out.find("MAV_MISSION_ACCEPTED"), std::string::npos) << out;

  // Cleared: the rally points go, the rest stays.
  ASSERT_EQ(http_request(http, "DELETE", "/v1/vehicles/1/1/mission?type=rally", "", token, 60).status, 200);
  const Json after = Json::parse(http_request(http, "GET", "/v1/vehicles/1/1/mission", "", "", 120).body);
  EXPECT_TRUE(after["rallyPoints"]["points"].empty());
  EXPECT_EQ(after["mission"]["items"].size(), 100u);
  // Without the token nothing changes; a file that is not a plan is a 400.
  EXPECT_EQ(http_request(http, "DELETE", "/v1/vehicles/1/1/mission").status, 401);
  EXPECT_EQ(
      http_request(http, "PUT", "/v1/vehicles/1/1/mission", "{\"fileType\": \"Plan\", \"mission\": 3}", token).status,
      400);
}

}  // namespace
}  // namespace mavswitch::test

namespace mavswitch::test {
namespace {

// Parameters saved as Mission Planner's file and QGroundControl's, two changed in the file and
// loaded, through the same lossy hop: the two take, the rest are unchanged, a name the vehicle
// has not fails; read back, the vehicle holds the new values.
TEST(Sitl, AParameterFileIsSavedChangedAndLoadedThroughALossyHop) {
  if (!SitlLossySite::available()) GTEST_SKIP() << SitlLossySite::kSkip;
  SitlLossySite site("params", 6, 0.10, 7);
  ASSERT_TRUE(site.heard()) << site.daemon->err();
  const uint16_t http = site.http;
  const std::string& token = site.token;
  const ScratchDir& scratch = site.scratch;
  LossyRelay& hop = *site.hop;
  const HttpReply saved = http_request(http, "GET", "/v1/vehicles/1/1/parameters?format=param", "", "", 120);
  ASSERT_EQ(saved.status, 200) << saved.body;
  EXPECT_GT(count_of(saved.body, "\n"), 1000u);
  EXPECT_NE(saved.body.find("\nWPNAV_SPEED,"), std::string::npos) << saved.body.substr(0, 200);
  const HttpReply qgc = http_request(http, "GET", "/v1/vehicles/1/1/parameters?format=qgc", "", "", 120);
  ASSERT_EQ(qgc.status, 200);
  EXPECT_EQ(qgc.body.rfind("# Onboard parameters for Vehicle 1\n", 0), 0u);
  EXPECT_NE(qgc.body.find("\n1\t1\tWPNAV_SPEED\t"), std::string::npos);

  // Two changed, one the vehicle has not.
  std::string file;
  std::istringstream lines(saved.body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("WPNAV_SPEED,", 0) == 0) line = "WPNAV_SPEED,777";
    if (line.rfind("RTL_ALT,", 0) == 0) line = "RTL_ALT,2345";
    file += line + "\n";
  }
  file += "NOT_A_PARAMETER,1\n";
  const HttpReply loaded = http_request(http, "PUT", "/v1/vehicles/1/1/parameters", file, token, 120);
  ASSERT_EQ(loaded.status, 422) << "one failed: " << loaded.body;
  const Json j = Json::parse(loaded.body);
  ASSERT_EQ(j["set"].size(), 2u) << loaded.body;
  EXPECT_EQ(j["failed"].size(), 1u);
  EXPECT_EQ(j["failed"][0]["name"], "NOT_A_PARAMETER");
  EXPECT_GT(j["unchanged"].get<int>(), 1000);
  for (const auto& [name, value] : {std::pair{"WPNAV_SPEED", 777.0}, {"RTL_ALT", 2345.0}}) {
    const HttpReply read = http_request(http, "GET", std::string("/v1/vehicles/1/1/parameters/") + name, "", "", 30);
    ASSERT_EQ(read.status, 200) << read.body;
    EXPECT_EQ(Json::parse(read.body)["value"].get<double>(), value) << name;
  }
  // The tool saves the same file the API gives.
  std::string out;
  ASSERT_EQ(run_command(tool_path() + " params save " + (scratch / "saved.param").string() +
                            " --url http://127.0.0.1:" + std::to_string(http) + " 2>&1",
                        &out),
            0)
      << out;
  EXPECT_EQ(count_of(read_text(scratch / "saved.param"), "\nWPNAV_SPEED,777\n"), 1u);
  // The same file again: nothing to set.
  const Json again = Json::parse(http_request(http, "PUT", "/v1/vehicles/1/1/parameters", file, token, 120).body);
  EXPECT_TRUE(again["set"].empty()) << again;
  std::cout << "[ figures  ] parameters saved, two changed and loaded through 10% loss each way (" << hop.dropped()
            << " frames lost)\n";
}

}  // namespace
}  // namespace mavswitch::test
