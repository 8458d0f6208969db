// A 500-item mission written to ArduPilot SITL and read back, `rounds` times, through a TCP hop
// that loses no frames and then one that loses 10% each way (tests/e2e/lossy_relay): each round's
// write and read time, whether the items came back equal, and the frames the hop lost.
//   mission_loss [rounds=20] [instance=19, and the next]        (bench/run missions)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <vector>

#include "e2e/sitl_lossy_site.hpp"

namespace {

using Json = nlohmann::json;
using mavswitch::test::http_request;
using mavswitch::test::SitlLossySite;

constexpr int kItems = 500;

Json plan() {
  Json items = Json::array();
  items.push_back({{"type", "SimpleItem"}, {"command", 22}, {"frame", 3}, {"params", {0, 0, 0, 0, 0, 0, 15}}});
  for (int k = 1; k < kItems; ++k)
    items.push_back({{"type", "SimpleItem"},
                     {"command", 16},
                     {"frame", 3},
                     {"params", {k % 3, 0, 0, 0, -35.3632 + 0.00001 * k, 149.1652 + 0.0001 * (k % 10), 20 + k % 7}}});
  return {{"fileType", "Plan"},
          {"version", 1},
          {"groundStation", "QGroundControl"},
          {"mission",
           {{"version", 2}, {"firmwareType", 3}, {"plannedHomePosition", {-35.36, 149.16, 584}}, {"items", items}}},
          {"geoFence", {{"version", 2}, {"circles", Json::array()}, {"polygons", Json::array()}}},
          {"rallyPoints", {{"version", 2}, {"points", Json::array()}}}};
}

bool same(const Json& sent, const Json& got) {
  if (got.size() != sent.size()) return false;
  for (size_t k = 0; k < sent.size(); ++k) {
    if (got[k]["command"] != sent[k]["command"] || got[k]["frame"] != sent[k]["frame"]) return false;
    for (size_t p = 0; p < 7; ++p)
      if (std::abs(got[k]["params"][p].get<double>() - sent[k]["params"][p].get<double>()) > 1e-6) return false;
  }
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One site: `rounds` writes and reads; false if the vehicle was never heard.
bool run(double loss, int rounds, int instance) {
  SitlLossySite site("mission-bench", instance, loss, 20261206);
  if (!site.heard()) {
    std::fprintf(stderr, "the vehicle was not heard through the hop\n");
    return false;
  }
  const Json sent = plan();
  const std::string body = sent.dump();
  std::vector<double> writes, reads;
  int equal = 0;
  for (int round = 0; round < rounds; ++round) {
    auto start = std::chrono::steady_clock::now();
    mavswitch::test::HttpReply put;
    // Just after boot ArduPilot answers NO_SPACE until its storage is ready: that round starts again.
    for (int wait = 0; wait < 60; ++wait) {
      start = std::chrono::steady_clock::now();
      put = http_request(site.http, "PUT", "/v1/vehicles/1/1/mission", body, site.token, 300);
      if (put.body.find("MAV_MISSION_NO_SPACE") == std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    writes.push_back(seconds_since(start));
    start = std::chrono::steady_clock::now();
    const auto get = http_request(site.http, "GET", "/v1/vehicles/1/1/mission", "", "", 300);
    reads.push_back(seconds_since(start));
    const bool accepted = put.status == 200 && put.body.find("MAV_MISSION_ACCEPTED") != std::string::npos;
    const bool back = get.status == 200 && same(sent["mission"]["items"], Json::parse(get.body)["mission"]["items"]);
    equal += accepted && back ? 1 : 0;
    std::printf("  loss %.0f%% round %2d: written in %5.2f s, read in %5.2f s, %s\n", loss * 100, round + 1,
                writes.back(), reads.back(),
                accepted && back ? "equal" : ("NOT equal: " + put.body.substr(0, 200)).c_str());
    std::fflush(stdout);
  }
  std::printf("loss %.0f%%: %d/%d equal; write median %.2f s, read median %.2f s; the hop lost %llu of %llu frames\n",
              loss * 100, equal, rounds, median(writes), median(reads),
              static_cast<unsigned long long>(site.hop->dropped()),
              static_cast<unsigned long long>(site.hop->dropped() + site.hop->passed()));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  const int instance = argc > 2 ? std::atoi(argv[2]) : 19;
  if (!SitlLossySite::available()) {
    std::fprintf(stderr, "%s\n", SitlLossySite::kSkip);
    return 2;
  }
  std::printf("a %d-item mission written and read back through a TCP hop, %d rounds each\n", kItems, rounds);
  // The lossy site on the next instance: a SITL started again at once on the same one can hang at boot.
  return run(0.0, rounds, instance) && run(0.10, rounds, instance + 1) ? 0 : 1;
}
