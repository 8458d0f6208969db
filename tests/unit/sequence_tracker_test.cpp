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

// Across an outage of the link (the fabric's whole cluster gone for seconds), a source's pace
// counts what the 8-bit numbers cannot: 1,000 frames a second, 3 s without any, is 3,000 lost,
// not 3,000 mod 256, also when the first frames after it are ones held back (in step). Without
// an outage, the same silence is taken as the numbers say.
TEST(SequenceTracker, ASilenceAcrossAnOutageIsCountedByTheSourcesPace) {
  // A silence of under a second (900 frames) would also fall inside the pace's window: the
  // outage must not count as the source's pace (it made 900 lost look like 132 ahead).
  for (const uint32_t silence : {3000u, 900u}) {
    for (const uint32_t held : {0u, 100u}) {
      SequenceTracker t;
      int64_t now = 1000;
      uint32_t seq = 0;
      for (; seq < 700; ++seq, now += 1) t.record_timed(1, 1, uint8_t(seq), now);
      now += silence;
      t.outage_ended();
      for (uint32_t k = 0; k < held; ++k, ++seq) t.record_timed(1, 1, uint8_t(seq), now);  // held, sent late
      seq += silence - held;                                                               // the rest never came
      for (int k = 0; k < 10; ++k, ++seq, ++now) t.record_timed(1, 1, uint8_t(seq), now);
      EXPECT_EQ(t.sources().at(1 << 8 | 1).lost, silence - held) << held << " held after " << silence << " ms";
    }
  }
  SequenceTracker paused;
  int64_t now = 1000;
  uint32_t seq = 0;
  for (; seq < 600; ++seq, now += 1) paused.record_timed(2, 1, uint8_t(seq), now);
  now += 3000;
  seq += 3000;  // 3000 mod 256 = 184 ahead: taken for a reordering, as ever
  for (int k = 0; k < 10; ++k, ++seq, ++now) paused.record_timed(2, 1, uint8_t(seq), now);
  EXPECT_EQ(paused.sources().at(2 << 8 | 1).lost, 0u);
}
