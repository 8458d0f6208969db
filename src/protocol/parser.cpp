#include "protocol/parser.hpp"

#include <algorithm>
#include <cstring>

#include "protocol/crc.hpp"

namespace mavswitch::protocol {

ParserStats& ParserStats::operator+=(const ParserStats& o) noexcept {
  frames += o.frames;
  bytes_skipped += o.bytes_skipped;
  crc_failures += o.crc_failures;
  unknown_ids += o.unknown_ids;
  bad_incompat_flags += o.bad_incompat_flags;
  truncated_frames += o.truncated_frames;
  truncated_bytes += o.truncated_bytes;
  return *this;
}

Probe probe_frame(const MessageTable& table, const uint8_t* p, size_t avail) noexcept {
  using S = Probe::Status;
  if (avail == 0) return {S::kNeedMore, {}};
  size_t header_len;
  uint32_t msgid;
  uint8_t flags;
  if (p[0] == kMagicV2) {
    if (avail < kHeaderLenV2) return {S::kNeedMore, {}};
    if (p[2] & ~kKnownIncompatFlags) return {S::kBadIncompat, {}};
    header_len = kHeaderLenV2;
    msgid = static_cast<uint32_t>(p[7]) | (static_cast<uint32_t>(p[8]) << 8) | (static_cast<uint32_t>(p[9]) << 16);
    flags = FrameView::kV2;
  } else if (p[0] == kMagicV1) {
    if (avail < kHeaderLenV1) return {S::kNeedMore, {}};
    header_len = kHeaderLenV1;
    msgid = p[5];
    flags = 0;
  } else {
    return {S::kNoMagic, {}};
  }
  const size_t frame_len = frame_length(p, avail);
  if (avail < frame_len) return {S::kNeedMore, {}};

  const auto size = static_cast<uint16_t>(frame_len);
  const MessageInfo* info = table.find(msgid);
  if (info == nullptr) return {S::kFrame, FrameView(p, size, msgid, flags)};

  const size_t crc_pos = header_len + p[1];
  uint16_t crc = crc16(p + 1, crc_pos - 1);
  crc = crc16_accumulate(info->crc_extra, crc);
  if (crc != static_cast<uint16_t>(p[crc_pos] | (p[crc_pos + 1] << 8))) return {S::kBadCrc, {}};
  return {S::kFrame, FrameView(p, size, msgid, static_cast<uint8_t>(flags | FrameView::kVerified), info)};
}

FrameView view_checked(const MessageTable& table, std::span<const uint8_t> frame) noexcept {
  const uint8_t* p = frame.data();
  const auto size = static_cast<uint16_t>(frame.size());
  const bool v2 = p[0] == kMagicV2;
  const uint32_t msgid =
      v2 ? (static_cast<uint32_t>(p[7]) | (static_cast<uint32_t>(p[8]) << 8) | (static_cast<uint32_t>(p[9]) << 16))
         : p[5];
  const MessageInfo* info = table.find(msgid);
  const auto flags = static_cast<uint8_t>((v2 ? FrameView::kV2 : 0) | (info != nullptr ? FrameView::kVerified : 0));
  return FrameView(p, size, msgid, flags, info);
}

namespace {

constexpr bool is_start_byte(uint8_t b) noexcept { return b == kMagicV2 || b == kMagicV1; }

enum class Verdict { kAccept, kReject, kWait };

// Whether the unverified frame f, at buf[i..], belongs to a healthy stream (see parser.hpp).
// `final` means no more bytes will come for now, so what cannot be checked is given the benefit.
Verdict judge_unverified(const MessageTable& table, const uint8_t* buf, size_t i, size_t len, const FrameView& f,
                         bool final) {
  const size_t end = i + f.size();
  for (size_t k = i + 1; k < end; ++k) {
    if (!is_start_byte(buf[k])) continue;
    const Probe inner = probe_frame(table, buf + k, len - k);
    if (inner.status == Probe::Status::kFrame && inner.frame.verified()) return Verdict::kReject;
    if (inner.status == Probe::Status::kNeedMore && !final) return Verdict::kWait;
  }
  if (end == len) return final ? Verdict::kAccept : Verdict::kWait;
  return is_start_byte(buf[end]) ? Verdict::kAccept : Verdict::kReject;
}

}  // namespace

// Returns how many bytes of buf are settled. Streaming, it stops at the first candidate that
// needs more bytes; at the end of the stream such a candidate is either a false start (a frame
// is found behind it) or the truncated tail of the stream.
size_t FrameParser::scan(const uint8_t* buf, size_t len, Mode mode, FrameSink& sink) {
  const bool end_of_stream = mode == Mode::kEndOfStream;
  using S = Probe::Status;
  size_t i = 0;
  size_t tail_start = len;  // end of stream: where the first incomplete candidate began
  uint64_t tail_bytes = 0;

  auto skip = [&](size_t n) {
    if (tail_start != len)
      tail_bytes += n;
    else
      stats_.bytes_skipped += n;
    i += n;
  };

  while (i < len) {
    const uint8_t b = buf[i];
    if (b != kMagicV2 && b != kMagicV1) {
      // Garbage: jump to the next start byte of either version.
      const uint8_t* from = buf + i;
      const uint8_t* end = buf + len;
      const uint8_t* next = std::find_if(from, end, is_start_byte);
      skip(static_cast<size_t>(next - from));
      continue;
    }
    const Probe probe = probe_frame(*table_, buf + i, len - i);
    switch (probe.status) {
      case S::kFrame:
        if (!probe.frame.verified()) {
          const Verdict v = judge_unverified(*table_, buf, i, len, probe.frame, mode != Mode::kStreaming);
          if (v == Verdict::kWait) return i;
          if (v == Verdict::kReject) {
            skip(1);
            break;
          }
        }
        if (tail_start != len) {  // the incomplete candidate before this frame was a false start
          stats_.bytes_skipped += tail_bytes;
          tail_bytes = 0;
          tail_start = len;
        }
        ++stats_.frames;
        if (!probe.frame.verified()) ++stats_.unknown_ids;
        sink(probe.frame);
        i += probe.frame.size();
        break;
      case S::kNeedMore:
        if (!end_of_stream) return i;
        if (tail_start == len) tail_start = i;
        skip(1);
        break;
      case S::kBadIncompat:
        ++stats_.bad_incompat_flags;
        skip(1);
        break;
      case S::kBadCrc:
        ++stats_.crc_failures;
        skip(1);
        break;
      case S::kNoMagic:  // unreachable: b is a start byte
        skip(1);
        break;
    }
  }
  if (tail_start != len) {
    ++stats_.truncated_frames;
    stats_.truncated_bytes += tail_bytes;
  }
  return len;
}

void FrameParser::feed(std::span<const uint8_t> chunk, FrameSink sink) {
  size_t offset = 0;
  if (carry_len_ > 0) {
    const size_t old_len = carry_len_;
    const size_t borrowed = std::min(chunk.size(), kMaxDecisionLen);
    std::memcpy(carry_.get() + old_len, chunk.data(), borrowed);
    carry_len_ += borrowed;
    const size_t settled = scan(carry_.get(), carry_len_, Mode::kStreaming, sink);
    if (settled < old_len) {
      // Still undecided on a candidate that began in the old carry: then the whole chunk was
      // borrowed (kMaxDecisionLen bytes would have decided it).
      std::memmove(carry_.get(), carry_.get() + settled, carry_len_ - settled);
      carry_len_ -= settled;
      return;
    }
    carry_len_ = 0;
    offset = settled - old_len;  // continue in place, in the chunk itself
  }
  offset += scan(chunk.data() + offset, chunk.size() - offset, Mode::kStreaming, sink);
  carry_len_ = chunk.size() - offset;  // < kMaxDecisionLen: an undecided candidate
  if (carry_len_ == 0) return;
  if (!carry_) carry_ = std::make_unique<uint8_t[]>(kCarryCapacity);
  std::memcpy(carry_.get(), chunk.data() + offset, carry_len_);
}

void FrameParser::flush(FrameSink sink) {
  if (carry_len_ == 0) return;
  const size_t settled = scan(carry_.get(), carry_len_, Mode::kFlush, sink);
  std::memmove(carry_.get(), carry_.get() + settled, carry_len_ - settled);
  carry_len_ -= settled;
}

bool FrameParser::stalled_on_false_start() const noexcept {
  if (carry_len_ == 0) return false;
  const uint8_t* buf = carry_.get();
  if (probe_frame(*table_, buf, carry_len_).status != Probe::Status::kNeedMore) return false;
  for (size_t k = 1; k < carry_len_; ++k) {
    if (!is_start_byte(buf[k])) continue;
    const Probe inner = probe_frame(*table_, buf + k, carry_len_ - k);
    if (inner.status == Probe::Status::kFrame && inner.frame.verified()) return true;
  }
  return false;
}

void FrameParser::drop_false_start(FrameSink sink) {
  while (stalled_on_false_start()) {  // each turn settles at least the candidate's first byte
    ++stats_.bytes_skipped;
    const size_t settled = 1 + scan(carry_.get() + 1, carry_len_ - 1, Mode::kFlush, sink);
    std::memmove(carry_.get(), carry_.get() + settled, carry_len_ - settled);
    carry_len_ -= settled;
  }
}

void FrameParser::finish(FrameSink sink) {
  if (carry_len_ == 0) return;
  scan(carry_.get(), carry_len_, Mode::kEndOfStream, sink);
  carry_len_ = 0;
}

}  // namespace mavswitch::protocol
