// The subscriber index is a lookup, not a scan: a frame visits only the subscribers whose
// (source system | any) × (message id | all) key matches it.
#include <gtest/gtest.h>

#include "api/subscriber_index.hpp"

using mavswitch::api_detail::Subscriber;
using mavswitch::api_detail::SubscriberIndex;

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

TEST(SubscriberIndex, CopyOnWriteLeavesTheOldSnapshotIntact) {
  const SubscriberIndex before = SubscriberIndex{}.with(sub(1, {})).with(sub(2, {}));
  const SubscriberIndex after = before.without(1);
  EXPECT_EQ(visits(before, 1, 1), 2u);
  EXPECT_EQ(visits(after, 1, 1), 1u);
  EXPECT_NE(before.find(1), nullptr);
  EXPECT_EQ(after.find(1), nullptr);
}
