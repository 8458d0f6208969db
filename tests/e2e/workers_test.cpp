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
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "e2e/router_fixture.hpp"
#include "library/component.hpp"
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

// Per source system: the time_boot_ms of its ATTITUDE frames, in arrival order (wider than the
// 8-bit sequence number, so a frame arriving a thousand late is seen as such).
std::map<uint8_t, std::vector<uint32_t>> attitude_times(Peer& peer) {
  std::map<uint8_t, std::vector<uint32_t>> out;
  for (const Bytes& f : peer.received().frames) {
    if (f[0] != protocol::kMagicV2 || (f[7] | f[8] << 8 | f[9] << 16) != msg::Attitude::kId) continue;
    out[f[5]].push_back(static_cast<uint32_t>(f[10] | f[11] << 8 | f[12] << 16 | f[13] << 24));
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
    if (round % 10 == 9) pace(1ms);  // bursts, as telemetry comes
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
  rt.router.settle();
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

// Keeps worker 0 (the router's own thread) busy in a task posted to its loop, as a component's
// long callback would, until released or `at_most` has passed; null if it never got busy.
// Shared with the task, which may outlive a failed test's scope.
struct Worker0Hold {
  std::mutex mutex;
  std::condition_variable changed;
  bool busy = false, released = false;
  void release() {
    const std::lock_guard lock(mutex);
    released = true;
    changed.notify_all();
  }
};
std::shared_ptr<Worker0Hold> hold_worker0(RouterThread& rt, std::chrono::milliseconds at_most) {
  auto hold = std::make_shared<Worker0Hold>();
  rt.router.event_loop().post([hold, at_most] {
    std::unique_lock lock(hold->mutex);
    hold->busy = true;
    hold->changed.notify_all();
    hold->changed.wait_for(lock, at_most, [&] { return hold->released; });
  });
  std::unique_lock lock(hold->mutex);
  return hold->changed.wait_for(lock, 3s, [&] { return hold->busy; }) ? hold : nullptr;
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
// kernel's socket buffer: nothing is dropped, everything arrives in order.
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
  hold->release();
  ASSERT_TRUE(paused) << "worker 1 never stopped reading";
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
  explicit UdpServerRouter(unsigned workers, const std::function<void(transport::EndpointSpec&)>& adjust = {})
      : rt(with_workers(workers)), port(free_udp_port()) {
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
// links (in records of at most 256 of them): with 600 peers that the kernel's hash spread over
// two workers, every one of them gets the frame exactly once.
TEST(Workers, ABroadcastReachesHundredsOfLinksOnAnotherWorker) {
  constexpr size_t kPeers = 600;
  UdpServerRouter server(2, [](transport::EndpointSpec& spec) { spec.max_peers = kPeers + 10; });
  RouterThread& rt = server.rt;
  auto peers = server.peers_saying_hello(kPeers);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == kPeers; }, 10'000ms)) << rt.link_count(0);
  const auto by_worker = rt.router.links_by_worker(0);
  ASSERT_GT(std::min(by_worker[0], by_worker[1]), 100u) << "the hash put peers on both workers";
  for (auto& p : peers) p->clear();
  for (uint8_t i = 0; i < 3; ++i) peers[0]->send(attitude(1, 1, i + 1u, i));
  for (size_t i = 1; i < kPeers; ++i) {
    ASSERT_TRUE(wait_until([&] { return peers[i]->received().count_msgid(msg::Attitude::kId) >= 3; }, 5000ms))
        << "peer " << i << " got " << peers[i]->received().count_msgid(msg::Attitude::kId);
  }
  rt.router.settle();
  for (size_t i = 1; i < kPeers; ++i)
    ASSERT_EQ(peers[i]->received().count_msgid(msg::Attitude::kId), 3u) << "peer " << i;
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
    pace(2ms);  // worker 0 goes back to sleep in between: it is woken for each
  }
  ASSERT_TRUE(wait_until([&] { return got.load() == kFrames; }));
  EXPECT_EQ(elsewhere.load(), 0);
}

// The worker that owns each link of endpoint `e`, by the link's peer ("127.0.0.1:port").
std::map<std::string, size_t> owners(RouterThread& rt, size_t e) {
  std::map<std::string, size_t> out;
  rt.router.for_each_link(e, [&](const Router::LinkReport& r) { out[r.link.peer()] = r.worker; });
  return out;
}

// A frame for a UDP link that another worker owns is written by the worker that routed it, on
// that link's socket, without a hand-over to the owner: four vehicles where the kernel's hash
// put them, three ground stations (UDP clients, dealt out two to worker 0 and one to worker 1).
// Every frame arrives once, each vehicle's in order; the links' statistics count what the other
// worker wrote to them, and the direct writes are exactly the deliveries that crossed workers.
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
  // Where everything lives: ground stations 0 and 2 on worker 0, 1 on worker 1; vehicles by hash.
  std::vector<size_t> ground_worker, vehicle_worker;
  for (size_t e = 0; e < 3; ++e) ground_worker.push_back(owners(rt, e).begin()->second);
  ASSERT_EQ(ground_worker, (std::vector<size_t>{0, 1, 0}));
  const auto by_peer = owners(rt, 3);
  for (auto& v : vehicles) vehicle_worker.push_back(by_peer.at("127.0.0.1:" + std::to_string(v->port())));
  size_t crossing = 0;  // per round: deliveries whose destination another worker owns
  for (size_t v = 0; v < kVehicles; ++v) {
    for (const size_t g : ground_worker) crossing += g != vehicle_worker[v];
    for (size_t o = 0; o < kVehicles; ++o) crossing += o != v && vehicle_worker[o] != vehicle_worker[v];
  }
  for (auto& g : ground) ASSERT_TRUE(g.wait_frames(kVehicles));
  for (auto& g : ground) g.clear();
  const uint64_t direct_before = rt.router.cross_worker_direct();
  for (size_t k = 0; k < kFrames; ++k) {
    for (size_t v = 0; v < kVehicles; ++v) {
      vehicles[v]->send(
          attitude(static_cast<uint8_t>(1 + v), 1, static_cast<uint32_t>(k + 1), static_cast<uint8_t>(k)));
    }
    if (k % 20 == 19) pace(1ms);  // bursts, as telemetry comes
  }
  for (size_t e = 0; e < 3; ++e) {
    ASSERT_TRUE(ground[e].wait_frames(kVehicles * kFrames, 10'000ms))
        << "ground " << e << ": " << ground[e].received().frames.size();
  }
  rt.router.settle();
  for (size_t e = 0; e < 3; ++e) {
    const auto seqs = attitude_seqs(ground[e]);
    ASSERT_EQ(seqs.size(), kVehicles);
    for (const auto& [sys, s] : seqs) {
      ASSERT_EQ(s.size(), kFrames) << "ground " << e << " from system " << int{sys};
      for (size_t k = 0; k < kFrames; ++k)
        ASSERT_EQ(s[k], static_cast<uint8_t>(k)) << "ground " << e << " from " << int{sys};
    }
    EXPECT_EQ(rt.link_counters(e).frames_out, kVehicles * (kFrames + 1)) << "ground " << e;
  }
  EXPECT_GT(crossing, 0u);
  EXPECT_EQ(rt.router.cross_worker_direct() - direct_before, crossing * kFrames);
}

// Plain shards: each UDP peer is one link, on the worker the kernel's hash delivered its first
// datagram to, and stays there whatever it sends; replies leave from the server's port
// whichever worker writes them. 24 peers on three workers, each heard by all the others.
TEST(Workers, AUdpPeerLivesOnTheWorkerTheKernelChoseForGood) {
  constexpr size_t kPeers = 24, kRounds = 20;
  UdpServerRouter server(3, [](transport::EndpointSpec& spec) { spec.coalesce = false; });
  RouterThread& rt = server.rt;
  auto peers = server.peers_saying_hello(kPeers);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == kPeers; })) << rt.link_count(0);
  const auto placed = owners(rt, 0);
  ASSERT_EQ(placed.size(), kPeers);
  rt.router.settle();
  for (auto& p : peers) p->poll();
  for (auto& p : peers) p->clear();  // the hellos: each heard those of the peers after it
  for (size_t round = 0; round < kRounds; ++round) {
    for (size_t i = 0; i < kPeers; ++i) {
      peers[i]->send(
          attitude(static_cast<uint8_t>(1 + i), 1, static_cast<uint32_t>(round + 1), static_cast<uint8_t>(round)));
    }
  }
  for (auto& p : peers) ASSERT_TRUE(p->wait_frames((kPeers - 1) * kRounds, 10'000ms)) << p->received().frames.size();
  rt.router.settle();
  EXPECT_EQ(owners(rt, 0), placed) << "no peer changed worker, none became a second link";
  for (size_t i = 0; i < kPeers; ++i) {
    EXPECT_EQ(peers[i]->received().count_msgid(msg::Attitude::kId), (kPeers - 1) * kRounds) << "peer " << i;
    for (const uint16_t from : peers[i]->received().source_ports) ASSERT_EQ(from, server.port) << "peer " << i;
  }
}

// Peers already sending while the server's workers bind their sockets, one after another (a
// flight controller streams whether or not the router is up). The kernel hands a datagram to a
// member of the port's group by a hash over the members bound so far, so one that came early
// would give its peer a link on a second worker once the group is whole, and every frame to
// that peer would go out twice. Each peer gets one link.
TEST(Workers, PeersSendingWhileTheServerStartsGetOneLinkEach) {
  constexpr size_t kPeers = 24;
  for (int start = 0; start < 10; ++start) {  // the window is short: open the server ten times
    RouterThread rt(UdpServerRouter::with_workers(3));
    const uint16_t port = free_udp_port();
    std::vector<std::unique_ptr<UdpPeer>> peers;
    for (size_t i = 0; i < kPeers; ++i) peers.push_back(std::make_unique<UdpPeer>());
    std::atomic<bool> started{false};
    std::atomic<size_t> rounds_after{0};
    std::thread sender([&] {
      // Until 200 rounds after the start, and 2 s at most.
      const auto deadline = std::chrono::steady_clock::now() + 2s;
      while (rounds_after < 200 && std::chrono::steady_clock::now() < deadline) {
        for (size_t i = 0; i < kPeers; ++i) peers[i]->send_to(port, heartbeat(static_cast<uint8_t>(1 + i), 1));
        if (started) ++rounds_after;
      }
    });
    rt.router.add_endpoint(udp_server(port));
    rt.start();
    started = true;
    sender.join();
    ASSERT_TRUE(wait_until([&] { return rt.link_count(0) >= kPeers; })) << rt.link_count(0);
    rt.router.settle();
    EXPECT_EQ(rt.link_count(0), kPeers) << "start " << start << ": a peer with a link on two workers";
  }
}

// Taps (the daemon's telemetry log) run on the router's thread only, fed by every worker on a
// ring of their own: with links on two workers the tap sees every frame once, in each
// source's order, and never runs on another thread.
TEST(Workers, ATapSeesEveryWorkersFramesOnTheRoutersThread) {
  std::map<uint8_t, std::vector<uint8_t>> by_source;
  std::atomic<int> off_thread{0};
  Router* router = nullptr;
  OneLinkPerWorker setup([&](Router& r) {
    router = &r;
    r.add_tap([&](const protocol::FrameView& f) {
      if (!router->on_loop_thread()) ++off_thread;
      if (f.msgid() == msg::Attitude::kId) by_source[f.sysid()].push_back(f.seq());
    });
  });
  ASSERT_TRUE(setup.up);
  RouterThread& rt = setup.rt;
  constexpr int kFrames = 200;
  for (int i = 0; i < kFrames; ++i) {
    for (uint8_t w = 0; w < 2; ++w) {
      setup.peers[w]->send(
          attitude(static_cast<uint8_t>(1 + w), 1, static_cast<uint32_t>(i + 1), static_cast<uint8_t>(i)));
    }
  }
  for (uint8_t w = 0; w < 2; ++w) ASSERT_TRUE(setup.peers[1 - w]->wait_frames(kFrames, 10'000ms));
  rt.router.settle();
  const auto seen = rt.on_loop([&] { return by_source; });
  ASSERT_EQ(seen.size(), 2u);
  for (const auto& [sys, seqs] : seen) {
    ASSERT_EQ(seqs.size(), size_t{kFrames}) << "from system " << int{sys};
    for (int k = 0; k < kFrames; ++k) ASSERT_EQ(seqs[static_cast<size_t>(k)], k) << "from system " << int{sys};
  }
  EXPECT_EQ(off_thread.load(), 0);
}

// UDP peers that come and go (forgotten after 100 ms of silence, at the next of the server's
// once-a-second checks, then back) while the other worker writes to them: each link's target is freed only once no
// worker can still hold it (run under the sanitizers, a target freed too early is a use after free).
TEST(Workers, UdpPeersComeAndGoWhileAnotherWorkerWritesToThem) {
  // The kernel's hash places each peer: with 16 of them, all on one worker (nothing would cross)
  // comes once in 32,768 runs; with the 8 this had, once in 128, and it did.
  constexpr size_t kSteady = 2, kFickle = 14, kRounds = 3;
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
      pace(2ms);  // a steady stream, while the others fall silent
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

// Several workers share a listening port among themselves (SO_REUSEPORT), never with somebody
// else: a port another socket holds is refused at start, whether or not that socket would share.
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

namespace mavswitch::test {
namespace {

// Threads that keep every core busy until stopped (or a deadline), so the workers are
// descheduled at random moments as on a loaded companion computer.
class CpuLoad {
 public:
  CpuLoad() {
    const auto until = std::chrono::steady_clock::now() + 20s;
    for (unsigned k = 0; k < std::max(2u, std::thread::hardware_concurrency()); ++k) {
      threads_.emplace_back([this, until] {
        volatile uint64_t x = 0;
        while (!stop_.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < until) x = x + 1;
      });
    }
  }
  ~CpuLoad() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace

// One busy source's frames keep their order on every way they leave: to a UDP ground station
// (written by whichever worker routed them) and a TCP one (handed over through a ring), with
// every core loaded. Peer moves once reordered hundreds of frames here; plain shards must not.
TEST(Workers, OneSourcesOrderHoldsAcrossWorkersUnderCpuLoad) {
  RouterOptions two;
  two.workers = 2;
  RouterThread rt(two, RouterThread::Exactly{});
  const uint16_t udp_port = free_udp_port(), tcp_port = free_tcp_port();
  rt.router.add_endpoint(udp_server(udp_port));
  rt.router.add_endpoint(tcp_server(tcp_port));
  rt.start();
  std::vector<std::unique_ptr<Peer>> gcs;
  for (int i = 0; i < 3; ++i) {
    auto p = std::make_unique<UdpPeer>();
    p->send_to(udp_port, heartbeat(static_cast<uint8_t>(200 + i), 190));
    gcs.push_back(std::move(p));
  }
  for (int i = 0; i < 2; ++i) {
    gcs.push_back(std::make_unique<TcpPeer>(tcp_port));
    gcs.back()->send(heartbeat(static_cast<uint8_t>(220 + i), 190));
  }
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 3 && rt.link_count(1) == 2; }));
  UdpPeer vehicle;
  vehicle.send_to(udp_port, heartbeat(1, 1));
  for (auto& g : gcs) ASSERT_TRUE(g->wait_frames(1));
  for (auto& g : gcs) g->clear();

  constexpr uint32_t kFrames = 20'000;
  {
    CpuLoad load;
    for (uint32_t i = 1; i <= kFrames; ++i) {
      vehicle.send(attitude(1, 1, i, static_cast<uint8_t>(i)));
      if (i % 200 == 0) {
        pace(1ms);                      // bursts, as telemetry comes
        for (auto& g : gcs) g->poll();  // keep the ground stations' buffers from overflowing
      }
    }
  }
  for (auto& g : gcs) {
    g->wait_frames(kFrames, 5000ms);  // what is lost under load is not the question here
    const auto times = attitude_times(*g);
    ASSERT_EQ(times.size(), 1u);
    const std::vector<uint32_t>& t = times.begin()->second;
    EXPECT_GT(t.size(), kFrames / 4) << "most frames arrive";
    for (size_t k = 1; k < t.size(); ++k) ASSERT_LT(t[k - 1], t[k]) << "frame " << k << " arrived out of order";
  }
}

}  // namespace mavswitch::test
