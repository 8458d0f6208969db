// The cross-worker frame handover on one thread: nothing is visible before publish(), records
// come out whole and in order however batches meet, a full handover refuses a frame whole, and
// the producer is told to stop reading at half full and when its request for room is met.
#include <gtest/gtest.h>

#include <vector>

#include "router/frame_handover.hpp"

namespace mavswitch {
namespace {

protocol::FrameView view_of(const std::vector<uint8_t>& bytes) {
  return protocol::FrameView(bytes.data(), static_cast<uint16_t>(bytes.size()), 30, protocol::FrameView::kV2);
}

std::vector<uint8_t> frame_bytes(size_t size, uint8_t fill) { return std::vector<uint8_t>(size, fill); }

TEST(FrameHandover, NothingIsVisibleBeforePublish) {
  FrameHandover ring;
  const auto f = frame_bytes(40, 1);
  ASSERT_TRUE(ring.push(7, view_of(f), f));
  int seen = 0;
  ring.drain([&](routing::LinkId, const protocol::FrameView&) { ++seen; });
  EXPECT_EQ(seen, 0);
  EXPECT_TRUE(ring.publish());
  EXPECT_FALSE(ring.publish()) << "nothing new";
  ring.drain([&](routing::LinkId to, const protocol::FrameView& v) {
    ++seen;
    EXPECT_EQ(to, 7u);
    EXPECT_EQ(v.msgid(), 30u);
    EXPECT_TRUE(v.is_v2());
    EXPECT_EQ(std::vector<uint8_t>(v.bytes().begin(), v.bytes().end()), f);
  });
  EXPECT_EQ(seen, 1);
}

// A frame for several links of the consumer crosses once: one record, the frame copied once,
// and the consumer is handed it once per link, in the order given.
TEST(FrameHandover, OneRecordCarriesAFrameToSeveralLinks) {
  FrameHandover one_each, together;
  const auto f = frame_bytes(40, 9);
  const std::vector<routing::LinkId> to = {5, 3, 8, 1};
  for (routing::LinkId id : to) ASSERT_TRUE(one_each.push(id, view_of(f), f));
  ASSERT_TRUE(together.push(to, view_of(f), f));
  one_each.publish();
  together.publish();
  EXPECT_LT(together.pending_bytes() * 2, one_each.pending_bytes());
  std::vector<routing::LinkId> seen;
  together.drain([&](routing::LinkId id, const protocol::FrameView& v) {
    seen.push_back(id);
    EXPECT_EQ(std::vector<uint8_t>(v.bytes().begin(), v.bytes().end()), f);
  });
  EXPECT_EQ(seen, to);
}

// Records with several destinations, round after round of a full handover.
TEST(FrameHandover, RecordsForSeveralLinksComeOutWholeRoundAfterRound) {
  FrameHandover ring;
  uint32_t next = 0, expect = 0;
  for (int round = 0; round < 100; ++round) {
    for (;;) {
      const auto f = frame_bytes(17 + next % 200, static_cast<uint8_t>(next));
      std::vector<routing::LinkId> to(1 + next % 7);
      for (size_t k = 0; k < to.size(); ++k) to[k] = next * 8 + static_cast<uint32_t>(k);
      if (!ring.push(to, view_of(f), f)) break;
      ++next;
    }
    ring.publish();
    size_t k = 0;
    ring.drain([&](routing::LinkId id, const protocol::FrameView& v) {
      ASSERT_EQ(id, expect * 8 + k);
      ASSERT_EQ(v.size(), 17 + expect % 200);
      for (uint8_t b : v.bytes()) ASSERT_EQ(b, static_cast<uint8_t>(expect));
      if (++k == 1 + expect % 7) {
        k = 0;
        ++expect;
      }
    });
  }
  EXPECT_EQ(expect, next);
  EXPECT_GT(next, 10000u);
}

// The producer stops taking input at half full (published or not) and starts again once the
// consumer has drained below that.
TEST(FrameHandover, FillingFromHalfFullUntilDrained) {
  FrameHandover ring;
  const auto f = frame_bytes(40, 1);
  ASSERT_TRUE(ring.push(1, view_of(f), f));
  ring.publish();
  const size_t record = ring.pending_bytes();  // the frame, its header and destination
  size_t pushed = 1;
  while (!ring.filling()) {
    ASSERT_TRUE(ring.push(1, view_of(f), f));
    ++pushed;
  }
  EXPECT_GE(pushed * record, FrameHandover::kCapacity / 2);
  EXPECT_LE(pushed * record, FrameHandover::kCapacity / 2 + record);
  ring.publish();
  EXPECT_TRUE(ring.filling()) << "published and not drained: still taken";
  ring.drain([](routing::LinkId, const protocol::FrameView&) {});
  EXPECT_FALSE(ring.filling());
}

// A producer waiting for room asks while half of the capacity waits; the take that makes room
// answers once (the consumer then wakes it), and takes nobody asked about answer nothing. A
// request made when nothing much waits is not recorded: the producer sees the room itself.
TEST(FrameHandover, ADrainSaysWhenItMadeRoomSomeoneAskedFor) {
  FrameHandover ring;
  const auto f = frame_bytes(40, 1);
  const auto nothing = [](routing::LinkId, const protocol::FrameView&) {};
  ASSERT_TRUE(ring.push(1, view_of(f), f));
  ring.publish();
  EXPECT_FALSE(ring.drain(nothing)) << "nobody asked";
  ring.want_room();
  EXPECT_FALSE(ring.filling());
  ASSERT_TRUE(ring.push(1, view_of(f), f));
  ring.publish();
  EXPECT_FALSE(ring.drain(nothing)) << "asked with room to spare: nothing to answer";
  while (!ring.filling()) ASSERT_TRUE(ring.push(1, view_of(f), f));
  ring.publish();
  ring.want_room();
  EXPECT_TRUE(ring.filling());
  EXPECT_TRUE(ring.drain(nothing));
  EXPECT_FALSE(ring.filling());
  ASSERT_TRUE(ring.push(1, view_of(f), f));
  ring.publish();
  EXPECT_FALSE(ring.drain(nothing)) << "answered once per request";
}

// A batch published while the last one still waits joins it, in order; one taken leaves its
// storage to the next (no allocation once warm).
TEST(FrameHandover, APublishWhileABatchWaitsJoinsIt) {
  FrameHandover ring;
  for (uint8_t n = 0; n < 6; ++n) {
    const auto f = frame_bytes(20 + n, n);
    ASSERT_TRUE(ring.push(n, view_of(f), f));
    if (n % 2 == 1) {
      EXPECT_TRUE(ring.publish());
    }
  }
  uint8_t expect = 0;
  ring.drain([&](routing::LinkId to, const protocol::FrameView& v) {
    EXPECT_EQ(to, expect);
    EXPECT_EQ(v.size(), 20u + expect);
    ++expect;
  });
  EXPECT_EQ(expect, 6);
  EXPECT_EQ(ring.pending_bytes(), 0u);
}

// The consumer is rung when a batch starts to wait, not again while it waits.
TEST(FrameHandover, RingsOncePerBatchThatStartsToWait) {
  int rings = 0;
  FrameHandover ring([&] { ++rings; });
  const auto f = frame_bytes(40, 1);
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(ring.push(1, view_of(f), f));
    ring.publish();
    ASSERT_TRUE(ring.push(1, view_of(f), f));
    ring.publish();
    ring.drain([](routing::LinkId, const protocol::FrameView&) {});
  }
  EXPECT_EQ(rings, 3);
  EXPECT_FALSE(ring.publish()) << "nothing staged";
  EXPECT_EQ(rings, 3);
}

TEST(FrameHandover, AFullHandoverRefusesAFrameWholeAndLosesNothingTaken) {
  FrameHandover ring;
  // Sizes that do not divide the capacity, so it fills at every possible margin.
  uint8_t next_fill = 0, expect_fill = 0;
  size_t pushed = 0, drained = 0, refused = 0;
  for (int round = 0; round < 200; ++round) {
    for (;;) {
      const auto f = frame_bytes(17 + (next_fill % 200), next_fill);
      if (!ring.push(next_fill, view_of(f), f)) {
        ++refused;
        break;
      }
      ++next_fill;
      ++pushed;
    }
    ring.publish();
    ring.drain([&](routing::LinkId to, const protocol::FrameView& v) {
      ASSERT_EQ(to, expect_fill);
      ASSERT_EQ(v.size(), 17 + (expect_fill % 200));
      for (uint8_t b : v.bytes()) ASSERT_EQ(b, expect_fill);
      ++expect_fill;
      ++drained;
    });
  }
  EXPECT_EQ(pushed, drained);
  EXPECT_EQ(refused, 200u) << "each round filled it";
  EXPECT_GT(pushed, 200u * 1000) << "it holds thousands of frames";
}

}  // namespace
}  // namespace mavswitch
