// The shared structures of the multi-worker data path with real threads (these run under
// ThreadSanitizer in CI): the frame handover between a producer and a consumer thread, and one
// Routing decided on by two threads while a third adds and removes links and ages routes out.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "dialect/builtin.hpp"
#include "e2e/peers.hpp"
#include "protocol/parser.hpp"
#include "router/frame_handover.hpp"
#include "routing/routing.hpp"

namespace mavswitch::test {
namespace {

TEST(Concurrency, FrameHandoverCarriesEveryFrameInOrderBetweenThreads) {
  constexpr uint32_t kFrames = 200'000;
  FrameHandover ring;
  std::atomic<bool> done{false};
  uint32_t received = 0;
  bool in_order = true;
  std::thread consumer([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (received < kFrames && std::chrono::steady_clock::now() < deadline) {
      ring.drain([&](routing::LinkId to, const protocol::FrameView& f) {
        uint32_t value;
        std::memcpy(&value, f.data(), sizeof value);
        in_order &= to == received % 1000 && value == received && f.size() == 8 + received % 64;
        ++received;
      });
    }
    done = true;
  });
  std::vector<uint8_t> bytes(8 + 64);
  for (uint32_t i = 0; i < kFrames && !done;) {
    std::memcpy(bytes.data(), &i, sizeof i);
    const auto size = static_cast<uint16_t>(8 + i % 64);
    const protocol::FrameView f(bytes.data(), size, 0, protocol::FrameView::kV2);
    if (ring.push(i % 1000, f, f.bytes())) {
      ++i;
      if (i % 32 == 0) ring.publish();  // batches, as a worker publishes once per loop turn
    } else {
      ring.publish();
      std::this_thread::yield();
    }
  }
  ring.publish();
  consumer.join();
  EXPECT_EQ(received, kFrames);
  EXPECT_TRUE(in_order);
}

TEST(Concurrency, OneRoutingDecidesOnSeveralThreadsWhileLinksComeAndGo) {
  routing::Routing r;
  r.set_route_timeout(5);
  std::vector<routing::LinkId> stable;
  for (int i = 0; i < 8; ++i) stable.push_back(r.add_link(routing::LinkPolicy{}));
  routing::RoutingContext& second = r.add_context();
  std::vector<Bytes> frames;
  for (uint8_t s = 1; s <= 8; ++s) frames.push_back(heartbeat(s, 1));
  for (uint8_t s = 1; s <= 8; ++s) frames.push_back(command_long(s, 1, static_cast<uint8_t>(9 - s), 1));
  std::vector<protocol::FrameView> views;
  for (const auto& f : frames) {
    views.push_back(protocol::probe_frame(dialect::builtin::message_table(), f.data(), f.size()).frame);
  }

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> deliveries{0};
  auto decide = [&](routing::RoutingContext& ctx, int offset) {
    uint64_t n = 0;
    for (int i = 0; i < 50'000; ++i) {
      const auto& f = views[static_cast<size_t>(i + offset) % views.size()];
      r.route(ctx, stable[f.sysid() - 1u], f, i / 1000, [&](routing::LinkId to) {
        ++n;
        EXPECT_NE(to, stable[f.sysid() - 1u]) << "never back where it came from";
      });
    }
    deliveries += n;
  };
  std::thread churn([&] {  // links come and go; routes age out
    for (int i = 0; i < 2000 && !stop; ++i) {
      const routing::LinkId l = r.add_link(routing::LinkPolicy{});
      if (i % 3 == 0) r.expire(i / 40);
      r.remove_link(l);
    }
  });
  std::thread a([&] { decide(r.context(0), 0); });
  std::thread b([&] { decide(second, 5); });
  a.join();
  b.join();
  stop = true;
  churn.join();
  EXPECT_GT(deliveries.load(), 0u);
  EXPECT_EQ(r.stats().frames, 100'000u) << "both contexts' counters add up";
}

}  // namespace
}  // namespace mavswitch::test
