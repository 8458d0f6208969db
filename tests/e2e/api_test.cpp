// In-process components on a running router: filters, decoding, threads, helpers.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "e2e/peers.hpp"
#include "e2e/router_fixture.hpp"
#include "library/command_exchange.hpp"
#include "library/component.hpp"
#include "library/transactions.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/heartbeat.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

TEST(Api, FilterSemanticsAsATable) {
  RouterThread rt;
  const uint16_t port = rt.start_with_udp_server();
  Component me(rt.router, 1, 191);

  struct Row {
    const char* name;
    MessageFilter filter;
    int expected;
    std::atomic<int> got{0};
    Subscription sub{};
  };
  Row rows[] = {
      {"everything", {}, 7},
      {"from system 5", {.source_system = 5}, 3},
      {"from 5/1", {.source_system = 5, .source_component = 1}, 2},
      {"HEARTBEAT", {.message_id = msg::Heartbeat::kId}, 2},
      {"ATTITUDE from 6", {.source_system = 6, .message_id = msg::Attitude::kId}, 1},
      {"addressed to me", {.addressed_to_me = true}, 2},
      {"COMMAND_LONG addressed to me from 6/1",
       {.source_system = 6, .source_component = 1, .message_id = msg::CommandLong::kId, .addressed_to_me = true},
       2},
  };
  for (auto& r : rows) r.sub = me.subscribe(r.filter, [&r](const protocol::FrameView&) { ++r.got; });

  UdpPeer wire;
  wire.send_to(port, heartbeat(5, 1));
  wire.send_to(port, heartbeat(5, 2));
  wire.send_to(port, attitude(6, 1, 1));
  wire.send_to(port, attitude(5, 1, 2));
  wire.send_to(port, command_long(6, 1, 1, 191));  // to me
  wire.send_to(port, command_long(6, 1, 1, 0));    // to my system, any component
  wire.send_to(port, command_long(6, 1, 1, 55));   // to another component of my system
  wire.send_to(port, command_long(6, 1, 9, 1));    // to a system nobody has heard: not routed here
  ASSERT_TRUE(wait_until([&] { return me.stats().delivered == 7; })) << me.stats().delivered;
  for (auto& r : rows) EXPECT_EQ(r.got.load(), r.expected) << r.name;
}

TEST(Api, PayloadsAreDecodedLazilyAndAtMostOncePerFrame) {
  RouterThread rt;
  const uint16_t port = rt.start_with_udp_server();
  Component me(rt.router, 1, 191);
  std::atomic<int> raw{0}, typed{0};
  auto all = me.subscribe({}, [&](const protocol::FrameView&) { ++raw; });
  UdpPeer wire;
  for (uint8_t i = 0; i < 10; ++i) wire.send_to(port, heartbeat(5, 1, i));
  ASSERT_TRUE(wait_until([&] { return raw == 10; }));
  EXPECT_EQ(me.stats().decodes, 0u) << "raw-only traffic is never decoded";

  std::vector<Subscription> subs;
  float roll_sum = 0;
  for (int k = 0; k < 3; ++k) {
    subs.push_back(me.subscribe<msg::Attitude>([&](const msg::Attitude& a, const protocol::FrameView&) {
      ++typed;
      roll_sum += a.roll;
    }));
  }
  for (uint8_t i = 0; i < 10; ++i) {
    wire.send_to(port, attitude(5, 1, i, i));
    wire.send_to(port, heartbeat(5, 1, i));
  }
  ASSERT_TRUE(wait_until([&] { return typed == 30 && raw == 30; }));
  EXPECT_EQ(me.stats().decodes, 10u) << "three typed subscribers, one decode per frame";
  EXPECT_FLOAT_EQ(roll_sum, 30 * 0.5f);
}

TEST(Api, SubscribingAndUnsubscribingInsideAHandler) {
  RouterThread rt;
  const uint16_t port = rt.start_with_udp_server();
  Component me(rt.router, 1, 191);
  std::atomic<int> first{0}, second{0}, late{0};
  Subscription a, b, c;
  a = me.subscribe({}, [&](const protocol::FrameView&) {
    ++first;
    b.reset();  // the other one: it must not run for this frame or any later one
    a.reset();  // and itself
    c = me.subscribe({}, [&](const protocol::FrameView&) { ++late; });
  });
  b = me.subscribe({}, [&](const protocol::FrameView&) { ++second; });
  UdpPeer wire;
  wire.send_to(port, heartbeat(5, 1, 0));
  wire.send_to(port, heartbeat(5, 1, 1));
  wire.send_to(port, heartbeat(5, 1, 2));
  ASSERT_TRUE(wait_until([&] { return me.stats().delivered == 3; }));
  EXPECT_EQ(first.load(), 1);
  EXPECT_EQ(second.load(), 0);
  EXPECT_EQ(late.load(), 2) << "subscribed during the first frame: sees the next two";
}

TEST(Api, SendsFromManyThreadsAndDeliversToAnotherThread) {
  RouterThread rt;
  rt.start();
  Component sender(rt.router, 1, 1);
  Component receiver(rt.router, 2, 1);
  Subscription handle;
  auto queue = receiver.subscribe_queued({.message_id = msg::Attitude::kId}, 8192, handle);

  constexpr int kThreads = 4;
  constexpr uint32_t kPerThread = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t i = 0; i < kPerThread; ++i) {
        msg::Attitude a;
        a.time_boot_ms = static_cast<uint32_t>(t) * 1'000'000u + i;
        for (int tries = 0; tries < 100000 && !sender.send(a); ++tries) std::this_thread::yield();
      }
    });
  }
  // Meanwhile, subscriptions come and go from yet another thread.
  std::atomic<bool> churn{true};
  std::thread churner([&] {
    for (int i = 0; i < 200 && churn; ++i) {
      auto s = receiver.subscribe({}, [](const protocol::FrameView&) {});
    }
  });

  std::map<int, uint32_t> next;  // per sending thread, the next time_boot_ms expected
  uint32_t received = 0;
  OwnedFrame f;
  while (received < kThreads * kPerThread && queue->wait_pop(f, std::chrono::seconds(5))) {
    const auto view = protocol::probe_frame(rt.router.routing_table(), f.bytes, f.size).frame;
    const auto a = msg::Attitude::decode(view.payload());
    const int t = static_cast<int>(a.time_boot_ms / 1'000'000u);
    ASSERT_EQ(a.time_boot_ms % 1'000'000u, next[t]) << "in order per sender";
    ++next[t];
    ++received;
  }
  churn = false;
  churner.join();
  for (auto& th : threads) th.join();
  EXPECT_EQ(received, kThreads * kPerThread);
  EXPECT_EQ(queue->dropped(), 0u);
  EXPECT_EQ(sender.stats().sent, kThreads * kPerThread);
}

// Component::command runs on the component's transaction engine: a command not answered is
// sent again (confirmation counted up) until its ack; the answer comes as a future; a command
// to component 0 is answered by any component of the system; one of an id at a time.
TEST(Api, ACommandIsSentAgainUntilItsAckComesAsAFuture) {
  RouterThread rt;
  rt.start_with_udp_server();
  Component vehicle(rt.router, 1, 1);
  Component gcs(rt.router, 255, 190);
  std::mutex m;
  std::vector<int> confirmations;
  auto responder = vehicle.subscribe<msg::CommandLong>(
      [&](const msg::CommandLong& c, const protocol::FrameView& f) {
        {
          std::lock_guard lock(m);
          confirmations.push_back(c.confirmation);
        }
        if (c.confirmation < 1) return;  // the first is "lost"
        msg::CommandAck ack;
        ack.command = c.command;
        ack.target_system = f.sysid();
        ack.target_component = f.compid();
        vehicle.send(ack);
      },
      {.addressed_to_me = true});
  ASSERT_TRUE(wait_until([&] { return rt.on_loop([&] { return rt.router.routing().routes().knows(1, 1); }); }));
  auto answer = gcs.command_async(1, 0, 400, {1}, std::chrono::milliseconds(1500));  // two tries, 750 ms apart
  // The same command to the same target meanwhile is refused at once: nothing.
  EXPECT_FALSE(gcs.command(1, 0, 400, {1}, std::chrono::milliseconds(1500)).has_value());
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  const auto ack = answer.get();
  ASSERT_TRUE(ack.has_value()) << "the second try is answered";
  EXPECT_EQ(ack->command, 400);
  std::lock_guard lock(m);
  EXPECT_EQ(confirmations, (std::vector<int>{0, 1}));
}

// An owner's transactions end with it, without their callbacks: what a library user does
// before its handlers' objects go.
TEST(Api, AnOwnersTransactionsAreCancelledWithoutTheirCallbacks) {
  RouterThread rt;
  rt.start_with_udp_server();
  Component vehicle(rt.router, 1, 1);  // it never answers
  Component gcs(rt.router, 255, 190);
  ASSERT_TRUE(wait_until([&] { return rt.on_loop([&] { return rt.router.routing().routes().knows(1, 1); }); }));
  std::atomic<int> called{0};
  const int owner = 0;
  rt.on_loop([&] {
    for (const uint16_t id : {uint16_t{400}, uint16_t{401}})
      gcs.transactions().run<CommandExchange>(&owner, 1, 1, CommandExchange::kind(id),
                                              std::make_unique<CommandExchange>(CommandExchange::Command{1, 1, id, {}}),
                                              [&](Transactions::End, CommandExchange&) { ++called; });
    return 0;
  });
  EXPECT_EQ(rt.on_loop([&] { return gcs.transactions().open().size(); }), 2u);
  rt.on_loop([&] {
    gcs.transactions().cancel(&owner);
    return 0;
  });
  EXPECT_EQ(rt.on_loop([&] { return gcs.transactions().open().size(); }), 0u);
  EXPECT_EQ(called.load(), 0);
}

TEST(Api, CommandGetsItsAckAndHeartbeatsGoOut) {
  RouterThread rt;
  const uint16_t port = rt.start_with_udp_server();
  Component vehicle(rt.router, 1, 1);
  Component gcs(rt.router, 255, 190);
  auto responder = vehicle.subscribe<msg::CommandLong>(
      [&](const msg::CommandLong& c, const protocol::FrameView& f) {
        msg::CommandAck ack;
        ack.command = c.command;
        ack.result = c.command == 400 ? 0 : 3;  // MAV_RESULT_ACCEPTED / UNSUPPORTED
        ack.target_system = f.sysid();
        ack.target_component = f.compid();
        vehicle.send(ack);  // from the handler: routed once the command's delivery is done
      },
      {.addressed_to_me = true});
  const auto ack = gcs.command(1, 1, 400, {1});
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->command, 400);
  EXPECT_EQ(ack->result, 0);
  const auto refused = gcs.command(1, 1, 31000);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->result, 3);
  EXPECT_FALSE(gcs.command(42, 1, 400, {}, std::chrono::milliseconds(100)).has_value()) << "nobody there: a timeout";

  UdpPeer wire;
  wire.send_to(port, heartbeat(200, 1));  // a wire peer that hears broadcasts
  // Its link up first: a new peer arms the server's idle timer, which is not the heartbeat's.
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  rt.router.settle();
  const size_t timers = rt.on_loop([&] { return rt.router.event_loop().timer_count(); });
  vehicle.start_heartbeat(2, 3, std::chrono::milliseconds(20));
  ASSERT_TRUE(wait_until([&] { return wire.received().count_msgid(msg::Heartbeat::kId) >= 3; }));
  vehicle.stop_heartbeat();
  // Stopped means its timer is gone: nothing is left that could send another.
  EXPECT_EQ(rt.on_loop([&] { return rt.router.event_loop().timer_count(); }), timers);
}

TEST(Api, WaitForRefusesToBlockTheRouterThread) {
  RouterThread rt;
  rt.start();
  Component c(rt.router, 1, 1);
  bool threw = false;
  rt.on_loop([&] {
    try {
      c.wait_for<msg::Heartbeat>({}, nullptr, std::chrono::milliseconds(1));
    } catch (const std::logic_error&) {
      threw = true;
    }
    return 0;
  });
  EXPECT_TRUE(threw);
}

// A handler that sends from inside a delivery (here: a component that answers every ATTITUDE
// with a HEARTBEAT) must not change where the frame being delivered goes: the ground station
// still gets every ATTITUDE, and the vehicle none of its own back. The component is attached
// first, so the router hands it each frame before it has handed it to the wire peers.
TEST(Api, AFrameSentFromAHandlerDoesNotDisturbTheDeliveryInProgress) {
  RouterThread rt;
  Component echo(rt.router, 190, 1);
  const uint16_t port = rt.start_with_udp_server();
  std::atomic<int> answered{0};
  auto sub = echo.subscribe<msg::Attitude>([&](const msg::Attitude&, const protocol::FrameView&) {
    msg::Heartbeat hb;
    hb.type = 6;
    echo.send(hb);  // on the router thread, in the middle of routing the ATTITUDE
    ++answered;
  });
  UdpPeer gcs, vehicle;
  gcs.send_to(port, heartbeat(255, 190));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(rt.udp_server) == 1; }));
  vehicle.send_to(port, heartbeat(1, 1));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(rt.udp_server) == 2; }));
  ASSERT_TRUE(gcs.wait_frames(1));  // the vehicle's heartbeat
  gcs.clear();
  vehicle.clear();
  constexpr int kFrames = 10;
  for (int i = 0; i < kFrames; ++i) vehicle.send(attitude(1, 1, static_cast<uint32_t>(i + 1), static_cast<uint8_t>(i)));
  ASSERT_TRUE(wait_until([&] { return answered.load() == kFrames; }));
  ASSERT_TRUE(wait_until([&] { return gcs.received().count_msgid(msg::Attitude::kId) == kFrames; }))
      << gcs.received().count_msgid(msg::Attitude::kId) << " ATTITUDE at the ground station";
  EXPECT_TRUE(wait_until([&] { return vehicle.received().count_msgid(msg::Heartbeat::kId) == kFrames; }));
  rt.router.settle();
  EXPECT_EQ(vehicle.received().count_msgid(msg::Attitude::kId), 0u) << "its own frames back";
  EXPECT_EQ(gcs.received().count_msgid(msg::Attitude::kId), size_t{kFrames});
}

// Two components that answer each other's every HEARTBEAT would never stop: the router routes a
// bounded number of such answers to one frame, drops the rest, and goes on routing.
TEST(Api, HandlersAnsweringEachOtherWithoutEndAreCutOff) {
  RouterThread rt;
  Component a(rt.router, 10, 1), b(rt.router, 11, 1);
  std::atomic<int> answers{0};
  auto answer = [&](Component& me) {
    return me.subscribe<msg::Heartbeat>([&](const msg::Heartbeat&, const protocol::FrameView&) {
      msg::Heartbeat hb;
      hb.type = 18;
      me.send(hb);
      ++answers;
    });
  };
  auto sub_a = answer(a), sub_b = answer(b);
  const uint16_t port = rt.start_with_udp_server();
  UdpPeer wire, other;
  other.send_to(port, heartbeat(201, 1));  // starts the exchange
  ASSERT_TRUE(wait_until([&] { return answers.load() > 4000; }));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  wire.send_to(port, attitude(200, 1, 1));
  EXPECT_TRUE(wait_until([&] { return other.received().count_msgid(msg::Attitude::kId) == 1; }))
      << "the router went on routing";
  EXPECT_LT(answers.load(), 3 * 4096) << "cut off after a bounded number of answers to each frame";
}

// A component's link is one of the router's links: listed under an endpoint of its own, counted
// both ways, and gone with the component.
TEST(Api, AComponentIsListedAndCountedAsALink) {
  RouterThread rt;
  const uint16_t port = rt.start_with_udp_server();
  std::optional<Component> camera(std::in_place, rt.router, 7, 100);
  const size_t endpoint = rt.router.endpoint_count() - 1;
  EXPECT_EQ(rt.router.endpoint_description(endpoint), "component 7/100");
  EXPECT_EQ(rt.link_count(endpoint), 1u);
  std::atomic<int> heard{0};
  auto sub = camera->subscribe<msg::Heartbeat>([&](const msg::Heartbeat&, const protocol::FrameView&) { ++heard; });
  UdpPeer gcs;
  gcs.send_to(port, heartbeat(255, 190));
  ASSERT_TRUE(wait_until([&] { return heard.load() == 1; }));
  ASSERT_TRUE(camera->send(msg::Heartbeat{}));
  ASSERT_TRUE(gcs.wait_frames(1)) << "the component's HEARTBEAT reaches the ground station";
  ASSERT_TRUE(wait_until([&] { return rt.link_counters(endpoint).frames_in == 1; }));
  EXPECT_EQ(rt.link_counters(endpoint).frames_out, 1u) << "the ground station's HEARTBEAT, routed to it";
  sub.reset();
  camera.reset();
  EXPECT_TRUE(rt.router.endpoint_closed(endpoint));
  EXPECT_EQ(rt.link_count(endpoint), 0u);
}

// Sequence loss is counted where frames can be lost: between a source and us. A component's
// frames are made in this process (the HTTP API's POSTs come at sequence 0, beside frames it
// numbered itself), so jumps in their numbers are never losses; the same jumps from a UDP peer are.
// A hop that loses 5% of frames at random (the peer's sends it never makes) between a vehicle
// and the router: the link's sequence loss says 5% ± 1 of what the vehicle sent on it. The
// router's own component, sending on its own link meanwhile, adds nothing to it.
TEST(Api, ALossyHopsLossIsCountedAsItIs) {
  RouterThread rt;
  const uint16_t port = rt.start_with_udp_server();
  const size_t udp = rt.router.endpoint_count() - 1;
  Component window(rt.router, 7, 100);
  UdpPeer vehicle;
  std::mt19937 random(std::random_device{}());
  std::bernoulli_distribution lost_on_the_way(0.05);
  constexpr uint32_t kSent = 10000;
  uint64_t made_it = 0;
  for (uint32_t n = 0; n < kSent; ++n) {
    if (!lost_on_the_way(random)) vehicle.send_to(port, heartbeat(1, 1, static_cast<uint8_t>(n))), ++made_it;
    if (n % 100 == 99) {  // what the kernel's buffer holds: the router catches up, nothing else is lost
      ASSERT_TRUE(window.send_raw(heartbeat(7, 100, 0)));
      ASSERT_TRUE(wait_until([&] { return rt.link_counters(udp).frames_in == made_it; })) << n;
    }
  }
  uint64_t lost = 0;
  rt.router.for_each_link(udp, [&](const Router::LinkReport& r) { lost += r.sequences->lost(); });
  const double share = double(lost) / double(made_it + lost);
  std::cout << "[ figures  ] " << kSent << " sent, " << kSent - made_it << " lost on the hop, " << lost
            << " counted lost: " << 100 * share << "%\n";
  EXPECT_LE(made_it + lost, kSent) << "never more than the vehicle sent";
  EXPECT_NEAR(share, 0.05, 0.01);
}

TEST(Api, AComponentsSequenceJumpsAreNeverCountedAsLoss) {
  RouterThread rt;
  const uint16_t port = rt.start_with_udp_server();
  const size_t udp = rt.router.endpoint_count() - 1;
  Component window(rt.router, 7, 100);
  const size_t own = rt.router.endpoint_count() - 1;
  UdpPeer gcs;
  const uint8_t jumps[] = {0, 50, 0, 100, 0, 120};  // forward jumps under 128: losses, not reordering
  for (const uint8_t seq : jumps) {
    ASSERT_TRUE(window.send_raw(heartbeat(7, 100, seq)));
    gcs.send_to(port, heartbeat(255, 190, seq));
  }
  auto lost = [&](size_t endpoint) {
    uint64_t n = 0;
    rt.router.for_each_link(endpoint, [&](const Router::LinkReport& r) {
      if (r.sequences != nullptr) n += r.sequences->lost();
    });
    return n;
  };
  ASSERT_TRUE(wait_until([&] {
    return rt.link_counters(own).frames_in == std::size(jumps) && rt.link_counters(udp).frames_in == std::size(jumps);
  }));
  EXPECT_EQ(lost(own), 0u);
  EXPECT_EQ(lost(udp), 49u + 99u + 119u) << "each forward jump from the peer: frames it sent that never came";
}
