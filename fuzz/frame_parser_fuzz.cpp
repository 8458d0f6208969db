// The streaming parser and the tlog reader on arbitrary bytes.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "dialect/builtin.hpp"
#include "protocol/parser.hpp"
#include "protocol/tlog.hpp"

using namespace mavswitch::protocol;

namespace {

// What a parse found, compared cheaply: the count and a hash over every frame's bytes in order.
struct Seen {
  uint64_t frames = 0;
  uint64_t hash = 0xcbf29ce484222325ull;
  bool operator==(const Seen&) const = default;
};

void check(bool ok) {
  if (!ok) std::abort();
}

Seen parse(const uint8_t* data, size_t size, size_t chunk, bool flush_each) {
  Seen seen;
  FrameParser parser(mavswitch::dialect::builtin::message_table());
  size_t framed = 0;
  auto sink = [&](const FrameView& f) {
    check(f.size() >= kHeaderLenV1 + kChecksumLen && f.size() <= kMaxFrameLen);
    ++seen.frames;
    framed += f.size();
    for (uint8_t b : f.bytes()) seen.hash = (seen.hash ^ b) * 0x100000001b3ull;
    seen.hash = (seen.hash ^ 0xFF) * 0x100000001b3ull;  // frame boundary
  };
  for (size_t pos = 0; pos < size; pos += chunk) {
    parser.feed({data + pos, std::min(chunk, size - pos)}, sink);
    if (flush_each) parser.flush(sink);
  }
  parser.finish(sink);
  const ParserStats& s = parser.stats();
  check(s.frames == seen.frames);
  check(framed + s.bytes_skipped + s.truncated_bytes == size);  // every byte accounted for once
  return seen;
}

}  // namespace

// The first byte picks what to compare with a one-shot parse, so each run costs two parses:
// byte by byte, in chunks of 1..96 bytes, or (safety only) with flush() after every read.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  ++data;
  --size;
  const Seen whole = parse(data, size, size ? size : 1, false);
  switch (mode % 3) {
    case 0: check(parse(data, size, 1, false) == whole); break;
    case 1: check(parse(data, size, 1 + (mode / 3) % 96, false) == whole); break;
    default: parse(data, size, 1 + (mode / 3) % 96, true); break;
  }

  read_tlog(mavswitch::dialect::builtin::message_table(), {data, size},
            [](uint64_t, const FrameView& f) { check(f.size() <= kMaxFrameLen); });
  return 0;
}
