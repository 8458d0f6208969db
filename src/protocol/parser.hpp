// The streaming frame parser. Bytes go in as chunks of any size; each valid frame comes out as
// a FrameView pointing into the chunk itself (or, for the rare frame split across two chunks,
// into a small carry buffer inside the parser). No heap allocation, ever.
//
// Resynchronisation: a start byte whose frame fails (bad CRC, unknown incompatibility flag) is
// skipped alone, so a real frame hidden right behind it is still found.
//
// Frames of unknown message ids cannot be checked (no CRC_EXTRA). One is accepted only if it
// looks like a frame in a healthy stream: the byte after it is a start byte, and no frame that
// does pass its CRC starts inside it (real frames never overlap). Otherwise it is a false start
// (a stray 0xFD in noise or in a damaged frame) and skipping it keeps the real frames behind it.
// While that cannot be decided yet (the input ends too soon), it waits for more bytes, for
// flush() (a transport calls it when a read burst is over) or for finish().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "protocol/frame.hpp"
#include "protocol/function_ref.hpp"
#include "protocol/message_table.hpp"

namespace mavswitch::protocol {

struct ParserStats {
  uint64_t frames = 0;              // frames handed out (verified and unverified)
  uint64_t bytes_skipped = 0;       // bytes that were not part of any frame handed out
  uint64_t crc_failures = 0;        // candidate frames of a known id whose checksum failed
  uint64_t unknown_ids = 0;         // frames handed out unverified: id not in the message table
  uint64_t bad_incompat_flags = 0;  // v2 candidates with an incompatibility flag we do not know
  uint64_t truncated_frames = 0;    // an incomplete frame left at the end of the stream
  uint64_t truncated_bytes = 0;     // bytes in that incomplete tail

  ParserStats& operator+=(const ParserStats& o) noexcept;
};

// The verdict on the bytes at one position: a whole frame, not enough bytes yet, or not a frame.
struct Probe {
  enum class Status : uint8_t { kFrame, kNeedMore, kNoMagic, kBadIncompat, kBadCrc };
  Status status;
  FrameView frame;  // set when status == kFrame
};

// Looks at exactly one candidate frame starting at p (p[0] should be a start byte).
Probe probe_frame(const MessageTable& table, const uint8_t* p, size_t avail) noexcept;
// The view of one whole frame that was checked already (a routed frame, handed on as bytes):
// its header read again, its CRC not. A frame of an id the table knows is verified.
FrameView view_checked(const MessageTable& table, std::span<const uint8_t> frame) noexcept;

using FrameSink = FunctionRef<void(const FrameView&)>;

class FrameParser {
 public:
  explicit FrameParser(const MessageTable& table) noexcept : table_(&table) {}

  // Hands every complete frame in `chunk` (plus any carried over from earlier chunks) to sink.
  void feed(std::span<const uint8_t> chunk, FrameSink sink);
  // No more bytes for now (a read drained the socket, a datagram ended): hands out a complete
  // frame of unknown id held at the very end. Incomplete frames stay carried.
  void flush(FrameSink sink);
  // End of stream: whatever is still carried is either frames behind a false start, or a
  // truncated final frame (counted).
  void finish(FrameSink sink);

  // The carried candidate waits for bytes it may never get: a whole, verified frame starts inside
  // what it claims (a header torn by noise, claiming a long payload). The link decides when the
  // stream has been quiet long enough to say so; then drop_false_start() gives up on the
  // candidate and hands out the frames behind it, instead of waiting for up to 280 more bytes.
  bool stalled_on_false_start() const noexcept;
  void drop_false_start(FrameSink sink);

  const ParserStats& stats() const noexcept { return stats_; }
  void reset() noexcept { carry_len_ = 0; }

 private:
  enum class Mode { kStreaming, kFlush, kEndOfStream };
  size_t scan(const uint8_t* buf, size_t len, Mode mode, FrameSink& sink);

  const MessageTable* table_;
  ParserStats stats_{};
  size_t carry_len_ = 0;
  // Deciding on the candidate at a position takes at most this many bytes: a frame of unknown
  // id, plus a frame that may start at its last byte.
  static constexpr size_t kMaxDecisionLen = 2 * kMaxFrameLen;
  // An undecided tail (< kMaxDecisionLen) plus up to kMaxDecisionLen bytes borrowed from the
  // next chunk: always enough to decide on the carried candidate. Allocated the first time a
  // tail must be carried, so a silent link (a thousand idle TCP clients) costs no 1 KiB each.
  static constexpr size_t kCarryCapacity = 2 * kMaxDecisionLen;
  std::unique_ptr<uint8_t[]> carry_;
};

}  // namespace mavswitch::protocol
