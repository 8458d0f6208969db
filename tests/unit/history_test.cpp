// The window's history: each link's seconds and each vehicle's track, and their bounds.
#include "window/history.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace mavswitch::window {
namespace {

TEST(History, ALinksSecondsAreTheDifferencesOfItsTotals) {
  window::History h;
  h.links({{"udp a", 10, 5, 0, 0}}, 1000);  // new: nothing yet
  EXPECT_TRUE(h.link_history().at("udp a").seconds.empty());
  h.links({{"udp a", 110, 55, 3, 7}}, 2000);
  h.links({{"udp a", 160, 55, 3, 9}}, 3000);
  const auto& s = h.link_history().at("udp a").seconds;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].rx, 100u);
  EXPECT_EQ(s[0].tx, 50u);
  EXPECT_EQ(s[0].lost, 3u);
  EXPECT_EQ(s[0].dropped, 7u);
  EXPECT_EQ(s[1].rx, 50u);
  EXPECT_EQ(s[1].tx, 0u);
  EXPECT_EQ(s[1].dropped, 2u);
  // A link that came up again under the same name (its counters from 0) starts from its new totals.
  h.links({{"udp a", 4, 0, 0, 0}}, 4000);
  EXPECT_EQ(h.link_history().at("udp a").seconds.back().rx, 4u);
  // A link gone is forgotten.
  h.links({}, 5000);
  EXPECT_TRUE(h.link_history().empty());
}

TEST(History, KeepsFifteenMinutesOfAtMostSixtyFourLinks) {
  window::History h;
  std::vector<window::History::LinkTotals> up;
  for (int i = 0; i < 100; ++i) up.push_back({"link " + std::to_string(i), 0, 0, 0, 0});
  for (uint64_t t = 0; t < window::History::kSeconds + 100; ++t) {
    for (auto& l : up) l.rx += 10;
    h.links(up, int64_t(t) * 1000);
  }
  EXPECT_EQ(h.link_history().size(), window::History::kMaxLinks);
  for (const auto& [name, link] : h.link_history()) {
    EXPECT_EQ(link.seconds.size(), window::History::kSeconds) << name;
    EXPECT_EQ(link.seconds.back().rx, 10u);
  }
}

TEST(History, ATrackKeepsAPointASecondForFifteenMinutes) {
  window::History h;
  for (int64_t ms = 0; ms < 2000 * 1000; ms += 200) h.position(11, {ms, int32_t(ms), -int32_t(ms), 5000});
  const auto& track = h.tracks().at(11);
  EXPECT_EQ(track.size(), window::History::kSeconds);
  for (size_t i = 1; i < track.size(); ++i) EXPECT_EQ(track[i].unix_ms - track[i - 1].unix_ms, 1000);
  EXPECT_EQ(track.back().unix_ms, 1999 * 1000) << "the newest kept";
  for (int s = 0; s < 300; ++s) h.position(uint8_t(s), {1, 0, 0, 0});
  EXPECT_EQ(h.tracks().size(), 256u) << "one per system at most";
}

TEST(History, TheDocumentNamesVehiclesAndGivesDegreesAndMetres) {
  window::History h;
  h.links({{"udp a", 0, 0, 0, 0}}, 1000);
  h.links({{"udp a", 20, 1, 0, 0}}, 2000);
  h.position(12, {5000, 473977418, 85455939, 12345});
  const auto j = nlohmann::json::parse(h.json({{12, "copter-2"}}, 6000));
  EXPECT_EQ(j["interval_ms"], 1000);
  EXPECT_EQ(j["links"][0]["name"], "udp a");
  EXPECT_EQ(j["links"][0]["rx_frames"], nlohmann::json::array({20}));
  EXPECT_EQ(j["links"][0]["unix_ms"], 2000);
  EXPECT_EQ(j["tracks"][0]["vehicle"], "copter-2");
  EXPECT_NEAR(j["tracks"][0]["points"][0][1].get<double>(), 47.3977418, 1e-9);
  EXPECT_NEAR(j["tracks"][0]["points"][0][3].get<double>(), 12.345, 1e-9);
}

}  // namespace
}  // namespace mavswitch::window
