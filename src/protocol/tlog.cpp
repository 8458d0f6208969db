#include "protocol/tlog.hpp"

namespace mavswitch::protocol {

ParserStats read_tlog(const MessageTable& table, std::span<const uint8_t> log, TlogSink sink) {
  using S = Probe::Status;
  ParserStats stats;
  const size_t n = log.size();
  size_t i = 0;
  bool in_tail = false;  // an incomplete record was seen and no frame has followed it yet
  uint64_t tail_bytes = 0;
  auto skip = [&] {
    ++(in_tail ? tail_bytes : stats.bytes_skipped);
    ++i;
  };
  while (i < n) {
    const uint8_t* rec = log.data() + i;
    const size_t avail = n - i;
    const Probe probe = avail > kTlogTimestampLen
                            ? probe_frame(table, rec + kTlogTimestampLen, avail - kTlogTimestampLen)
                            : Probe{S::kNeedMore, {}};
    Probe::Status status = probe.status;
    if (status == S::kFrame && !probe.frame.verified()) {
      // Unverifiable: believe it only if the next record (or the end of the log) follows it.
      const size_t next = i + kTlogTimestampLen + probe.frame.size();
      if (next != n && (next + kTlogTimestampLen >= n ||
                        (log[next + kTlogTimestampLen] != kMagicV2 && log[next + kTlogTimestampLen] != kMagicV1))) {
        status = S::kNoMagic;
      }
    }
    switch (status) {
      case S::kFrame: {
        uint64_t t = 0;
        for (size_t k = 0; k < kTlogTimestampLen; ++k) t = (t << 8) | rec[k];
        stats.bytes_skipped += tail_bytes;  // what looked like a cut record was a false start
        tail_bytes = 0;
        in_tail = false;
        ++stats.frames;
        if (!probe.frame.verified()) ++stats.unknown_ids;
        sink(t, probe.frame);
        i += kTlogTimestampLen + probe.frame.size();
        continue;
      }
      case S::kNeedMore: in_tail = true; break;
      case S::kBadCrc: ++stats.crc_failures; break;
      case S::kBadIncompat: ++stats.bad_incompat_flags; break;
      case S::kNoMagic: break;
    }
    skip();
  }
  if (in_tail) {
    ++stats.truncated_frames;
    stats.truncated_bytes += tail_bytes;
  }
  return stats;
}

void put_tlog_timestamp(uint64_t time_usec, uint8_t* out) noexcept {
  for (size_t k = 0; k < kTlogTimestampLen; ++k) {
    out[k] = static_cast<uint8_t>(time_usec >> (8 * (kTlogTimestampLen - 1 - k)));
  }
}

}  // namespace mavswitch::protocol
