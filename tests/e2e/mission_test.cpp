// The transaction engine and the mission protocol against an in-process vehicle on a running
// router: lists written and read back equal, through a hop that loses 10% of frames each way;
// one transfer per vehicle at a time; silence, and a vehicle that goes, end a transaction.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <iostream>

#include "e2e/fake_mission_vehicle.hpp"
#include "e2e/peers.hpp"
#include "e2e/router_fixture.hpp"
#include "library/transactions.hpp"
#include "services/mission_exchange.hpp"
#include "services/mission_plan.hpp"

namespace mavswitch::test {
namespace {

using services::MissionExchange;
using services::MissionItem;

using namespace std::chrono_literals;

std::vector<MissionItem> survey(size_t n, int salt) {
  std::vector<MissionItem> items;
  for (size_t k = 0; k < n; ++k) {
    MissionItem i;
    i.command = k % 10 == 0 ? 178 : 16;  // DO_CHANGE_SPEED now and then, else NAV_WAYPOINT
    i.frame = 3;                         // GLOBAL_RELATIVE_ALT
    i.params = {float(k % 3), 0, 0, float(salt)};
    i.x = -353632620 + int32_t(k) * 97;
    i.y = 1491652370 + int32_t(k % 17) * 113;
    i.z = 20.0f + float(k % 7);
    items.push_back(i);
  }
  return items;
}

// The router with its own component (254/190, the engine's) and a vehicle (1/1).
struct MissionSite {
  explicit MissionSite(double loss, uint32_t seed = 7) {
    rt.start_with_udp_server();
    own = std::make_unique<Component>(rt.router, 254, 190);
    vehicle = std::make_unique<FakeMissionVehicle>(rt.router, 1, 1, loss, seed);
    engine = &own->transactions();
    EXPECT_TRUE(wait_until([&] { return rt.on_loop([&] { return rt.router.routing().routes().knows(1, 1); }); }));
  }
  ~MissionSite() {
    vehicle.reset();
    own.reset();
  }
  struct Ended {
    Transactions::End end;
    std::optional<uint8_t> result;
    std::vector<MissionItem> items;
  };
  Ended run(MissionExchange::Mode mode, uint8_t type, std::vector<MissionItem> items = {}, uint8_t system = 1,
            std::chrono::seconds deadline = 120s) {
    // Shared with the callback: a transfer that outlives the deadline still has it.
    auto ended = std::make_shared<std::promise<Ended>>();
    rt.router.event_loop().post([this, mode, type, items = std::move(items), system, ended]() mutable {
      engine->run<MissionExchange>(nullptr, system, 1, "mission",
                                   std::make_unique<MissionExchange>(mode, system, 1, type, std::move(items)),
                                   [ended](Transactions::End end, MissionExchange& e) {
                                     ended->set_value({end, e.result(), e.items()});
                                   });
    });
    auto f = ended->get_future();
    if (f.wait_for(deadline) != std::future_status::ready) {
      ADD_FAILURE() << "the transfer did not end within " << deadline.count() << " s";
      return {Transactions::End::kNoAnswer, std::nullopt, {}};
    }
    return f.get();
  }
  RouterThread rt;
  std::unique_ptr<Component> own;
  std::unique_ptr<FakeMissionVehicle> vehicle;
  Transactions* engine = nullptr;  // the own component's
};

TEST(Missions, AMissionFenceAndRallyAreWrittenReadBackAndCleared) {
  MissionSite site(0);
  const auto mission = survey(500, 1);
  const auto start = std::chrono::steady_clock::now();
  auto up = site.run(MissionExchange::Mode::kWrite, 0, mission);
  ASSERT_EQ(up.end, Transactions::End::kDone);
  EXPECT_EQ(up.result, MissionExchange::kAccepted);
  auto down = site.run(MissionExchange::Mode::kRead, 0);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(down.end, Transactions::End::kDone);
  EXPECT_EQ(down.items, mission) << "read back as written";
  std::cout << "[ figures  ] 500 items written and read back in " << ms << " ms without loss\n";
  for (const uint8_t type : {uint8_t{1}, uint8_t{2}}) {
    const auto list = survey(7, type);
    ASSERT_EQ(site.run(MissionExchange::Mode::kWrite, type, list).result, MissionExchange::kAccepted);
    EXPECT_EQ(site.run(MissionExchange::Mode::kRead, type).items, list) << int(type);
  }
  EXPECT_EQ(site.run(MissionExchange::Mode::kClear, 0).result, MissionExchange::kAccepted);
  const auto empty = site.run(MissionExchange::Mode::kRead, 0);
  EXPECT_EQ(empty.end, Transactions::End::kDone);
  EXPECT_TRUE(empty.items.empty());
  EXPECT_EQ(site.run(MissionExchange::Mode::kRead, 1).items.size(), 7u) << "the fence stays";
}

// A hop that loses 10% of frames each way: every round still writes and reads back the same.
TEST(Missions, TenPercentLossEachWayChangesNothing) {
  MissionSite site(0.10, 20261205);
  constexpr int kRounds = 2;
  double ms = 0;
  for (int round = 0; round < kRounds; ++round) {
    const auto mission = survey(100, round);
    const auto start = std::chrono::steady_clock::now();
    const auto up = site.run(MissionExchange::Mode::kWrite, 0, mission);
    ASSERT_EQ(up.end, Transactions::End::kDone) << "round " << round;
    ASSERT_EQ(up.result, MissionExchange::kAccepted) << "round " << round;
    const auto down = site.run(MissionExchange::Mode::kRead, 0);
    ASSERT_EQ(down.end, Transactions::End::kDone) << "round " << round;
    EXPECT_EQ(down.items, mission) << "round " << round;
    ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  std::cout << "[ figures  ] 100 items up and back through 10% loss each way: " << ms / kRounds << " ms a round, "
            << site.vehicle->dropped() << " frames lost in all\n";
  EXPECT_GT(site.vehicle->dropped(), 10u) << "the hop lost frames";
}

// One transfer per vehicle at a time: a second is refused while the first runs.
TEST(Missions, OneTransferPerVehicleAtATime) {
  MissionSite site(1.0);  // it hears nothing
  std::promise<Transactions::End> first, second;
  site.rt.router.event_loop().post([&] {
    for (auto* ended : {&first, &second})
      site.engine->run<MissionExchange>(nullptr, 1, 1, "mission",
                                        std::make_unique<MissionExchange>(MissionExchange::Mode::kRead, 1, 1, 0),
                                        [ended](Transactions::End end, MissionExchange&) { ended->set_value(end); });
  });
  EXPECT_EQ(second.get_future().get(), Transactions::End::kBusy);
  EXPECT_EQ(first.get_future().get(), Transactions::End::kNoAnswer);
}

// A vehicle whose route goes (its link closed) ends its transfer at the next silence, not after
// all its tries.
TEST(Missions, AVehicleThatGoesEndsItsTransfer) {
  MissionSite site(1.0);
  std::promise<Transactions::End> ended;
  site.rt.router.event_loop().post([&] {
    site.engine->run<MissionExchange>(nullptr, 1, 1, "mission",
                                      std::make_unique<MissionExchange>(MissionExchange::Mode::kRead, 1, 1, 0),
                                      [&](Transactions::End end, MissionExchange&) { ended.set_value(end); });
  });
  const auto start = std::chrono::steady_clock::now();
  site.vehicle.reset();
  auto f = ended.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get(), Transactions::End::kGone);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2 * std::chrono::milliseconds(MissionExchange::kRetryMs) + 500ms);
}

TEST(Missions, AVehicleThatNeverAnswersIsGivenUpOnAfterItsTries) {
  MissionSite site(1.0);  // it hears nothing
  const auto start = std::chrono::steady_clock::now();
  const auto r = site.run(MissionExchange::Mode::kRead, 0);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.end, Transactions::End::kNoAnswer);
  EXPECT_GE(took, MissionExchange::kTries * std::chrono::milliseconds(MissionExchange::kRetryMs) - 100ms);
}

// A vehicle that never gets item 3 asks for it again and again: each ask is answered, but an
// item asked before is no progress, so the transfer ends after its tries, not never.
TEST(Missions, AVehicleAskingForTheSameItemForEverIsGivenUpOn) {
  MissionSite site(0);
  site.vehicle->lose_item(3);
  const auto start = std::chrono::steady_clock::now();
  const auto r = site.run(MissionExchange::Mode::kWrite, 0, survey(10, 1), 1, 30s);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.end, Transactions::End::kNoAnswer);
  EXPECT_LT(took, (MissionExchange::kTries + 2) * std::chrono::milliseconds(MissionExchange::kRetryMs));
}

// The files: a .plan as QGroundControl writes one, and WPL, both ways.
TEST(MissionPlan, APlanAndWplSayTheSameListsBothWays) {
  services::Plan plan;
  plan.mission = survey(5, 0);
  (*plan.mission)[0].params[3] = NAN;  // yaw unset: null in the file
  plan.fence = std::vector<MissionItem>{};
  for (int v = 0; v < 4; ++v) {
    MissionItem i;
    i.command = 5001, i.frame = 0, i.params = {4, 0, 0, 0}, i.x = 100000000 + v * 10, i.y = 200000000 + (v % 2) * 10;
    plan.fence->push_back(i);
  }
  MissionItem circle;
  circle.command = 5004, circle.frame = 0, circle.params = {75, 0, 0, 0}, circle.x = 100000005, circle.y = 200000005;
  plan.fence->push_back(circle);
  plan.rally = std::vector<MissionItem>{};
  MissionItem rally;
  rally.command = 5100, rally.frame = 3, rally.x = 100000001, rally.y = 200000001, rally.z = 30;
  plan.rally->push_back(rally);
  const services::PlanVehicle px4{12, 2};  // MAV_AUTOPILOT_PX4: no home item
  const std::string text = services::plan_json(plan, px4);
  EXPECT_NE(text.find("\"type\": \"SimpleItem\""), std::string::npos) << text;
  EXPECT_NE(text.find("null"), std::string::npos) << "NaN as null: " << text;
  std::string error;
  auto back = services::parse_plan(text, px4, &error);
  ASSERT_TRUE(back) << error;
  ASSERT_EQ(back->mission->size(), 5u);
  EXPECT_TRUE(std::isnan((*back->mission)[0].params[3]));
  (*back->mission)[0].params[3] = (*plan.mission)[0].params[3] = 0;
  EXPECT_EQ(*back->mission, *plan.mission);
  EXPECT_EQ(*back->fence, *plan.fence);
  EXPECT_EQ(*back->rally, *plan.rally);
  // ArduPilot: item 0 is home, written as plannedHomePosition and put back for an upload.
  const services::PlanVehicle ardupilot{3, 2};
  const auto with_home = services::parse_plan(services::plan_json(plan, ardupilot), ardupilot, &error);
  ASSERT_TRUE(with_home) << error;
  EXPECT_EQ(with_home->mission->size(), 5u) << "home, then the four items after it";
  EXPECT_EQ(with_home->home.value()[0], (*plan.mission)[0].x / 1e7);
  // WPL, the list as the vehicle holds it.
  const auto wpl = services::parse_wpl(services::wpl_text(*plan.mission), &error);
  ASSERT_TRUE(wpl) << error;
  EXPECT_EQ(*wpl, *plan.mission);
  // What is not a mission file is refused, naming why.
  EXPECT_FALSE(
      services::parse_plan(R"({"fileType": "Plan", "mission": {"items": [{"type": "ComplexItem"}]}})", px4, &error));
  EXPECT_NE(error.find("ComplexItem"), std::string::npos) << error;
  EXPECT_FALSE(services::parse_wpl("QGC WPL 110\n0\t0\t3\t16\t0\t0\n", &error));
  EXPECT_NE(error.find("line 2"), std::string::npos) << error;
}

}  // namespace
}  // namespace mavswitch::test
