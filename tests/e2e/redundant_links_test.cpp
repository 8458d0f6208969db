// A vehicle reached over two links of one group (Group = radio, Priority 1 and 2): the ground
// station receives each frame once with no false sequence loss, commands go out on the primary
// only, move to the secondary when the primary falls silent, and come back once it has been
// healthy for the failback delay. Over UDP twice, over a pty and UDP, and over lossy, delayed,
// jittery links.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>

#include "e2e/peers.hpp"
#include "e2e/router_fixture.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_long.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr routing::FailoverTiming kTiming{.timeout = 400, .failback = 1200, .dedup_window = 500};

// The vehicle's two radios as the test drives them: each a peer of the router, either a UDP
// socket or the far end of a pty. `send` puts the same frame on the radios that work.
struct Radio {
  std::unique_ptr<Peer> peer;
  std::function<void(const Bytes&)> send;
  size_t seen = 0;
  bool up = true;
  // Commands that came out of the router on this radio.
  size_t commands() {
    size_t n = 0;
    const auto& f = peer->received().frames;
    for (; seen < f.size(); ++seen) n += view_of(f[seen]).msgid() == msg::CommandLong::kId;
    return n;
  }
};

class RedundantLinks : public ::testing::Test {
 protected:
  RedundantLinks() : rt(RouterOptions{.failover = kTiming}) {}

  void add_radio(transport::EndpointSpec spec, int priority) {
    routing::LinkPolicy p;
    p.group = rt.router.group_index("radio");
    p.priority = priority;
    rt.router.add_endpoint(spec, p);
  }
  Radio udp_radio(int priority) {
    const uint16_t port = free_udp_port();
    add_radio(udp_server(port), priority);
    auto peer = std::make_unique<UdpPeer>();
    UdpPeer* udp = peer.get();
    return {std::move(peer), [udp, port](const Bytes& b) { udp->send_to(port, b); }};
  }
  Radio pty_radio(int priority) {
    auto pty = std::make_unique<PtyPeer>();
    add_radio(serial(pty->slave_path()), priority);
    PtyPeer* p = pty.get();
    return {std::move(pty), [p](const Bytes& b) { p->send(b); }};
  }
  void start_gcs() {
    gcs_port = free_udp_port();
    rt.router.add_endpoint(udp_server(gcs_port));
    rt.start();
    gcs.send_to(gcs_port, heartbeat(255, 190));
    const size_t gcs_index = rt.router.endpoint_count() - 1;
    ASSERT_TRUE(wait_until([&] { return rt.link_count(gcs_index) == 1; }));
  }

  // One frame of the vehicle's stream on every radio that is up. `carry(i, frame)` is radio i's
  // way to the router (at once by default); false: the frame was lost on it.
  using Carry = std::function<bool(size_t, const Bytes&)>;
  void vehicle_sends(std::vector<Radio*> radios, const Carry& carry = {}) {
    const Bytes f = attitude(1, 1, uint32_t(sent_), uint8_t(sent_));  // its number in time_boot_ms
    bool any = false;
    for (size_t i = 0; i < radios.size(); ++i) {
      if (!radios[i]->up) continue;
      if (carry) {
        any |= carry(i, f);
        continue;
      }
      radios[i]->send(f);
      any = true;
    }
    if (any) expected_.push_back(uint32_t(sent_));
    ++sent_;
  }
  // The ground station got every frame that made it over some radio, once each; in order with
  // one worker (with several, the radios' frames are routed on different threads) unless the
  // radios themselves reorder.
  void expect_each_frame_once(bool in_order = true) {
    ASSERT_TRUE(wait_until([&] { return gcs.received().frames.size() >= expected_.size(); }));
    rt.router.settle();
    std::vector<uint32_t> got;
    for (const auto& f : gcs.received().frames) {
      const auto v = view_of(f);
      if (v.sysid() == 1 && v.msgid() == msg::Attitude::kId)
        got.push_back(msg::Attitude::decode(v.payload()).time_boot_ms);
    }
    if (in_order && rt.router.worker_count() == 1) {
      EXPECT_EQ(got, expected_);
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, expected_);
  }
  Radio* active(Radio& a, Radio& b) {  // where a command sent now comes out
    a.commands(), b.commands();        // what came before
    gcs.send_to(gcs_port, command_long(255, 190, 1, 1));
    Radio* out = nullptr;
    wait_until(
        [&] {
          if (a.commands() != 0) out = &a;
          if (b.commands() != 0) out = out ? nullptr : &b;
          return out != nullptr;
        },
        1000ms);
    rt.router.settle();
    if (a.commands() + b.commands() != 0) return nullptr;  // it went out twice
    return out;
  }

  RouterThread rt;
  UdpPeer gcs;
  uint16_t gcs_port = 0;
  size_t sent_ = 0;
  std::vector<uint32_t> expected_;
};

}  // namespace

TEST_F(RedundantLinks, OnceEachWhileBothWorkThenFailoverAndFailback) {
  Radio primary = udp_radio(1), secondary = udp_radio(2);
  start_gcs();
  for (int i = 0; i < 100; ++i, pace(2ms)) vehicle_sends({&primary, &secondary});
  expect_each_frame_once();
  EXPECT_EQ(active(primary, secondary), &primary);

  primary.up = false;  // the primary radio stops
  const auto stopped = Clock::now();
  Radio* now_on = &primary;
  for (int i = 0; i < 200 && now_on != &secondary; ++i, pace(20ms)) {
    vehicle_sends({&primary, &secondary});
    if (i % 5 == 4) now_on = active(primary, secondary);
  }
  EXPECT_EQ(now_on, &secondary);
  EXPECT_LE(ms_since(stopped), kTiming.timeout + 400) << "within FailoverTimeout and a heartbeat or two";

  primary.up = true;  // back: the secondary keeps the traffic until the primary has settled
  const auto back = Clock::now();
  for (int i = 0; i < 300 && now_on != &primary; ++i, pace(20ms)) {
    vehicle_sends({&primary, &secondary});
    if (i % 5 == 4) {
      now_on = active(primary, secondary);
      if (ms_since(back) < kTiming.failback - 100) {
        EXPECT_EQ(now_on, &secondary) << "no flapping";
      }
    }
  }
  EXPECT_EQ(now_on, &primary) << "failback";
  expect_each_frame_once();
  const auto groups = rt.router.routing().group_stats();
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].stats.failovers, 2u);
  EXPECT_GT(groups[0].stats.duplicates, 100u);
}

TEST_F(RedundantLinks, APtyAndAUdpLink) {
  Radio primary = pty_radio(1), secondary = udp_radio(2);
  start_gcs();
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; })) << "the serial port opened";
  for (int i = 0; i < 100; ++i, pace(2ms)) vehicle_sends({&primary, &secondary});
  expect_each_frame_once();
  EXPECT_EQ(active(primary, secondary), &primary);
  primary.up = false;
  Radio* now_on = &primary;
  for (int i = 0; i < 200 && now_on != &secondary; ++i, pace(20ms)) {
    vehicle_sends({&primary, &secondary});
    if (i % 5 == 4) now_on = active(primary, secondary);
  }
  EXPECT_EQ(now_on, &secondary);
  expect_each_frame_once();
}

// Each radio loses 20% of the frames, independently: the ground station gets every frame that
// made it over either, once (no false loss). Not necessarily in order: a frame that came only
// over the second radio may be read after the next one from the first.
TEST_F(RedundantLinks, LossyLinksMakeOneWholeStream) {
  Radio a = udp_radio(1), b = udp_radio(2);
  start_gcs();
  std::mt19937 rng(7);
  std::bernoulli_distribution lose(0.2);
  Radio* radios[] = {&a, &b};
  for (int i = 0; i < 400; ++i, pace(1ms)) {
    vehicle_sends({&a, &b}, [&](size_t r, const Bytes& f) {
      if (lose(rng)) return false;
      radios[r]->send(f);
      return true;
    });
  }
  EXPECT_GT(expected_.size(), 370u);  // ~4% lost on both
  expect_each_frame_once(false);
}

// Loss, delay and jitter: each radio loses 20% and holds each frame 5 to 60 ms, so copies cross
// and frames overtake each other. A relay in the test stands in for tc netem (this machine's
// kernel has no netem qdisc). Every frame that made it over either radio arrives once.
TEST_F(RedundantLinks, LossyDelayedAndJitteryLinksDeliverEachFrameOnce) {
  Radio a = udp_radio(1), b = udp_radio(2);
  start_gcs();
  std::mt19937 rng(11);
  std::bernoulli_distribution lose(0.2);
  std::uniform_int_distribution<int> delay_ms(5, 60);
  Radio* radios[] = {&a, &b};
  std::multimap<Clock::time_point, std::pair<Radio*, Bytes>> in_flight;
  const auto deliver_due = [&] {
    while (!in_flight.empty() && in_flight.begin()->first <= Clock::now()) {
      in_flight.begin()->second.first->send(in_flight.begin()->second.second);
      in_flight.erase(in_flight.begin());
    }
  };
  for (int i = 0; i < 400; ++i, pace(1ms)) {
    deliver_due();
    vehicle_sends({&a, &b}, [&](size_t r, const Bytes& f) {
      if (lose(rng)) return false;
      in_flight.emplace(Clock::now() + std::chrono::milliseconds(delay_ms(rng)), std::make_pair(radios[r], f));
      return true;
    });
  }
  for (int i = 0; i < 200 && !in_flight.empty(); ++i, pace(1ms)) deliver_due();
  ASSERT_TRUE(in_flight.empty());
  EXPECT_GT(expected_.size(), 370u);
  expect_each_frame_once(false);
  EXPECT_GT(rt.router.routing().group_stats()[0].stats.duplicates, 200u) << "most frames came twice";
}
