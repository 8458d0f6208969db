// The event loop's timers: they fire when due (not before), periodic ones keep firing, a
// cancelled one never does, and one added by a callback is picked up. And input held back: a
// held fd is not reported readable, keeps its other interests, and is reported once released.
// Posted work runs, or is destroyed unrun the moment the loop will not run it. Every test ends
// the loop itself, with a deadline timer as a backstop.
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "transport/clock.hpp"
#include "transport/event_loop.hpp"

using mavswitch::transport::EventLoop;
using mavswitch::transport::Millis;
using mavswitch::transport::now_ms;

namespace {
// Runs the loop until it stops, or for at most two seconds.
void run_bounded(EventLoop& loop) {
  loop.after(2000, [&] {
    ADD_FAILURE() << "the loop did not finish in time";
    loop.stop();
  });
  loop.run();
}
}  // namespace

TEST(EventLoopTimers, OneShotFiresOnceWhenDueNotBefore) {
  EventLoop loop;
  const Millis start = now_ms();
  std::vector<Millis> fired;
  loop.after(30, [&] { fired.push_back(now_ms() - start); });
  loop.after(80, [&] { loop.stop(); });
  run_bounded(loop);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_GE(fired[0], 30);
  EXPECT_LT(fired[0], 80);
}

TEST(EventLoopTimers, PeriodicKeepsFiringAndCancelledNeverFires) {
  EventLoop loop;
  int ticks = 0, cancelled_fired = 0;
  loop.every(10, [&] {
    if (++ticks == 5) loop.stop();
  });
  const auto doomed = loop.after(5, [&] { ++cancelled_fired; });  // the earliest: the fd is set for it
  loop.cancel(doomed);
  run_bounded(loop);
  EXPECT_EQ(ticks, 5);
  EXPECT_EQ(cancelled_fired, 0);
}

TEST(EventLoopTimers, ATimerAddedByACallbackIsPickedUp) {
  EventLoop loop;
  bool inner = false;
  loop.after(10, [&] {
    loop.after(10, [&] {
      inner = true;
      loop.stop();
    });
  });
  run_bounded(loop);
  EXPECT_TRUE(inner);
}

TEST(EventLoopTimers, AnEarlierTimerAddedLaterStillFiresFirst) {
  EventLoop loop;
  std::vector<int> order;
  loop.after(200, [&] {
    order.push_back(2);
    loop.stop();
  });
  loop.after(20, [&] {
    order.push_back(0);
    loop.after(10, [&] { order.push_back(1); });  // earlier than the armed 200 ms
  });
  run_bounded(loop);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

namespace {
struct Recorder final : EventLoop::Handler {
  std::function<void(uint32_t)> on;
  void on_io(uint32_t events) override { on(events); }
};
}  // namespace

// A socket with unread data, held: 20 ms of nothing; then asked for writable as well, it is
// reported writable (not readable) while still held; released, it is reported readable.
TEST(EventLoopInput, AHeldFdIsReportedForItsOtherInterestsOnlyUntilReleased) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair), 0);
  ASSERT_EQ(write(pair[0], "x", 1), 1);  // pair[1] is readable, and stays unread
  EventLoop loop;
  bool held = true;
  int readable = 0, writable = 0;
  Recorder recorder;
  recorder.on = [&](uint32_t events) {
    if (events & EPOLLIN) {
      ++readable;
      EXPECT_FALSE(held) << "reported readable while held";
      loop.stop();
    }
    if ((events & EPOLLOUT) && writable++ == 0) {
      loop.modify(pair[1], EPOLLIN);  // writable once is enough; still held
      loop.after(20, [&] {
        held = false;
        loop.release_input();
      });
    }
  };
  loop.add(pair[1], EPOLLIN, &recorder);
  loop.hold_input(pair[1]);
  EXPECT_TRUE(loop.holding_input());
  loop.after(20, [&] { loop.modify(pair[1], EPOLLIN | EPOLLOUT); });
  run_bounded(loop);
  EXPECT_EQ(writable, 1);
  EXPECT_GE(readable, 1);  // (stop() takes effect after the loop's next wake-up)
  EXPECT_FALSE(loop.holding_input());
  loop.remove(pair[1]);
  close(pair[0]);
  close(pair[1]);
}

// Ownership in code: while a thread runs the loop, an owner-only entry point called from any
// other thread aborts, naming itself (in the checked builds: Debug and the sanitizer builds);
// the same calls from the owner, or while nobody runs the loop, are fine.
TEST(EventLoop, AnOwnerOnlyCallOffTheOwnersThreadAborts) {
#ifndef MAVSWITCH_CHECK_OWNERS
  GTEST_SKIP() << "ownership checks are compiled out of this build (MAVSWITCH_CHECK_OWNERS=OFF)";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        EventLoop loop;
        std::thread owner([&] { loop.run(); });
        while (loop.in_loop_thread()) std::this_thread::yield();  // until the owner runs it
        loop.after(1, [] {});
      },
      "EventLoop::after called off the thread that owns its event loop");
  EventLoop loop;
  EXPECT_TRUE(loop.in_loop_thread()) << "not running: whoever sets it up";
  const auto id = loop.after(1000, [] {});
  loop.after(0, [&] {
    loop.cancel(id);  // the owner, inside run()
    loop.stop();
  });
  run_bounded(loop);
  EXPECT_EQ(loop.timer_count(), 1u) << "the backstop, still set";
#endif
}

namespace {
// Counts, through a shared flag, whether a job ran and whether it has been destroyed.
struct Witness {
  bool ran = false;
  bool destroyed = false;
};
std::function<void()> job(const std::shared_ptr<Witness>& w) {
  struct Mark {
    std::shared_ptr<Witness> w;
    ~Mark() { w->destroyed = true; }
  };
  auto mark = std::make_shared<Mark>();
  mark->w = w;
  return [mark = std::move(mark)] { mark->w->ran = true; };
}
}  // namespace

// post_and_wait's waiters (router.cpp) rely on this: the loop never keeps a job it will not run.
TEST(EventLoopPosts, WorkPostedBeforeTheFirstRunRuns) {
  EventLoop loop;
  auto w = std::make_shared<Witness>();
  loop.post(job(w));
  loop.post([&] { loop.stop(); });
  run_bounded(loop);
  EXPECT_TRUE(w->ran);
  EXPECT_TRUE(w->destroyed);
}

TEST(EventLoopPosts, WorkLeftQueuedWhenTheLoopStopsIsDestroyedUnrunAsRunReturns) {
  EventLoop loop;
  auto w = std::make_shared<Witness>();
  // stop() and the job that posts land in one batch: the loop is stopping when w's job is queued.
  loop.post([&] {
    loop.stop();
    loop.post([&] { loop.post(job(w)); });
  });
  run_bounded(loop);
  EXPECT_FALSE(w->ran);
  EXPECT_TRUE(w->destroyed);
}

TEST(EventLoopPosts, WorkPostedAfterRunReturnedIsDestroyedUnrunAtOnceAndANewRunTakesPostsAgain) {
  EventLoop loop;
  loop.post([&] { loop.stop(); });
  run_bounded(loop);
  auto late = std::make_shared<Witness>();
  loop.post(job(late));
  EXPECT_FALSE(late->ran);
  EXPECT_TRUE(late->destroyed);
  auto again = std::make_shared<Witness>();
  loop.after(0, [&] {
    loop.post(job(again));
    loop.post([&] { loop.stop(); });
  });
  run_bounded(loop);
  EXPECT_TRUE(again->ran);
}
