// The multi-worker data path under load: a UDP server's peers are shared evenly among the
// workers whatever the kernel's hash does, frames cross between workers in every direction,
// and still every vehicle reaches every ground station exactly once, in order, and commands
// reach only their target.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <stdexcept>
#include <memory>
#include <thread>
#include <vector>

#include "e2e/router_fixture.hpp"
#include "api/component.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_long.hpp"

namespace mavswitch::test {
namespace {

// Per source system: the sequence numbers of its ATTITUDE frames, in arrival order.
std::map<uint8_t, std::vector<uint8_t>> attitude_seqs(Peer& peer) {
  std::map<uint8_t, std::vector<uint8_t>> out;
  for (const Bytes& f : peer.received().frames) {
    const bool v2 = f[0] == protocol::kMagicV2;
    const uint32_t msgid = v2 ? static_cast<uint32_t>(f[7] | f[8] << 8 | f[9] << 16) : f[5];
    if (msgid == msg::Attitude::kId) out[f[v2 ? 5 : 3]].push_back(f[v2 ? 4 : 2]);
  }
  return out;
}

TEST(Workers, EveryVehicleReachesEveryGroundStationAcrossWorkers) {
  constexpr int kVehicles = 6, kUdpGcs = 3, kTcpGcs = 2, kRounds = 100;
  RouterOptions options;
  options.workers = 3;
  RouterThread rt(options);
  const uint16_t udp_port = free_udp_port(), tcp_port = free_tcp_port();
  rt.router.add_endpoint(udp_server(udp_port));
  rt.router.add_endpoint(tcp_server(tcp_port));
  rt.start();
  ASSERT_EQ(rt.router.worker_count(), 3u);

  std::vector<std::unique_ptr<Peer>> gcs;
  for (int i = 0; i < kUdpGcs; ++i) {
    auto p = std::make_unique<UdpPeer>();
    p->send_to(udp_port, heartbeat(static_cast<uint8_t>(200 + i), 190));
    gcs.push_back(std::move(p));
  }
  for (int i = 0; i < kTcpGcs; ++i) {
    gcs.push_back(std::make_unique<TcpPeer>(tcp_port));
    gcs.back()->send(heartbeat(static_cast<uint8_t>(220 + i), 190));
  }
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == kUdpGcs && rt.link_count(1) == kTcpGcs; }));
  std::vector<std::unique_ptr<UdpPeer>> vehicles;
  for (int v = 0; v < kVehicles; ++v) {
    vehicles.push_back(std::make_unique<UdpPeer>());
    vehicles.back()->send_to(udp_port, heartbeat(static_cast<uint8_t>(1 + v), 1));
  }
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == kUdpGcs + kVehicles; }));
  // Every ground station's heartbeat has been routed (learned) once each one hears a vehicle.
  for (auto& g : gcs) ASSERT_TRUE(g->wait_frames(kVehicles));
  for (auto& g : gcs) g->clear();
  for (auto& v : vehicles) v->clear();

  for (int round = 0; round < kRounds; ++round) {
    for (int v = 0; v < kVehicles; ++v) {
      vehicles[static_cast<size_t>(v)]->send(
          attitude(static_cast<uint8_t>(1 + v), 1, static_cast<uint32_t>(round + 1), static_cast<uint8_t>(round)));
    }
    if (round % 10 == 9) std::this_thread::sleep_for(1ms);  // bursts, as telemetry comes
  }
  for (auto& g : gcs) {
    ASSERT_TRUE(g->wait_frames(kVehicles * kRounds, 10'000ms)) << g->received().frames.size() << " frames";
    const auto seqs = attitude_seqs(*g);
    ASSERT_EQ(seqs.size(), size_t{kVehicles});
    for (const auto& [sys, s] : seqs) {
      ASSERT_EQ(s.size(), size_t{kRounds}) << "from system " << int{sys};
      for (int k = 0; k < kRounds; ++k) ASSERT_EQ(s[static_cast<size_t>(k)], k) << "one source stays in order";
    }
  }
  for (auto& v : vehicles) {  // the broadcast rule: each vehicle hears the others
    ASSERT_TRUE(v->wait_frames((kVehicles - 1) * kRounds, 10'000ms));
    EXPECT_EQ(v->received().count_msgid(msg::Attitude::kId), size_t{(kVehicles - 1) * kRounds});
  }

  // Targeted: each ground station commands each vehicle; only the target hears it.
  for (auto& v : vehicles) v->clear();
  for (auto& g : gcs) g->clear();
  for (size_t i = 0; i < gcs.size(); ++i) {
    const auto sys = static_cast<uint8_t>(i < kUdpGcs ? 200 + i : 220 + (i - kUdpGcs));
    for (int v = 0; v < kVehicles; ++v) gcs[i]->send(command_long(sys, 190, static_cast<uint8_t>(1 + v), 1));
  }
  for (auto& v : vehicles) {
    ASSERT_TRUE(v->wait_frames(gcs.size()));
    EXPECT_EQ(v->received().count_msgid(msg::CommandLong::kId), gcs.size());
  }
  std::this_thread::sleep_for(50ms);
  for (auto& g : gcs) EXPECT_EQ(g->received().count_msgid(msg::CommandLong::kId), 0u);
  EXPECT_EQ(rt.router.cross_worker_drops(), 0u);
}

// A router with two workers and one TCP link on each: client endpoints are dealt out in turn,
// so the first is on worker 0 and the second on worker 1. Connected and up on return.
// `prepare` sees the router before it starts.
struct OneLinkPerWorker {
  explicit OneLinkPerWorker(const std::function<void(Router&)>& prepare = {}) : rt(two_workers()) {
    rt.router.add_endpoint(tcp_client(listeners[0].port()));
    rt.router.add_endpoint(tcp_client(listeners[1].port()));
    if (prepare) prepare(rt.router);
    rt.start();
    for (auto& l : listeners) peers.push_back(l.accept());
    up = peers[0] && peers[1] && wait_until([&] { return rt.link_count(0) == 1 && rt.link_count(1) == 1; });
  }
  static RouterOptions two_workers() {
    RouterOptions options;
    options.workers = 2;
    return options;
  }
  RouterThread rt;
  TcpListener listeners[2];
  std::vector<std::unique_ptr<TcpPeer>> peers;  // by worker
  bool up = false;
};

// Two links on two workers (client endpoints are dealt out in turn), traffic slow enough that
// the receiving worker sleeps between frames: the worker that routed a frame writes it for the
// sleeping one, under that one's lock, instead of waking it. Everything arrives, in order.
TEST(Workers, AWorkerWritesForASleepingOneInsteadOfWakingIt) {
  OneLinkPerWorker setup;
  ASSERT_TRUE(setup.up);
  RouterThread& rt = setup.rt;
  TcpPeer* vehicle = setup.peers[0].get();
  TcpPeer* gcs = setup.peers[1].get();
  gcs->send(heartbeat(255, 190));
  ASSERT_TRUE(vehicle->wait_frames(1));
  constexpr int kFrames = 40;
  for (int i = 0; i < kFrames; ++i) {
    vehicle->send(attitude(1, 1, static_cast<uint32_t>(i + 1), static_cast<uint8_t>(i)));
    std::this_thread::sleep_for(2ms);  // the other worker goes back to sleep in between
  }
  ASSERT_TRUE(gcs->wait_frames(kFrames, 10'000ms));
  const auto seqs = attitude_seqs(*gcs);
  ASSERT_EQ(seqs.at(1).size(), size_t{kFrames});
  for (int k = 0; k < kFrames; ++k) ASSERT_EQ(seqs.at(1)[static_cast<size_t>(k)], k);
  EXPECT_GT(rt.router.cross_worker_served(), 0u) << "frames reached the sleeping worker's link without waking it";
}

// A tap added for any worker (the daemon's telemetry log) is fed by the worker that received
// the frames while the router's thread sleeps, under that thread's lock: the tap shares plain
// counters with a timer on the router's thread and ThreadSanitizer sees no race. The same
// traffic with a tap added for the router's thread wakes worker 0, which runs the tap itself.
TEST(Workers, ATapForAnyWorkerIsFedWithoutWakingTheRoutersThread) {
  for (const auto where : {Router::TapThread::kAnyWorker, Router::TapThread::kRouterThread}) {
    SCOPED_TRACE(where == Router::TapThread::kAnyWorker ? "tap for any worker" : "tap for the router's thread");
    struct TapState {
      std::vector<uint8_t> attitude_seqs;
      int calls_off_router_thread = 0;
      size_t seen_by_timer = 0;
    } state;
    Router* router = nullptr;
    OneLinkPerWorker setup([&](Router& r) {
      router = &r;
      r.add_tap(
          [&](const protocol::FrameView& f) {
            if (!router->on_loop_thread()) ++state.calls_off_router_thread;
            if (f.msgid() == msg::Attitude::kId) state.attitude_seqs.push_back(f.seq());
          },
          where);
    });
    ASSERT_TRUE(setup.up);
    RouterThread& rt = setup.rt;
    // Worker 0's own timer reads what the tap writes; every 20 ms, so that it mostly sleeps.
    rt.router.run_on_loop([&] { rt.router.event_loop().every(20, [&] { state.seen_by_timer = state.attitude_seqs.size(); }); });
    TcpPeer* gcs = setup.peers[0].get();
    TcpPeer* vehicle = setup.peers[1].get();
    gcs->send(heartbeat(255, 190));
    ASSERT_TRUE(vehicle->wait_frames(1));
    const uint64_t served_before = rt.router.cross_worker_served();
    constexpr int kFrames = 40;
    for (int i = 0; i < kFrames; ++i) {
      vehicle->send(attitude(1, 1, static_cast<uint32_t>(i + 1), static_cast<uint8_t>(i)));
      std::this_thread::sleep_for(2ms);  // worker 0 goes back to sleep in between
    }
    ASSERT_TRUE(gcs->wait_frames(kFrames, 10'000ms));
    std::vector<uint8_t> tapped;
    int off_thread = 0;
    ASSERT_TRUE(wait_until([&] {
      rt.router.run_on_loop([&] {
        tapped = state.attitude_seqs;
        off_thread = state.calls_off_router_thread;
      });
      return tapped.size() == size_t{kFrames};
    }));
    for (int k = 0; k < kFrames; ++k) ASSERT_EQ(tapped[static_cast<size_t>(k)], k) << "the tap sees them in order";
    const uint64_t served = rt.router.cross_worker_served() - served_before;
    if (where == Router::TapThread::kAnyWorker) {
      EXPECT_GT(served, 0u) << "worker 1 wrote the tap's frames for the sleeping worker 0";
      EXPECT_GT(off_thread, 0) << "so the tap ran on worker 1's thread";
    } else {
      EXPECT_EQ(served, 0u) << "worker 0 was woken for each batch";
      EXPECT_EQ(off_thread, 0) << "the tap ran on the router's thread only";
    }
  }
}

// Keeps worker 0 (the router's own thread) busy in a task posted to its loop, as a component's
// long callback would, until released or `at_most` has passed; null if it never got busy.
// Shared with the task, which may outlive a failed test's scope.
struct Worker0Hold {
  std::atomic<bool> busy{false}, released{false};
  void release() { released = true; }
};
std::shared_ptr<Worker0Hold> hold_worker0(RouterThread& rt, std::chrono::milliseconds at_most) {
  auto hold = std::make_shared<Worker0Hold>();
  rt.router.event_loop().post([hold, at_most] {
    hold->busy = true;
    const auto give_up = std::chrono::steady_clock::now() + at_most;
    while (!hold->released && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(1ms);
  });
  return wait_until([&] { return hold->busy.load(); }) ? hold : nullptr;
}

// `frames` ATTITUDEs from system 1 in one buffer, sequence numbers counting from 0.
Bytes attitude_burst(int frames) {
  Bytes burst;
  for (int i = 0; i < frames; ++i) {
    const Bytes f = attitude(1, 1, static_cast<uint32_t>(i + 1), static_cast<uint8_t>(i));
    burst.insert(burst.end(), f.begin(), f.end());
  }
  return burst;
}

// Worker 0 is busy for a moment (here: a task posted to its loop) while a vehicle on worker 1
// sends a burst bigger than the queue between them (6,000 frames; the 256 KiB ring holds about
// 4,000). Worker 1 stops reading once the queue is half full and leaves the rest in the
// kernel's socket buffer: nothing is dropped, everything arrives in order. The wait costs no
// CPU: worker 1 holds its socket back from its loop and sleeps until worker 0 has drained
// (which wakes it), rather than being told the socket is readable again and again. Over
// 60 ms of it the whole process (worker 0 naps in 1 ms steps, the test thread sleeps) uses a
// few milliseconds of CPU; polling used one core throughout.
TEST(Workers, ABurstForABusyWorkerWaitsInTheKernelRatherThanBeingDropped) {
  OneLinkPerWorker setup;
  ASSERT_TRUE(setup.up);
  RouterThread& rt = setup.rt;
  TcpPeer* gcs = setup.peers[0].get();      // worker 0
  TcpPeer* vehicle = setup.peers[1].get();  // worker 1
  const auto hold = hold_worker0(rt, 2s);
  ASSERT_TRUE(hold);
  constexpr int kFrames = 6000;
  vehicle->send(attitude_burst(kFrames));
  // Worker 1 reads what fits, then waits (released within the 200 ms it would wait).
  const bool paused = wait_until([&] { return rt.router.input_pauses() > 0; }, 2000ms);
  const auto cpu = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return std::chrono::seconds(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           std::chrono::microseconds(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  };
  const auto cpu_before = cpu();
  if (paused) std::this_thread::sleep_for(60ms);  // well within the 200 ms it would wait
  const auto cpu_used = std::chrono::duration_cast<std::chrono::milliseconds>(cpu() - cpu_before);
  hold->release();
  ASSERT_TRUE(paused) << "worker 1 never stopped reading";
  EXPECT_LT(cpu_used.count(), 20) << "ms of CPU while worker 1 waited 60 ms for room";
  ASSERT_TRUE(gcs->wait_frames(kFrames, 10'000ms)) << gcs->received().frames.size() << " frames";
  EXPECT_EQ(rt.router.cross_worker_drops(), 0u);
  const auto seqs = attitude_seqs(*gcs);
  ASSERT_EQ(seqs.at(1).size(), size_t{kFrames});
  for (int k = 0; k < kFrames; ++k) ASSERT_EQ(seqs.at(1)[static_cast<size_t>(k)], static_cast<uint8_t>(k)) << k;
}

// A worker that drains nothing for long (stuck, say, in a component's callback) is not waited
// for: after 200 ms the other worker reads on, drops and counts what the stuck one's queue
// cannot take, and its own links keep getting everything. Four client endpoints dealt out in
// turn: worker 0 gets the first and third, worker 1 the second (the vehicle) and the fourth.
TEST(Workers, AStuckWorkerDoesNotHoldUpTheOthersLinks) {
  RouterOptions options;
  options.workers = 2;
  RouterThread rt(options);
  TcpListener listeners[4];
  for (auto& l : listeners) rt.router.add_endpoint(tcp_client(l.port()));
  rt.start();
  std::vector<std::unique_ptr<TcpPeer>> peers;
  for (auto& l : listeners) peers.push_back(l.accept());
  for (auto& p : peers) ASSERT_TRUE(p);
  ASSERT_TRUE(wait_until([&] {
    size_t up = 0;
    for (size_t e = 0; e < 4; ++e) up += rt.link_count(e);
    return up == 4;
  }));
  TcpPeer* vehicle = peers[1].get();
  TcpPeer* same_worker_gcs = peers[3].get();
  const auto hold = hold_worker0(rt, 5s);
  ASSERT_TRUE(hold);
  constexpr int kFrames = 12000;  // two links' worth for worker 0: far more than its ring holds
  vehicle->send(attitude_burst(kFrames));
  const bool all_while_stuck = same_worker_gcs->wait_frames(kFrames, 3000ms);
  hold->release();
  EXPECT_TRUE(all_while_stuck) << same_worker_gcs->received().frames.size() << " frames";
  EXPECT_GT(rt.router.cross_worker_drops(), 0u);
}

// A router whose one endpoint is a UDP server, with `workers` I/O workers; `adjust` may
// change the server's spec first.
struct UdpServerRouter {
  explicit UdpServerRouter(unsigned workers, const std::function<void(transport::EndpointSpec&)>& adjust = {},
                           transport::EndpointSpec::Placement placement = transport::EndpointSpec::Placement::kEven)
      : rt(with_workers(workers), placement), port(free_udp_port()) {
    auto spec = udp_server(port);
    if (adjust) adjust(spec);
    rt.router.add_endpoint(spec);
    rt.start();
  }
  static RouterOptions with_workers(unsigned workers) {
    RouterOptions options;
    options.workers = workers;
    return options;
  }
  // n peers, each of which has sent the server a HEARTBEAT (peer i as system 1 + i % 250,
  // component 1 + i / 250).
  std::vector<std::unique_ptr<UdpPeer>> peers_saying_hello(size_t n) const {
    std::vector<std::unique_ptr<UdpPeer>> peers;
    for (size_t i = 0; i < n; ++i) {
      peers.push_back(std::make_unique<UdpPeer>());
      peers.back()->send_to(port, heartbeat(static_cast<uint8_t>(1 + i % 250), static_cast<uint8_t>(1 + i / 250)));
    }
    return peers;
  }
  RouterThread rt;
  uint16_t port;
};

// A broadcast crosses to another worker once, carrying the list of that worker's destination
// links (in records of at most 256 of them): with 600 peers spread over two workers, every one
// of them gets the frame exactly once.
TEST(Workers, ABroadcastReachesHundredsOfLinksOnAnotherWorker) {
  constexpr size_t kPeers = 600;
  UdpServerRouter server(2, [](transport::EndpointSpec& spec) { spec.max_peers = kPeers + 10; });
  RouterThread& rt = server.rt;
  auto peers = server.peers_saying_hello(kPeers);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == kPeers; }, 10'000ms)) << rt.link_count(0);
  // A fleet this size is shared to within 1/32 (the hash does most of it; the router steers
  // only where the imbalance would pass that).
  const auto by_worker = rt.router.links_by_worker(0);
  EXPECT_LE(std::max(by_worker[0], by_worker[1]) - std::min(by_worker[0], by_worker[1]), kPeers / 32 + 1);
  for (auto& p : peers) p->clear();
  for (uint8_t i = 0; i < 3; ++i) peers[0]->send(attitude(1, 1, i + 1u, i));
  for (size_t i = 1; i < kPeers; ++i) {
    ASSERT_TRUE(wait_until([&] { return peers[i]->received().count_msgid(msg::Attitude::kId) >= 3; }, 5000ms))
        << "peer " << i << " got " << peers[i]->received().count_msgid(msg::Attitude::kId);
  }
  std::this_thread::sleep_for(20ms);
  for (size_t i = 1; i < kPeers; ++i) ASSERT_EQ(peers[i]->received().count_msgid(msg::Attitude::kId), 3u) << "peer " << i;
  EXPECT_EQ(peers[0]->received().count_msgid(msg::Attitude::kId), 0u);
  EXPECT_EQ(rt.router.cross_worker_drops(), 0u);
}

// Frames for an in-process component (worker 0) can reach user callbacks, which run on the
// router's thread: a worker that routed them wakes worker 0 rather than delivering itself.
TEST(Workers, FramesForAComponentAreDeliveredOnTheRoutersThread) {
  OneLinkPerWorker setup;
  ASSERT_TRUE(setup.up);
  RouterThread& rt = setup.rt;
  TcpPeer* vehicle = setup.peers[1].get();  // on worker 1; the component lives on worker 0
  Component me(rt.router, 255, 190);
  std::atomic<int> got{0}, elsewhere{0};
  const std::thread::id router_thread = rt.on_loop([] { return std::this_thread::get_id(); });
  auto sub = me.subscribe<msg::Attitude>([&](const msg::Attitude&, const protocol::FrameView&) {
    if (std::this_thread::get_id() != router_thread) ++elsewhere;
    ++got;
  });
  constexpr int kFrames = 20;
  for (int i = 0; i < kFrames; ++i) {
    vehicle->send(attitude(1, 1, static_cast<uint32_t>(i + 1), static_cast<uint8_t>(i)));
    std::this_thread::sleep_for(2ms);
  }
  ASSERT_TRUE(wait_until([&] { return got.load() == kFrames; }));
  EXPECT_EQ(elsewhere.load(), 0);
}

// Several workers share a listening port among themselves (SO_REUSEPORT), never with somebody
// else: a port another socket holds is refused at start, whether or not that socket would share.
// The ports the next n datagrams waiting at `fd` came from (fewer if the timeout passes).
std::vector<uint16_t> source_ports(int fd, size_t n, std::chrono::milliseconds timeout = 3000ms) {
  std::vector<uint16_t> ports;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  uint8_t buf[2048];
  while (ports.size() < n && std::chrono::steady_clock::now() < deadline) {
    sockaddr_in from{};
    socklen_t len = sizeof from;
    if (::recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &len) > 0) {
      ports.push_back(ntohs(from.sin_port));
    } else {
      std::this_thread::sleep_for(1ms);
    }
  }
  return ports;
}

// However the kernel's hash would spread them over the workers' sockets, a UDP server's peers
// are shared evenly among the workers (a worker that hears a new peer while another serves
// fewer links places it there, and the kernel is told to deliver the peer's datagrams there),
// even when they all arrive at once; each is one link, and replies come from the server's port
// whichever worker sends them (also when the server listens on every address).
TEST(Workers, UdpPeersAreSharedEvenlyAmongTheWorkers) {
  constexpr size_t kPeers = 24;
  for (const auto& [workers, address] : {std::pair{2u, "127.0.0.1"}, {3u, "127.0.0.1"}, {2u, "0.0.0.0"}}) {
    SCOPED_TRACE(fmt::format("{} workers, server on {}", workers, address));
    UdpServerRouter server(workers, [address = address](transport::EndpointSpec& spec) {
      spec.address = address;
      spec.coalesce = false;  // a datagram a frame, so that datagrams can be counted
    });
    RouterThread& rt = server.rt;
    const uint16_t port = server.port;
    auto peers = server.peers_saying_hello(kPeers);
    ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == kPeers; })) << rt.link_count(0);
    EXPECT_EQ(rt.router.links_by_worker(0), std::vector<size_t>(workers, kPeers / workers));

    for (auto& p : peers) p->poll(), p->clear();
    // From now on the kernel hands each peer's datagrams to the worker it lives on: none is
    // passed on between workers.
    const uint64_t passed_on = rt.router.endpoint_passed_on(0);
    for (size_t i = 0; i < kPeers; ++i) peers[i]->send(attitude(static_cast<uint8_t>(1 + i), 1, 1));
    for (size_t i = 0; i < kPeers; ++i) {
      const auto ports = source_ports(peers[i]->fd(), kPeers - 1);
      ASSERT_EQ(ports.size(), kPeers - 1) << "peer " << i;
      for (const uint16_t p : ports) ASSERT_EQ(p, port) << "peer " << i;
    }
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(rt.link_count(0), kPeers);
    EXPECT_EQ(rt.router.endpoint_passed_on(0), passed_on);
  }
}

// A server's peers are shared evenly among the workers whatever else the workers serve (a
// worker's work for a UDP link is what the link receives: what is sent to it is written by
// the worker that routes it); of two equal choices the worker that serves fewer links wins.
// With UDP clients dealt out two to worker 0 and one to worker 1, four peers go two and two
// (placing by every endpoint's links would make it one and three), and a fifth goes to worker 1.
TEST(Workers, AServersPeersAreSharedEvenlyWhateverElseTheWorkersServe) {
  RouterThread rt(UdpServerRouter::with_workers(2));
  UdpPeer ground[3];
  for (auto& g : ground) rt.router.add_endpoint(udp_client(g.port()));
  const uint16_t port = free_udp_port();
  rt.router.add_endpoint(udp_server(port));
  rt.start();
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) + rt.link_count(1) + rt.link_count(2) == 3; }));
  std::vector<std::unique_ptr<UdpPeer>> peers;
  for (uint8_t i = 0; i < 5; ++i) {
    peers.push_back(std::make_unique<UdpPeer>());
    peers.back()->send_to(port, heartbeat(static_cast<uint8_t>(1 + i), 1));
    if (i == 3) {
      ASSERT_TRUE(wait_until([&] { return rt.link_count(3) == 4; }));
      EXPECT_EQ(rt.router.links_by_worker(3), (std::vector<size_t>{2, 2}));
    }
  }
  ASSERT_TRUE(wait_until([&] { return rt.link_count(3) == 5; }));
  EXPECT_EQ(rt.router.links_by_worker(3), (std::vector<size_t>{2, 3}));
}

// A frame for a UDP link that another worker owns is written by the worker that routed it, on
// that link's socket, without a hand-over to the owner: four vehicles on two workers, three
// ground stations (UDP clients, dealt out two and one). Every frame arrives once, each
// vehicle's in order; the links' statistics count what the other worker wrote to them.
TEST(Workers, AWorkerWritesToUdpLinksOfAnotherWorkerItself) {
  constexpr size_t kVehicles = 4, kFrames = 200;
  RouterThread rt(UdpServerRouter::with_workers(2));
  UdpPeer ground[3];
  for (auto& g : ground) rt.router.add_endpoint(udp_client(g.port()));
  const uint16_t port = free_udp_port();
  auto spec = udp_server(port);
  spec.coalesce = false;
  rt.router.add_endpoint(spec);
  rt.start();
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) + rt.link_count(1) + rt.link_count(2) == 3; }));
  std::vector<std::unique_ptr<UdpPeer>> vehicles;
  for (size_t v = 0; v < kVehicles; ++v) {
    vehicles.push_back(std::make_unique<UdpPeer>());
    vehicles.back()->send_to(port, heartbeat(static_cast<uint8_t>(1 + v), 1));
  }
  ASSERT_TRUE(wait_until([&] { return rt.link_count(3) == kVehicles; }));
  ASSERT_EQ(rt.router.links_by_worker(3), (std::vector<size_t>{2, 2}));
  for (auto& g : ground) ASSERT_TRUE(g.wait_frames(kVehicles));
  for (auto& g : ground) g.clear();
  const uint64_t direct_before = rt.router.cross_worker_direct();
  for (size_t k = 0; k < kFrames; ++k) {
    for (size_t v = 0; v < kVehicles; ++v) {
      vehicles[v]->send(attitude(static_cast<uint8_t>(1 + v), 1, static_cast<uint32_t>(k + 1), static_cast<uint8_t>(k)));
    }
    if (k % 20 == 19) std::this_thread::sleep_for(1ms);
  }
  for (size_t e = 0; e < 3; ++e) {
    ASSERT_TRUE(ground[e].wait_frames(kVehicles * kFrames, 10'000ms)) << "ground " << e << ": " << ground[e].received().frames.size();
    std::this_thread::sleep_for(20ms);
    const auto seqs = attitude_seqs(ground[e]);
    ASSERT_EQ(seqs.size(), kVehicles);
    for (const auto& [sys, s] : seqs) {
      ASSERT_EQ(s.size(), kFrames) << "ground " << e << " from system " << int{sys};
      for (size_t k = 0; k < kFrames; ++k) ASSERT_EQ(s[k], static_cast<uint8_t>(k)) << "ground " << e << " from " << int{sys};
    }
    EXPECT_EQ(rt.link_counters(e).frames_out, kVehicles * (kFrames + 1)) << "ground " << e;
  }
  // Written directly: each vehicle's frame to the other worker's links, ground stations (one on
  // worker 1, two on worker 0) and vehicles (two each): 3 + 3 + 4 + 4 per round.
  EXPECT_EQ(rt.router.cross_worker_direct() - direct_before, 14 * kFrames);
}

// UDP peers that come and go (forgotten after 100 ms of silence, at the next of the server's
// once-a-second checks, then back) while the other worker writes to them: each link's target is freed only once no worker can still hold it
// (run under the sanitizers, a target freed too early is a use after free).
TEST(Workers, UdpPeersComeAndGoWhileAnotherWorkerWritesToThem) {
  constexpr size_t kSteady = 2, kFickle = 6, kRounds = 3;
  UdpServerRouter server(2, [](transport::EndpointSpec& spec) { spec.idle_timeout = 100; });
  RouterThread& rt = server.rt;
  const uint16_t port = server.port;
  auto steady = server.peers_saying_hello(kSteady);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == kSteady; }));
  std::vector<std::unique_ptr<UdpPeer>> fickle;
  for (size_t i = 0; i < kFickle; ++i) fickle.push_back(std::make_unique<UdpPeer>());
  uint8_t seq = 0;
  for (size_t round = 0; round < kRounds; ++round) {
    for (size_t i = 0; i < kFickle; ++i) fickle[i]->send_to(port, heartbeat(static_cast<uint8_t>(10 + i), 1));
    // The steady peers keep talking (and stay) while the fickle ones fall silent and go.
    const auto start = std::chrono::steady_clock::now();
    bool gone = false;
    for (int step = 0; step < 1500 && !gone; ++step) {  // at most ~3 s
      for (size_t s = 0; s < kSteady; ++s) steady[s]->send(attitude(static_cast<uint8_t>(1 + s), 1, 1, seq));
      ++seq;
      std::this_thread::sleep_for(2ms);
      gone = step % 10 == 9 && std::chrono::steady_clock::now() - start > 150ms && rt.link_count(0) == kSteady;
    }
    ASSERT_TRUE(gone) << "round " << round << ": " << rt.link_count(0) << " links";
  }
  for (auto& f : fickle) {
    f->poll();
    EXPECT_GT(f->received().count_msgid(msg::Attitude::kId), 0u) << "a fickle peer heard the steady ones";
  }
  EXPECT_GT(rt.router.cross_worker_direct(), 0u);
}

// New peers that start with a burst, all at once: frames that reached a worker before the
// kernel was told where their peer lives are passed on, so every frame arrives exactly once.
TEST(Workers, APeersFirstBurstArrivesWholeWhicheverWorkerTakesIt) {
  constexpr size_t kVehicles = 16, kFrames = 40;
  UdpServerRouter server(2);
  RouterThread& rt = server.rt;
  const uint16_t port = server.port;
  UdpPeer gcs;
  gcs.send_to(port, heartbeat(255, 190));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  std::vector<std::unique_ptr<UdpPeer>> vehicles;
  for (size_t v = 0; v < kVehicles; ++v) vehicles.push_back(std::make_unique<UdpPeer>());
  for (size_t k = 0; k < kFrames; ++k) {
    for (size_t v = 0; v < kVehicles; ++v) {
      vehicles[v]->send_to(port, attitude(static_cast<uint8_t>(1 + v), 1, static_cast<uint32_t>(k + 1), static_cast<uint8_t>(k)));
    }
  }
  ASSERT_TRUE(gcs.wait_frames(kVehicles * kFrames, 10'000ms)) << gcs.received().frames.size();
  std::this_thread::sleep_for(50ms);
  const auto seqs = attitude_seqs(gcs);
  ASSERT_EQ(seqs.size(), kVehicles);
  for (const auto& [sys, s] : seqs) EXPECT_EQ(s.size(), kFrames) << "from system " << int{sys};
  EXPECT_EQ(rt.link_count(0), kVehicles + 1);
  const auto by_worker = rt.router.links_by_worker(0);
  EXPECT_LE(std::max(by_worker[0], by_worker[1]) - std::min(by_worker[0], by_worker[1]), 1u);
}

// A peer forgotten for silence, on whichever worker it was placed, is new again when it
// speaks again, and is placed afresh.
TEST(Workers, APlacedPeerForgottenForSilenceComesBackAsNew) {
  constexpr size_t kPeers = 4;
  UdpServerRouter server(2, [](transport::EndpointSpec& spec) { spec.idle_timeout = 200; });
  RouterThread& rt = server.rt;
  auto peers = server.peers_saying_hello(kPeers);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == kPeers; }));
  EXPECT_EQ(rt.router.links_by_worker(0), (std::vector<size_t>{2, 2}));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 0; }, 5000ms)) << rt.link_count(0);
  for (size_t i = 0; i < kPeers; ++i) peers[i]->send(heartbeat(static_cast<uint8_t>(1 + i), 1));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == kPeers; })) << rt.link_count(0);
  EXPECT_EQ(rt.router.links_by_worker(0), (std::vector<size_t>{2, 2}));
  for (auto& p : peers) p->poll(), p->clear();
  peers[0]->send(attitude(1, 1, 1));
  for (size_t i = 1; i < kPeers; ++i) EXPECT_TRUE(peers[i]->wait_frames(1)) << "peer " << i;
}

// The adaptive placement: peers are placed evenly as they come, and once the router has been
// quiet for a measurement they move to one worker (two workers each waking for their own peers
// cost more than one waking for all). A moved peer's sources keep their routes: a frame
// targeted at one reaches it before it speaks again; and its datagrams now arrive where it lives.
TEST(Workers, AQuietRoutersPeersGatherOnOneWorkerAndKeepTheirRoutes) {
  constexpr size_t kPeers = 4;
  UdpServerRouter server(2, {}, transport::EndpointSpec::Placement::kAdaptive);
  RouterThread& rt = server.rt;
  auto peers = server.peers_saying_hello(kPeers);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == kPeers; }));
  ASSERT_TRUE(wait_until([&] { return rt.router.links_by_worker(0) == std::vector<size_t>{kPeers, 0}; }, 8000ms))
      << rt.router.links_by_worker(0)[0] << ", " << rt.router.links_by_worker(0)[1];
  EXPECT_GE(rt.router.endpoint_moved(0), kPeers / 2) << "placed two and two, then gathered";
  for (auto& p : peers) p->poll(), p->clear();
  for (size_t i = 1; i < kPeers; ++i) {
    peers[0]->send(command_long(1, 1, static_cast<uint8_t>(1 + i), 1));
  }
  for (size_t i = 1; i < kPeers; ++i) {
    EXPECT_TRUE(peers[i]->wait_frames(1)) << "peer " << i << ": a command targeted at it";
  }
  peers[1]->send(attitude(2, 1, 7));
  for (size_t i = 0; i < kPeers; ++i) {
    if (i != 1) {
      EXPECT_TRUE(peers[i]->wait_frames(i == 0 ? 1 : 2)) << "peer " << i << ": a broadcast";
    }
  }
  EXPECT_EQ(rt.link_count(0), kPeers) << "no peer became a second link";
  EXPECT_EQ(rt.router.links_by_worker(0), (std::vector<size_t>{kPeers, 0}));
  const uint64_t passed_on = rt.router.endpoint_passed_on(0);
  for (uint32_t round = 0; round < 5; ++round) {
    for (size_t i = 1; i < kPeers; ++i) peers[i]->send(attitude(static_cast<uint8_t>(1 + i), 1, round));
  }
  EXPECT_TRUE(peers[0]->wait_frames(1 + 5 * (kPeers - 1)));
  EXPECT_EQ(rt.router.endpoint_passed_on(0), passed_on) << "the kernel sends a moved peer's datagrams to its new worker";
}

// TCP clients, with the adaptive placement: the kernel hands each connection to a worker by
// a hash, and a router that is not busy keeps them all on worker 0 (their frames then cross
// no queue); they are served as any.
TEST(Workers, AQuietRoutersTcpClientsLiveOnOneWorker) {
  constexpr size_t kClients = 6;
  RouterOptions options;
  options.workers = 2;
  RouterThread rt(options, transport::EndpointSpec::Placement::kAdaptive);
  const uint16_t port = free_tcp_port();
  rt.router.add_endpoint(tcp_server(port));
  rt.start();
  std::vector<std::unique_ptr<TcpPeer>> clients;
  for (size_t i = 0; i < kClients; ++i) clients.push_back(std::make_unique<TcpPeer>(port));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == kClients; })) << rt.link_count(0);
  EXPECT_EQ(rt.router.links_by_worker(0), (std::vector<size_t>{kClients, 0}));
  clients[0]->send(heartbeat(1, 1));
  for (size_t i = 1; i < kClients; ++i) EXPECT_TRUE(clients[i]->wait_frames(1)) << "client " << i;
  clients[3]->send(command_long(200, 1, 1, 1));
  EXPECT_TRUE(clients[0]->wait_frames(1)) << "a command for the first client's system";
}

TEST(Workers, APortSomeoneElseHoldsIsRefused) {
  for (const int type : {SOCK_DGRAM, SOCK_STREAM}) {
    for (const bool holder_shares : {false, true}) {
      const int holder = ::socket(AF_INET, type, 0);
      const int one = 1;
      if (holder_shares) ::setsockopt(holder, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
      if (type == SOCK_STREAM) ::listen(holder, 1);
      socklen_t len = sizeof a;
      ::getsockname(holder, reinterpret_cast<sockaddr*>(&a), &len);
      const uint16_t port = ntohs(a.sin_port);
      for (const unsigned workers : {1u, 3u}) {
        RouterOptions options;
        options.workers = workers;
        Router router(options);
        router.add_endpoint(type == SOCK_DGRAM ? udp_server(port) : tcp_server(port));
        EXPECT_THROW(router.start(), std::runtime_error)
            << (type == SOCK_DGRAM ? "UDP" : "TCP") << ", holder shares: " << holder_shares << ", workers: " << workers;
      }
      ::close(holder);
    }
  }
}

}  // namespace
}  // namespace mavswitch::test
