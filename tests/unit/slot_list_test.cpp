// The lock-free list under the route table: what a reader walks is exactly what is held, across
// segments and the holes removals leave, and a reader running beside the writer sees only
// published slots.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "routing/slot_list.hpp"

namespace mavswitch::routing {
namespace {

struct Item {
  std::atomic<uint64_t> key{0};
  std::atomic<uint64_t> value{0};  // atomic: a reader may read it while the writer reuses the slot
};

std::set<uint64_t> keys(const SlotList<Item, 4>& list) {
  std::set<uint64_t> out;
  list.for_each([&](const Item& item, uint64_t key) {
    EXPECT_EQ(item.value.load(), key * 10) << "a slot is published only once filled in";
    out.insert(key);
  });
  return out;
}

void insert(SlotList<Item, 4>& list, uint64_t key) {
  Item& slot = list.claim();
  slot.value.store(key * 10);
  slot.key.store(key);
}

TEST(SlotList, WalksAndFindsWhatIsHeldAcrossSegmentsAndHoles) {
  SlotList<Item, 4> list;
  EXPECT_TRUE(keys(list).empty());
  for (uint64_t k = 1; k <= 10; ++k) insert(list, k);  // three segments of 4
  EXPECT_EQ(keys(list), (std::set<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  for (uint64_t k : {2u, 5u, 9u}) list.find(k)->key.store(0);
  EXPECT_EQ(keys(list), (std::set<uint64_t>{1, 3, 4, 6, 7, 8, 10}));
  EXPECT_EQ(list.find(5), nullptr);
  EXPECT_EQ(list.find(11), nullptr);
  ASSERT_NE(list.find(10), nullptr);
  EXPECT_EQ(list.find(10)->value.load(), 100u);
  // Holes are reused before the chain grows; new keys are found wherever they land.
  for (uint64_t k = 11; k <= 14; ++k) insert(list, k);
  EXPECT_EQ(keys(list), (std::set<uint64_t>{1, 3, 4, 6, 7, 8, 10, 11, 12, 13, 14}));
  for (uint64_t k = 11; k <= 14; ++k) EXPECT_NE(list.find(k), nullptr) << k;
}

// One writer inserts and removes while a reader walks (scripts/test.sh runs it under
// ThreadSanitizer): the reader never sees a key before its contents, and at the end sees
// exactly what is held. A value that no longer matches its key is allowed only when the slot
// has been removed and reused since the reader saw the key.
TEST(SlotList, AReaderBesideTheWriterSeesOnlyPublishedSlots) {
  SlotList<Item, 4> list;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done.load() && std::chrono::steady_clock::now() < until) {
      list.for_each([&](const Item& item, uint64_t key) {
        if (item.value.load() != key * 10) {
          ASSERT_NE(item.key.load(), key) << "published before filled in";
        }
      });
    }
  });
  std::set<uint64_t> held;
  for (uint64_t k = 1; k <= 2000; ++k) {
    insert(list, k);
    held.insert(k);
    if (k % 3 == 0) {  // remove an older one: a hole for the next insertion
      list.find(k - 2)->key.store(0);
      held.erase(k - 2);
    }
  }
  done = true;
  reader.join();
  EXPECT_EQ(keys(list), held);
}

}  // namespace
}  // namespace mavswitch::routing
