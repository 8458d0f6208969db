// Handover (base/handover.hpp): the one bounded handover between threads outside the frame ring.
// Its promises: one ring per batch, whatever the number of puts; the consumer takes all at once;
// the producer's rule bounds it; nothing is added once closed; a waiting consumer wakes on the
// first put and not before its timeout otherwise.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "base/handover.hpp"

namespace mavswitch {
namespace {

using Ints = std::vector<int>;

bool put_bounded(Handover<Ints>& h, int v, size_t most) {
  return h.put([&](Ints& waiting) {
    if (waiting.size() >= most) return false;
    waiting.push_back(v);
    return true;
  });
}

TEST(Handover, RingsOncePerBatchAndTakesItWhole) {
  int rings = 0;
  Handover<Ints> h([&] { ++rings; });
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(put_bounded(h, i, 3) || i >= 3);
  EXPECT_EQ(rings, 1) << "the first put into an empty batch rings; the others join it";
  EXPECT_FALSE(put_bounded(h, 9, 3)) << "the producer's bound refuses the new";
  Ints out{42};
  bool saw = false;
  h.take(out, [&](const Ints& taken) { saw = taken.size() == 3; });
  EXPECT_TRUE(saw) << "what must change with the take sees it under the lock";
  EXPECT_EQ(out, (Ints{0, 1, 2})) << "emptied first, then the whole batch";
  EXPECT_TRUE(put_bounded(h, 7, 3));
  EXPECT_EQ(rings, 2) << "a new batch, a new ring";
  h.take(out);
  EXPECT_EQ(out, Ints{7});
  h.take(out);
  EXPECT_TRUE(out.empty());
}

TEST(Handover, AddingNothingRingsNothing) {
  int rings = 0;
  Handover<Ints> h([&] { ++rings; });
  EXPECT_FALSE(h.put([](Ints&) { return true; }));
  EXPECT_EQ(rings, 0);
  EXPECT_EQ(h.look([](const Ints& w) { return w.size(); }), 0u);
}

TEST(Handover, NothingIsAddedOnceClosedAndWhatWaitedIsHandedBack) {
  int rings = 0;
  Handover<Ints> h([&] { ++rings; });
  EXPECT_TRUE(put_bounded(h, 1, 10));
  EXPECT_EQ(h.close(), Ints{1});
  EXPECT_TRUE(h.closed());
  EXPECT_FALSE(put_bounded(h, 2, 10));
  EXPECT_EQ(rings, 1);
  Ints out;
  EXPECT_FALSE(h.wait_take(out, std::chrono::seconds(10))) << "a closed handover does not make its consumer wait";
}

TEST(Handover, AWaitingConsumerWakesOnTheFirstPut) {
  Handover<Ints> h;
  Ints out;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(h.wait_take(out, std::chrono::milliseconds(20)));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(20));
  std::thread producer([&] { put_bounded(h, 5, 10); });
  // Bounded: the put above ends the wait long before this timeout.
  EXPECT_TRUE(h.wait_take(out, std::chrono::seconds(30)));
  producer.join();
  EXPECT_EQ(out, Ints{5});
}

}  // namespace
}  // namespace mavswitch
