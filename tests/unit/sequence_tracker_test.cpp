// Loss per source from gaps in sequence numbers, and the bound on how many sources one link
// can make us track.
#include <gtest/gtest.h>

#include "routing/sequence_tracker.hpp"

using mavswitch::routing::SequenceTracker;

TEST(SequenceTracker, GapsCountAsLossPerSource) {
  SequenceTracker t;
  for (int seq : {10, 11, 14, 15}) t.record(1, 1, static_cast<uint8_t>(seq));  // 12 and 13 lost
  for (int seq : {254, 255, 0, 1}) t.record(2, 1, static_cast<uint8_t>(seq));  // wraps: nothing lost
  const auto& s = t.sources();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s.at(1 << 8 | 1).received, 4u);
  EXPECT_EQ(s.at(1 << 8 | 1).lost, 2u);
  EXPECT_EQ(s.at(2 << 8 | 1).lost, 0u);
}

TEST(SequenceTracker, AJumpBackIsAReorderingOrARestartNotALoss) {
  SequenceTracker t;
  for (int seq : {100, 101, 50, 51}) t.record(1, 1, static_cast<uint8_t>(seq));
  EXPECT_EQ(t.sources().at(1 << 8 | 1).lost, 0u);
}

// A sender that restarts counts from 0 again: 0..200 then 0..19 lost nothing and restarted
// once. A loss just before the counter wraps is still a loss.
TEST(SequenceTracker, ASequenceRestartIsCountedAsARestartNotAsLoss) {
  SequenceTracker t;
  for (int seq = 0; seq <= 200; ++seq) t.record(1, 1, static_cast<uint8_t>(seq));
  for (int seq = 0; seq < 20; ++seq) t.record(1, 1, static_cast<uint8_t>(seq));
  const auto& s = t.sources().at(1 << 8 | 1);
  EXPECT_EQ(s.received, 221u);
  EXPECT_EQ(s.lost, 0u);
  EXPECT_EQ(s.restarts, 1u);
  for (int seq : {253, 0}) t.record(2, 1, static_cast<uint8_t>(seq));  // 254 and 255 missing, then 0
  EXPECT_EQ(t.sources().at(2 << 8 | 1).restarts, 1u) << "ends at 0 past two frames: taken for a restart";
  for (int seq : {254, 0}) t.record(3, 1, static_cast<uint8_t>(seq));  // 255 lost
  EXPECT_EQ(t.sources().at(3 << 8 | 1).lost, 1u);
  EXPECT_EQ(t.sources().at(3 << 8 | 1).restarts, 0u);
  for (int seq : {0, 0, 0}) t.record(4, 1, static_cast<uint8_t>(seq));  // the same frame again
  EXPECT_EQ(t.sources().at(4 << 8 | 1).restarts, 0u) << "a copy is not a restart";
  EXPECT_EQ(t.sources().at(4 << 8 | 1).lost, 0u);
}

TEST(SequenceTracker, SourcesPastTheCapAreCountedNotTracked) {
  SequenceTracker t;
  for (unsigned key = 0; key < 65536; ++key) t.record(static_cast<uint8_t>(key >> 8), static_cast<uint8_t>(key), 0);
  EXPECT_EQ(t.sources().size(), SequenceTracker::kMaxSources);
  EXPECT_EQ(t.untracked_frames(), 65536u - SequenceTracker::kMaxSources);
  // A source tracked before the flood still is, losses and all.
  t.record(0, 0, 1);
  t.record(0, 0, 5);
  EXPECT_EQ(t.sources().at(0).received, 3u);
  EXPECT_EQ(t.sources().at(0).lost, 3u);
}
