// The process's one thread for blocking work (base/blocking_work): jobs run there, one at a time
// and in order, and a host name looked up there comes back on the loop that asked.
#include "base/blocking_work.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "transport/event_loop.hpp"
#include "transport/resolver.hpp"

using namespace mavswitch;
using namespace std::chrono_literals;

TEST(BlockingWork, JobsRunInTurnOnOneThreadThatIsNotTheCallers) {
  std::mutex mutex;
  std::vector<int> order;
  std::set<std::thread::id> threads;
  bool overlapped = false, running = false;
  std::promise<void> done;
  for (int i = 0; i < 20; ++i) {
    blocking_work::run([&, i] {
      {
        std::lock_guard lock(mutex);
        overlapped |= running;
        running = true;
        order.push_back(i);
        threads.insert(std::this_thread::get_id());
      }
      EXPECT_TRUE(blocking_work::on_thread());
      std::this_thread::sleep_for(1ms);
      std::lock_guard lock(mutex);
      running = false;
      if (i == 19) done.set_value();
    });
  }
  ASSERT_EQ(done.get_future().wait_for(10s), std::future_status::ready);
  std::lock_guard lock(mutex);
  EXPECT_FALSE(overlapped);
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(*threads.begin(), std::this_thread::get_id());
  EXPECT_FALSE(blocking_work::on_thread());
}

TEST(BlockingWork, AHostNameIsLookedUpThereAndAnsweredOnTheLoop) {
  transport::EventLoop loop;
  transport::Resolver resolver(loop);
  std::thread::id answered_on;
  size_t addresses = 0;
  std::string error;
  resolver.resolve("localhost", 5760, SOCK_STREAM, [&](std::vector<transport::SocketAddress> a, std::string e) {
    answered_on = std::this_thread::get_id();
    addresses = a.size();
    error = std::move(e);
    loop.stop();
  });
  const auto guard = loop.after(10'000, [&] { loop.stop(); });
  loop.run();
  loop.cancel(guard);
  EXPECT_EQ(answered_on, std::this_thread::get_id()) << "on the loop's thread";
  EXPECT_GE(addresses, 1u) << error;
}

TEST(BlockingWork, WhatMustRunThereAbortsElsewhere) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the blocking-work thread may be running
  EXPECT_DEATH(blocking_work::assert_on_thread("a reload"), "a reload called off the blocking-work thread");
}
