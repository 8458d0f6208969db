// Epoch-based reclamation (router/epochs.hpp): an object retired while a thread may still hold
// it is not freed until that thread has announced a later epoch or sleeps; then it is.
#include "router/epochs.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace mavswitch {
namespace {

TEST(Epochs, NothingIsFreedUntilEveryThreadHasAnnounced) {
  Epochs epochs(2);
  epochs.announce(0);
  const uint64_t e = epochs.retire();
  EXPECT_FALSE(epochs.safe(e)) << "thread 1 never announced: it may hold anything";
  epochs.announce(1);
  EXPECT_FALSE(epochs.safe(e)) << "thread 0 announced before the retirement";
  epochs.announce(0);
  EXPECT_TRUE(epochs.safe(e));
}

TEST(Epochs, ASleepingThreadHoldsNothing) {
  Epochs epochs(3);
  for (size_t t = 0; t < 3; ++t) epochs.announce(t);
  const uint64_t e = epochs.retire();
  epochs.idle(1);
  epochs.idle(2);
  EXPECT_FALSE(epochs.safe(e));
  epochs.announce(0);
  EXPECT_TRUE(epochs.safe(e));
  epochs.announce(2);  // waking: what it reads now was published after the retirement
  EXPECT_TRUE(epochs.safe(e));
  const uint64_t later = epochs.retire();
  EXPECT_FALSE(epochs.safe(later)) << "thread 2 woke before this retirement";
}

// Two threads: one publishes a new object and retires the old one; the other reads the
// published pointer, uses it, and announces at its quiescent points. Nothing it reads has been
// freed (the freed object's value is poisoned before deletion): ThreadSanitizer and
// AddressSanitizer check the rest.
TEST(Epochs, AReaderNeverSeesAFreedObject) {
  struct Box {
    std::atomic<int> value{1};
  };
  Epochs epochs(2);
  std::atomic<Box*> published{new Box};
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread reader([&] {
    for (int i = 0; i < 20000; ++i) {
      epochs.announce(1);
      for (int k = 0; k < 4; ++k) {
        if (const Box* b = published.load(); b->value.load(std::memory_order_relaxed) != 1) ++bad;
      }
      if (i % 64 == 0) epochs.idle(1);
    }
    epochs.idle(1);
    done = true;
  });
  std::vector<std::pair<uint64_t, Box*>> retired;
  for (int i = 0; i < 20000 && !done; ++i) {
    epochs.announce(0);
    Box* old = published.exchange(new Box);
    retired.emplace_back(epochs.retire(), old);
    std::erase_if(retired, [&](const auto& r) {
      if (!epochs.safe(r.first)) return false;
      r.second->value.store(0, std::memory_order_relaxed);
      delete r.second;
      return true;
    });
  }
  reader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_LT(retired.size(), 20000u) << "some were freed while the reader ran";
  for (auto& r : retired) delete r.second;
  delete published.load();
}

}  // namespace
}  // namespace mavswitch
