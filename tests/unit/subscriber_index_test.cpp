// The subscriber index is a lookup, not a scan: a frame visits only the subscribers whose
// (source system | any) × (message id | all) key matches it.
#include <gtest/gtest.h>

#include <vector>

#include "library/subscriber_index.hpp"

using mavswitch::library_detail::Subscriber;
using mavswitch::library_detail::SubscriberIndex;

namespace {
std::shared_ptr<Subscriber> sub(uint64_t id, mavswitch::MessageFilter f) {
  auto s = std::make_shared<Subscriber>();
  s->id = id;
  s->filter = f;
  return s;
}
size_t visits(const SubscriberIndex& index, uint8_t sys, uint32_t msgid) {
  size_t n = 0;
  index.for_each_candidate(sys, msgid, [&](Subscriber&) { ++n; });
  return n;
}
}  // namespace

TEST(SubscriberIndex, OnlyMatchingKeysAreVisited) {
  SubscriberIndex index;
  for (uint32_t i = 0; i < 100; ++i) index = index.with(sub(i + 1, {.message_id = 1000 + i}));
  EXPECT_EQ(visits(index, 1, 30), 0u) << "100 subscribers elsewhere cost nothing here";
  index = index.with(sub(200, {.message_id = 30}));
  index = index.with(sub(201, {.source_system = 1}));
  index = index.with(sub(202, {.source_system = 1, .message_id = 30}));
  index = index.with(sub(203, {}));
  index = index.with(sub(204, {.source_system = 2, .message_id = 30}));
  EXPECT_EQ(visits(index, 1, 30), 4u);
  EXPECT_EQ(visits(index, 2, 30), 3u);
  EXPECT_EQ(visits(index, 3, 31), 1u);
  EXPECT_EQ(index.size(), 105u);
}

TEST(SubscriberIndex, AMessageNobodyNamedIsNotWanted) {
  SubscriberIndex index;
  EXPECT_FALSE(index.may_want(0));
  index = index.with(sub(1, {.message_id = 30})).with(sub(2, {.source_system = 1, .message_id = 12000}));
  EXPECT_TRUE(index.may_want(30));
  EXPECT_TRUE(index.may_want(12000));
  EXPECT_FALSE(index.may_want(33));
  EXPECT_FALSE(index.may_want(0));
  EXPECT_TRUE(index.may_want(30 + 1024)) << "ids share bits modulo 1,024: a lookup says no";
  EXPECT_EQ(visits(index, 1, 30 + 1024), 0u);
  EXPECT_TRUE(index.with(sub(3, {.source_system = 1})).may_want(33)) << "a subscriber to every message wants all";
  EXPECT_TRUE(index.with(sub(4, {})).may_want(33));
}

TEST(SubscriberIndex, CopyOnWriteLeavesTheOldSnapshotIntact) {
  const SubscriberIndex before = SubscriberIndex{}.with(sub(1, {})).with(sub(2, {}));
  const SubscriberIndex after = before.without(1);
  EXPECT_EQ(visits(before, 1, 1), 2u);
  EXPECT_EQ(visits(after, 1, 1), 1u);
  EXPECT_NE(before.find(1), nullptr);
  EXPECT_EQ(after.find(1), nullptr);
}

TEST(SubscriberIndex, ExactKeysFirstThenWiderOnesEachInSubscriptionOrder) {
  SubscriberIndex index;
  index = index.with(sub(1, {}));
  index = index.with(sub(2, {.message_id = 30}));
  index = index.with(sub(3, {.source_system = 1, .message_id = 30}));
  index = index.with(sub(4, {.source_system = 1}));
  index = index.with(sub(5, {.source_system = 1, .message_id = 30}));
  index = index.with(sub(6, {}));
  std::vector<uint64_t> order;
  index.for_each_candidate(1, 30, [&](Subscriber& s) { order.push_back(s.id); });
  EXPECT_EQ(order, (std::vector<uint64_t>{3, 5, 2, 4, 1, 6}));
}

TEST(SubscriberIndex, EveryOneOfManyKeysIsFoundAndOnlyIt) {
  // Thousands of distinct keys in one table: every probe sequence must end at its own key.
  SubscriberIndex index;
  for (uint32_t sys = 1; sys <= 50; ++sys) {
    for (uint32_t msg = 0; msg < 40; ++msg) {
      index = index.with(sub(sys * 1000 + msg, {.source_system = static_cast<uint8_t>(sys), .message_id = msg * 7}));
    }
  }
  for (uint32_t sys = 1; sys <= 50; ++sys) {
    for (uint32_t msg = 0; msg < 40; ++msg) {
      std::vector<uint64_t> ids;
      index.for_each_candidate(static_cast<uint8_t>(sys), msg * 7, [&](Subscriber& s) { ids.push_back(s.id); });
      ASSERT_EQ(ids, std::vector<uint64_t>{sys * 1000 + msg});
    }
  }
  EXPECT_EQ(visits(index, 51, 0), 0u);
  EXPECT_EQ(visits(index, 1, 1), 0u);
  index = index.without(1000);
  EXPECT_EQ(visits(index, 1, 0), 0u);
  EXPECT_EQ(visits(index, 1, 7), 1u);
  EXPECT_EQ(index.size(), 1999u);
}
