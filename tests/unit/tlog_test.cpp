// The .tlog reader: record by record, timestamps never mistaken for frames, damage contained.
#include <gtest/gtest.h>

#include "dialect/builtin.hpp"
#include "protocol/tlog.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;

namespace {

struct Record {
  uint64_t time_usec;
  std::vector<uint8_t> frame;
  bool operator==(const Record&) const = default;
};

std::vector<Record> capture_records() {
  const auto frames = test::parse_all(test::read_bytes(test::captures_dir() / "mavlink-v2-3412-packets.bin"), {});
  std::vector<Record> records;
  // Timestamps full of start bytes: a reader that scanned for frames would trip on them.
  uint64_t t = 0xFDFE00FD00FEFD00ull;
  for (const auto& f : frames) records.push_back({t += 0x0101, f.bytes});
  return records;
}

std::vector<uint8_t> to_tlog(const std::vector<Record>& records) {
  std::vector<uint8_t> log;
  for (const auto& r : records) {
    uint8_t ts[protocol::kTlogTimestampLen];
    protocol::put_tlog_timestamp(r.time_usec, ts);
    log.insert(log.end(), ts, ts + sizeof ts);
    log.insert(log.end(), r.frame.begin(), r.frame.end());
  }
  return log;
}

std::vector<Record> read_back(const std::vector<uint8_t>& log, protocol::ParserStats* stats) {
  std::vector<Record> out;
  *stats = protocol::read_tlog(dialect::builtin::message_table(), log, [&](uint64_t t, const protocol::FrameView& f) {
    out.push_back({t, {f.bytes().begin(), f.bytes().end()}});
  });
  return out;
}

}  // namespace

TEST(Tlog, ReadsBackWhatWasWritten) {
  const auto records = capture_records();
  protocol::ParserStats stats;
  EXPECT_EQ(read_back(to_tlog(records), &stats), records);
  EXPECT_EQ(stats.frames, records.size());
  EXPECT_EQ(stats.bytes_skipped, 0u);
  EXPECT_EQ(stats.crc_failures, 0u);
}

TEST(Tlog, DamagedRecordLosesOnlyItself) {
  auto records = capture_records();
  auto log = to_tlog(records);
  // Corrupt the checksum of record 100's frame.
  size_t pos = 0;
  for (size_t i = 0; i < 100; ++i) pos += protocol::kTlogTimestampLen + records[i].frame.size();
  const size_t record_len = protocol::kTlogTimestampLen + records[100].frame.size();
  log[pos + record_len - 1] ^= 0xFF;
  protocol::ParserStats stats;
  const auto got = read_back(log, &stats);
  records.erase(records.begin() + 100);
  EXPECT_EQ(got, records);
  EXPECT_EQ(stats.bytes_skipped, record_len);
  EXPECT_GE(stats.crc_failures, 1u);
}

TEST(Tlog, CutFinalRecordIsCountedAsTruncated) {
  auto records = capture_records();
  auto log = to_tlog(records);
  log.resize(log.size() - 3);
  protocol::ParserStats stats;
  const auto got = read_back(log, &stats);
  EXPECT_EQ(got.size(), records.size() - 1);
  EXPECT_EQ(stats.truncated_frames, 1u);
  EXPECT_EQ(stats.truncated_bytes, protocol::kTlogTimestampLen + records.back().frame.size() - 3);
}

TEST(Tlog, TimestampIsBigEndianMicroseconds) {
  uint8_t ts[8];
  protocol::put_tlog_timestamp(0x0102030405060708ull, ts);
  EXPECT_EQ(ts[0], 0x01);
  EXPECT_EQ(ts[7], 0x08);
}
