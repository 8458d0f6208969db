// Links whose peer another thread serves (transport/handoff): the serving thread here is the
// test's own, the link's worker a loop on a thread of its own, as in the daemon.
#include "transport/handoff.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "dialect/builtin.hpp"
#include "support/frames.hpp"
#include "transport/endpoint.hpp"
#include "transport/event_loop.hpp"
#include "transport/resolver.hpp"

using namespace mavswitch;
using namespace mavswitch::transport;
using namespace std::chrono_literals;

namespace {

// A worker: its loop on a thread of its own, recording what its links do.
class Worker final : public LinkHost {
 public:
  Worker() : thread_([this] { loop_.run(); }) {}
  ~Worker() {
    loop_.stop();
    thread_.join();
  }
  void link_up(Link& link) override { up.push_back(&link); }
  void link_down(Link& link) override { std::erase(up, &link), ++downs; }
  void frame_in(Link&, const protocol::FrameView& f) override { heard.push_back(f.msgid()); }
  void needs_flush(Link& link) override { link.flush_pending = true; }
  const protocol::MessageTable& message_table() const override { return dialect::builtin::message_table(); }
  EventLoop& loop() override { return loop_; }
  Resolver& resolver() override { return resolver_; }

  // Runs f on the loop's thread and waits for it (bounded).
  template <typename F>
  void on_loop(F f) {
    std::promise<void> done;
    loop_.post([&] {
      f();
      done.set_value();
    });
    ASSERT_EQ(done.get_future().wait_for(5s), std::future_status::ready);
  }
  // Waits (bounded) until `ready`, read on the loop's thread, holds.
  template <typename F>
  bool until(F ready) {
    for (int i = 0; i < 500; ++i) {
      bool ok = false;
      on_loop([&] { ok = ready(); });
      if (ok) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

  std::vector<Link*> up;  // the loop's thread
  std::vector<uint32_t> heard;
  int downs = 0;

 private:
  EventLoop loop_;
  Resolver resolver_{loop_};
  std::thread thread_;
};

struct Served {
  Worker worker;
  std::shared_ptr<HandoffEntrance> entrance;
  std::unique_ptr<Endpoint> endpoint;
  explicit Served(size_t max_links, size_t max_frames = 512) {
    EndpointSpec spec;
    spec.kind = EndpointSpec::Kind::kMade;
    spec.name = "gcs";
    entrance = std::make_shared<HandoffEntrance>(max_links, max_frames);
    worker.on_loop([&] {
      endpoint = make_handoff_endpoint(spec, worker, entrance);
      endpoint->start();
    });
  }
  ~Served() {
    worker.on_loop([&] { endpoint.reset(); });
  }
};

}  // namespace

TEST(Handoff, BytesFromTheServingThreadAreParsedOnTheWorkerAsAnyLinksAre) {
  std::atomic<int> wakes{0};  // before `s`: its endpoint's end wakes the client once more
  Served s(4);
  const auto client = s.entrance->open("127.0.0.1:50000", [&] { ++wakes; });
  ASSERT_NE(client, nullptr);
  const test::Bytes a = test::heartbeat(255, 190), b = test::attitude(255, 190, 1);
  test::Bytes both = a;
  both.insert(both.end(), b.begin(), b.end());
  // A frame split across two messages, as a WebSocket client may send it.
  client->put(std::span(both).first(5));
  client->put(std::span(both).subspan(5));
  ASSERT_TRUE(s.worker.until([&] { return s.worker.heard.size() == 2; }));
  s.worker.on_loop([&] {
    ASSERT_EQ(s.worker.up.size(), 1u);
    EXPECT_EQ(s.worker.up[0]->peer(), "127.0.0.1:50000");
    EXPECT_EQ(s.worker.up[0]->counters().frames_in, 2u);
    EXPECT_EQ(s.worker.up[0]->counters().bytes_in, both.size());
    EXPECT_EQ(s.endpoint->describe(), "made gcs :0") << "no maker here: the window's WebSocketMaker says the path";
  });
}

TEST(Handoff, FramesGoOverInOneBatchAWakeAndABoundedQueue) {
  std::atomic<int> wakes{0};
  Served s(4, 8);
  const auto client = s.entrance->open("p", [&] { ++wakes; });
  ASSERT_TRUE(s.worker.until([&] { return s.worker.up.size() == 1; }));
  const test::Bytes frame = test::heartbeat(1, 1);
  int accepted = 0;
  s.worker.on_loop([&] {
    Link& link = *s.worker.up[0];
    for (int i = 0; i < 5; ++i) accepted += link.send(frame);
    link.flush();  // the loop iteration's end
    EXPECT_EQ(link.queued_bytes(), 5 * frame.size());
  });
  EXPECT_EQ(accepted, 5);
  EXPECT_EQ(wakes.load(), 1) << "one wake for the batch";
  s.worker.on_loop([&] {
    Link& link = *s.worker.up[0];
    for (int i = 0; i < 5; ++i) accepted += link.send(frame);  // 3 fit; the peer took nothing
    link.flush();
    EXPECT_EQ(link.counters().dropped_queue_full, 2u);
  });
  EXPECT_EQ(accepted, 8);
  EXPECT_EQ(wakes.load(), 1) << "no wake while the last batch waits";
  FrameBatch batch;
  client->take(batch);
  ASSERT_EQ(batch.sizes.size(), 8u);
  EXPECT_EQ(batch.bytes.size(), 8 * frame.size());
  EXPECT_TRUE(std::equal(frame.begin(), frame.end(), batch.bytes.begin()));
  batch.clear();
  s.worker.on_loop([&] {
    EXPECT_TRUE(s.worker.up[0]->send(frame)) << "room again once taken";
    s.worker.up[0]->flush();
  });
  EXPECT_EQ(wakes.load(), 2);
}

TEST(Handoff, MaxClientsRefusesAndAPeerGoneMakesRoom) {
  Served s(2);
  const auto first = s.entrance->open("a", [] {});
  const auto second = s.entrance->open("b", [] {});
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_FALSE(s.entrance->has_room());
  EXPECT_EQ(s.entrance->open("c", [] {}), nullptr);
  EXPECT_EQ(s.entrance->refused(), 2u);
  ASSERT_TRUE(s.worker.until([&] { return s.worker.up.size() == 2; }));
  first->close();
  first->put(test::heartbeat(1, 1));  // after close: nothing
  ASSERT_TRUE(s.worker.until([&] { return s.worker.up.size() == 1 && s.worker.downs == 1; }));
  s.worker.on_loop([&] { EXPECT_TRUE(s.worker.heard.empty()); });
  EXPECT_TRUE(s.entrance->has_room());
}

TEST(Handoff, AnEndpointThatClosesHangsUpOnItsPeersAndLetsNoneIn) {
  std::atomic<int> wakes{0};
  auto s = std::make_unique<Served>(4);
  const auto client = s->entrance->open("a", [&] { ++wakes; });
  ASSERT_TRUE(s->worker.until([&] { return s->worker.up.size() == 1; }));
  const auto entrance = s->entrance;
  s->worker.on_loop([&] { s->endpoint.reset(); });
  EXPECT_TRUE(client->closed());
  EXPECT_EQ(wakes.load(), 1) << "the serving thread is told";
  EXPECT_FALSE(entrance->has_room());
  EXPECT_EQ(entrance->open("b", [] {}), nullptr);
  client->put(test::heartbeat(1, 1));  // nothing to post to: dropped quietly
  client->close();
}

TEST(Handoff, APeerThatLeavesBeforeItsLinkIsUpLeavesNothing) {
  Served s(1);
  std::promise<void> hold;
  std::shared_future<void> held = hold.get_future().share();
  s.worker.loop().post([held] { held.wait_for(5s); });  // the worker is busy
  const auto client = s.entrance->open("a", [] {});
  ASSERT_NE(client, nullptr);
  client->close();
  hold.set_value();
  ASSERT_TRUE(s.worker.until([&] { return s.entrance->has_room(); }));
  s.worker.on_loop([&] { EXPECT_TRUE(s.worker.up.empty()); });
}
