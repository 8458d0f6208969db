#include "library/newest_frames.hpp"

#include <endian.h>

#include <cstring>

namespace mavswitch {
namespace {

constexpr transport::Millis kWindow = 2000;  // a rate over the last two seconds or so

}  // namespace

float NewestFrames::Slot::frequency_at(transport::Millis now) const noexcept {
  const transport::Millis elapsed = now - window_start;
  if (elapsed >= kWindow || frequency == 0)
    return elapsed > 500 ? float(double(counter - window_counter) * 1000.0 / double(elapsed)) : frequency;
  return frequency;
}

namespace {

// The payload's bytes in 16-byte pieces, the last one ending at its end (overlapping the one
// before): two moves for most telemetry, and never a byte read past the payload.
inline void copy_payload(uint8_t* to, const uint8_t* from, size_t n) noexcept {
  if (n < 16) {
    std::memcpy(to, from, n);
    return;
  }
  std::memcpy(to, from, 16);
  for (size_t i = 16; i + 16 < n; i += 16) std::memcpy(to + i, from + i, 16);
  std::memcpy(to + n - 16, from + n - 16, 16);
}

// A slot's newest frame: its payload, sequence, count and time.
inline void keep(NewestFrames::Slot& s, const uint8_t* payload, uint8_t len, uint8_t sequence,
                 transport::Millis now) noexcept {
  s.payload_len = len;
  copy_payload(s.payload.data(), payload, len);
  s.sequence = sequence;
  ++s.counter;
  s.last = now;
}

}  // namespace

void NewestFrames::add(const protocol::FrameView& frame, transport::Millis now) {
  // The header read once: sequence, system and component sit together, 2 bytes (v1) or 4 (v2)
  // in, and the payload as far again past them plus 2.
  const uint8_t* data = frame.data();
  const size_t in = 2 + 2 * size_t{frame.is_v2()};
  const uint8_t* header = data + in;
  uint16_t source;  // system and component, as key_of() puts them: one load
  std::memcpy(&source, header + 1, 2);
  const uint64_t key = uint64_t{le16toh(source)} << 32 | frame.msgid();
  const Entry& e = table_[slot_of(key)];
  // Usually found at once; a collision or a new key goes out of line, which keeps this path
  // free of calls (and of the registers they need).
  if (e.key != key) return add_probing(frame, now, key);
  keep(*e.slot, header + in + 2, data[1], header[0], now);
}

void NewestFrames::add_probing(const protocol::FrameView& frame, transport::Millis now, uint64_t key) {
  size_t i = slot_of(key);
  while (table_[i].key != key && table_[i].key != kEmpty) i = (i + 1) & mask_;
  if (table_[i].key == kEmpty) return made(frame, now, i);
  keep(*table_[i].slot, frame.payload().data(), frame.payload_len(), frame.seq(), now);
}

void NewestFrames::made(const protocol::FrameView& frame, transport::Millis now, size_t at) {
  if (slots_.size() == kMaxSlots) {
    ++refused_;
    return;
  }
  const auto payload = frame.payload();
  Slot& s = slots_.emplace_back();
  s.system = frame.sysid(), s.component = frame.compid(), s.msgid = frame.msgid(), s.sequence = frame.seq();
  s.payload_len = static_cast<uint8_t>(payload.size());
  std::memcpy(s.payload.data(), payload.data(), payload.size());
  s.counter = s.window_counter = 1;  // the window counts the frames after the one it starts at
  s.first = s.last = s.window_start = now;
  table_[at] = {key_of(s.system, s.component, s.msgid), &s};
  if (slots_.size() * 4 > table_.size()) grow();
}

void NewestFrames::grow() {
  std::vector<Entry> old(table_.size() * 2);
  old.swap(table_);
  mask_ = table_.size() - 1;
  --shift_;
  for (const Entry& e : old) {
    if (e.key == kEmpty) continue;
    size_t i = slot_of(e.key);
    while (table_[i].key != kEmpty) i = (i + 1) & mask_;
    table_[i] = e;
  }
}

void NewestFrames::roll(Slot& s, transport::Millis now) noexcept {
  if (now - s.window_start < kWindow) return;
  s.frequency = float(double(s.counter - s.window_counter) * 1000.0 / double(now - s.window_start));
  s.window_start = now;
  s.window_counter = s.counter;
}

std::vector<NewestFrames::Slot> NewestFrames::copy(transport::Millis now) {
  for (Slot& s : slots_) roll(s, now);
  return {slots_.begin(), slots_.end()};
}

std::vector<NewestFrames::Slot> NewestFrames::copy(uint32_t msgid, transport::Millis now) {
  std::vector<Slot> some;
  for (Slot& s : slots_) {
    if (s.msgid != msgid) continue;
    roll(s, now);
    some.push_back(s);
  }
  return some;
}

}  // namespace mavswitch
