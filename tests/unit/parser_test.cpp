// The streaming parser: chunking, resynchronisation, truncation, signing, flags, unknown ids,
// zero-copy and zero-allocation behaviour.
#include <gtest/gtest.h>

#include <random>

#include "dialect/builtin.hpp"
#include "dialect/typed_message.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "protocol/parser.hpp"
#include "support/alloc_counter.hpp"
#include "support/frames.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;
using protocol::FrameView;
using protocol::ParserStats;
using test::ParsedFrame;

namespace {

// System 1's frames, by the tests' one builder; a signed-flag heartbeat for the signing cases.
std::vector<uint8_t> heartbeat_frame(uint8_t seq, uint8_t incompat = 0) {
  msg::Heartbeat hb;
  hb.type = 2;
  hb.autopilot = 3;
  hb.custom_mode = 1234;
  return test::frame_of(hb, {.seq = seq, .sysid = 1, .compid = 1, .incompat_flags = incompat});
}
std::vector<uint8_t> attitude_frame(uint8_t seq) { return test::attitude(1, 1, 1000u + seq, seq); }

void append(std::vector<uint8_t>& to, const std::vector<uint8_t>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

std::vector<uint8_t> capture() { return test::read_bytes(test::captures_dir() / "mavlink-v2-3412-packets.bin"); }

void expect_same_stats(const ParserStats& a, const ParserStats& b) {
  EXPECT_EQ(a.frames, b.frames);
  EXPECT_EQ(a.bytes_skipped, b.bytes_skipped);
  EXPECT_EQ(a.crc_failures, b.crc_failures);
  EXPECT_EQ(a.unknown_ids, b.unknown_ids);
  EXPECT_EQ(a.bad_incompat_flags, b.bad_incompat_flags);
  EXPECT_EQ(a.truncated_frames, b.truncated_frames);
  EXPECT_EQ(a.truncated_bytes, b.truncated_bytes);
}

}  // namespace

TEST(Parser, ChunkSizeDoesNotChangeTheFrames) {
  const auto data = capture();
  ParserStats whole_stats;
  const auto whole = test::parse_all(data, {}, &whole_stats);
  ASSERT_EQ(whole.size(), 3412u);

  std::mt19937 rng(1);
  std::vector<size_t> random_sizes;
  for (int i = 0; i < 1000; ++i) random_sizes.push_back(1 + rng() % 700);
  for (const auto& sizes : std::vector<std::vector<size_t>>{{1}, {2}, {3, 1, 7}, {279, 281}, {65536}, random_sizes}) {
    ParserStats stats;
    EXPECT_EQ(test::parse_all(data, sizes, &stats), whole) << "first chunk size " << sizes[0];
    expect_same_stats(stats, whole_stats);
  }
}

TEST(Parser, FindsEveryFrameBetweenGarbageAndCorruptedFrames) {
  const auto data = capture();
  const auto frames = test::parse_all(data, {});
  std::mt19937 rng(2);
  std::vector<uint8_t> noisy;
  uint64_t garbage = 0;
  uint64_t corrupted = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    const size_t n = rng() % 24;  // garbage without start bytes
    for (size_t k = 0; k < n; ++k) {
      uint8_t b;
      do b = static_cast<uint8_t>(rng());
      while (b == protocol::kMagicV1 || b == protocol::kMagicV2);
      noisy.push_back(b);
    }
    garbage += n;
    if (i % 10 == 0) {  // a damaged copy: its checksum byte flipped
      auto bad = frames[i].bytes;
      bad[bad.size() - 1] ^= 0x5A;
      append(noisy, bad);
      garbage += bad.size();
      ++corrupted;
    }
    append(noisy, frames[i].bytes);
  }
  for (const auto& sizes : std::vector<std::vector<size_t>>{{}, {1}, {13, 500}}) {
    ParserStats stats;
    EXPECT_EQ(test::parse_all(noisy, sizes, &stats), frames);
    // Each damaged copy fails its CRC; false starts inside damaged copies may fail too.
    EXPECT_GE(stats.crc_failures, corrupted);
    EXPECT_EQ(stats.bytes_skipped, garbage);
    EXPECT_EQ(stats.unknown_ids, 0u);
  }
}

TEST(Parser, BogusStartByteRightBeforeAFrame) {
  // A lone v2 start byte, then a lone v1 start byte, then real frames.
  std::vector<uint8_t> data{protocol::kMagicV2};
  append(data, attitude_frame(1));
  data.push_back(protocol::kMagicV1);
  append(data, attitude_frame(2));
  for (const auto& sizes : std::vector<std::vector<size_t>>{{}, {1}}) {
    ParserStats stats;
    const auto frames = test::parse_all(data, sizes, &stats);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].bytes, attitude_frame(1));
    EXPECT_EQ(frames[1].bytes, attitude_frame(2));
    EXPECT_EQ(stats.bytes_skipped, 2u);
    EXPECT_EQ(stats.truncated_frames, 0u);
  }
}

TEST(Parser, FalseStartClaimingMoreBytesThanTheStreamHoldsAtTheEnd) {
  // FD FF ... claims a 255-byte payload; the stream ends first, but a real frame hides behind it.
  std::vector<uint8_t> data{protocol::kMagicV2, 0xFF, 0x00, 0x00};
  append(data, heartbeat_frame(9));
  for (const auto& sizes : std::vector<std::vector<size_t>>{{}, {1}}) {
    ParserStats stats;
    const auto frames = test::parse_all(data, sizes, &stats);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].bytes, heartbeat_frame(9));
    EXPECT_EQ(stats.bytes_skipped, 4u);
    EXPECT_EQ(stats.truncated_frames, 0u);
  }
}

// A 10-byte header claiming a 255-byte payload, then whole frames: streaming, the parser waits
// for the claimed bytes; it knows the candidate is likely false (verified frames start inside
// it), and once the link says the stream went quiet it gives it up and hands out the frames.
TEST(Parser, AFalseStartIsGivenUpOnRequestWhenVerifiedFramesLieInsideIt) {
  std::vector<uint8_t> data{protocol::kMagicV2, 0xFF, 0, 0, 7, 1, 1, 0, 0, 0};
  append(data, heartbeat_frame(1));
  append(data, heartbeat_frame(2));
  protocol::FrameParser parser(dialect::builtin::message_table());
  std::vector<std::vector<uint8_t>> out;
  auto sink = [&](const FrameView& f) { out.emplace_back(f.data(), f.data() + f.size()); };
  parser.feed(data, sink);
  parser.flush(sink);
  EXPECT_TRUE(out.empty()) << "the candidate may still be completed";
  EXPECT_TRUE(parser.stalled_on_false_start());
  parser.drop_false_start(sink);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], heartbeat_frame(1));
  EXPECT_EQ(out[1], heartbeat_frame(2));
  EXPECT_EQ(parser.stats().bytes_skipped, 10u);
  EXPECT_FALSE(parser.stalled_on_false_start());

  // A frame merely split between reads is no false start: nothing verified lies inside it.
  protocol::FrameParser split(dialect::builtin::message_table());
  const auto frame = attitude_frame(3);
  split.feed({frame.data(), 12}, sink);
  split.flush(sink);
  EXPECT_FALSE(split.stalled_on_false_start());
}

TEST(Parser, TruncatedFinalFrameIsCounted) {
  auto data = capture();
  const auto all = test::parse_all(data, {});
  const size_t cut = 5;
  data.resize(data.size() - cut);
  for (const auto& sizes : std::vector<std::vector<size_t>>{{}, {1}, {100}}) {
    ParserStats stats;
    const auto frames = test::parse_all(data, sizes, &stats);
    ASSERT_EQ(frames.size(), all.size() - 1);
    EXPECT_EQ(stats.truncated_frames, 1u);
    EXPECT_EQ(stats.truncated_bytes, all.back().bytes.size() - cut);
    EXPECT_EQ(stats.bytes_skipped, 0u);
  }
}

TEST(Parser, SignedFramesCarryTheirSignature) {
  std::vector<uint8_t> data;
  for (uint8_t seq = 0; seq < 4; ++seq) {
    auto f = heartbeat_frame(seq, protocol::kIncompatSigned);
    for (size_t k = 0; k < protocol::kSignatureLen; ++k)
      f[f.size() - protocol::kSignatureLen + k] = static_cast<uint8_t>(0xA0 + k + seq);
    append(data, f);
  }
  protocol::FrameParser parser(dialect::builtin::message_table());
  int seen = 0;
  parser.feed(data, [&](const FrameView& f) {
    EXPECT_TRUE(f.is_signed());
    EXPECT_TRUE(f.verified());
    ASSERT_EQ(f.signature().size(), protocol::kSignatureLen);
    EXPECT_EQ(f.signature()[0], 0xA0 + seen);
    EXPECT_EQ(f.size(), heartbeat_frame(0).size() + protocol::kSignatureLen);
    ++seen;
  });
  parser.finish([](const FrameView&) {});
  EXPECT_EQ(seen, 4);
  EXPECT_EQ(parser.stats().bytes_skipped, 0u);
  EXPECT_EQ(test::parse_all(data, {1}).size(), 4u);
}

TEST(Parser, UnknownIncompatibilityFlagIsDroppedAndCounted) {
  auto bad = heartbeat_frame(1);
  bad[2] = 0x02;  // an incompatibility flag nobody defined
  std::vector<uint8_t> data = bad;
  append(data, heartbeat_frame(2));
  ParserStats stats;
  const auto frames = test::parse_all(data, {}, &stats);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].bytes, heartbeat_frame(2));
  EXPECT_EQ(stats.bad_incompat_flags, 1u);
  EXPECT_EQ(stats.bytes_skipped, bad.size());
}

TEST(Parser, UnknownMessageIdIsDelimitedAndFlaggedUnverified) {
  const uint8_t payload[5] = {1, 2, 3, 4, 5};
  std::vector<uint8_t> unknown(protocol::kMaxFrameLen);
  unknown.resize(protocol::encode_v2({.seq = 3, .sysid = 7, .compid = 9, .msgid = 0xABCDEF}, payload, 0x11, unknown));
  std::vector<uint8_t> data = unknown;
  append(data, heartbeat_frame(4));
  ParserStats stats;
  const auto frames = test::parse_all(data, {1}, &stats);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].bytes, unknown);
  EXPECT_FALSE(frames[0].verified);
  EXPECT_TRUE(frames[1].verified);
  EXPECT_EQ(stats.unknown_ids, 1u);
}

TEST(Parser, UnknownIdFrameAtTheEndWaitsForTheNextByteOrFlush) {
  const uint8_t payload[3] = {9, 8, 7};
  uint8_t unknown[protocol::kMaxFrameLen];
  const size_t n = protocol::encode_v2({.msgid = 0x123456}, payload, 0, unknown);
  protocol::FrameParser parser(dialect::builtin::message_table());
  int seen = 0;
  auto sink = [&](const FrameView& f) { seen += f.verified() ? 100 : 1; };
  parser.feed({unknown, n}, sink);
  EXPECT_EQ(seen, 0) << "cannot tell a frame from noise yet";
  parser.flush(sink);
  EXPECT_EQ(seen, 1) << "a read burst ended: hand it out";
  parser.flush(sink);
  EXPECT_EQ(seen, 1);
  const auto hb = heartbeat_frame(1);
  parser.feed(hb, sink);
  parser.flush(sink);
  EXPECT_EQ(seen, 101);
}

TEST(Parser, UnknownIdFalseStartCannotSwallowVerifiedFrames) {
  // A stray header claiming a 60-byte payload of an unknown id, right before real frames; its
  // claimed end lands exactly on the start of a real frame.
  const auto a = attitude_frame(1);
  const auto h = heartbeat_frame(2);
  std::vector<uint8_t> data{protocol::kMagicV2, 0, 0, 0, 0, 0, 0, 0x56, 0x34, 0x12};
  append(data, a);
  append(data, h);
  data[1] = static_cast<uint8_t>(a.size() + h.size() - 2);  // frame end = start of the next frame
  append(data, attitude_frame(3));
  for (const auto& sizes : std::vector<std::vector<size_t>>{{}, {1}, {7}}) {
    ParserStats stats;
    const auto frames = test::parse_all(data, sizes, &stats);
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].bytes, a);
    EXPECT_EQ(frames[1].bytes, h);
    EXPECT_EQ(stats.unknown_ids, 0u);
    EXPECT_EQ(stats.bytes_skipped, 10u);
  }
}

TEST(Parser, HeaderFieldsOfAV2Frame) {
  const auto data = attitude_frame(77);
  protocol::FrameParser parser(dialect::builtin::message_table());
  int seen = 0;
  parser.feed(data, [&](const FrameView& f) {
    EXPECT_EQ(f.data(), data.data()) << "a frame inside one chunk is a view into that chunk";
    EXPECT_EQ(f.version(), 2);
    EXPECT_EQ(f.seq(), 77);
    EXPECT_EQ(f.sysid(), 1);
    EXPECT_EQ(f.compid(), 1);
    EXPECT_EQ(f.msgid(), msg::Attitude::kId);
    EXPECT_FALSE(f.is_signed());
    ++seen;
  });
  EXPECT_EQ(seen, 1);
}

TEST(Parser, AllocatesNothingWhileParsing) {
  const auto data = capture();
  protocol::FrameParser parser(dialect::builtin::message_table());
  uint64_t frames = 0;
  auto sink = [&](const FrameView&) { ++frames; };
  test::AllocationCounter allocations;
  for (size_t pos = 0; pos < data.size(); pos += 97)
    parser.feed({data.data() + pos, std::min<size_t>(97, data.size() - pos)}, sink);
  parser.finish(sink);
  EXPECT_EQ(frames, 3412u);
  EXPECT_EQ(allocations.count(), 1u) << "only the carry buffer, the first time a frame spans two chunks";
}

TEST(Parser, AWholeFramesStreamNeedsNoCarryBuffer) {
  const auto data = capture();
  protocol::FrameParser parser(dialect::builtin::message_table());
  uint64_t frames = 0;
  auto sink = [&](const FrameView&) { ++frames; };
  test::AllocationCounter allocations;
  parser.feed(data, sink);  // one chunk holding whole frames: nothing to carry
  parser.finish(sink);
  EXPECT_EQ(frames, 3412u);
  EXPECT_EQ(allocations.count(), 0u);
}
