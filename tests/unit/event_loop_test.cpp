// The event loop's timers: they fire when due (not before), periodic ones keep firing, a
// cancelled one never does, and one added by a callback is picked up. Every test ends the loop
// itself, with a deadline timer as a backstop.
#include <gtest/gtest.h>

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
