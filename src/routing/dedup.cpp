#include "routing/dedup.hpp"

#include <bit>
#include <cstring>

namespace mavswitch::routing {
namespace {

// 64-bit FNV-1a over 8-byte words, then a final mix: fast on ~40-byte frames, good enough
// spread for a table index (a collision costs at most one wrongly dropped duplicate check).
uint64_t hash_bytes(std::span<const uint8_t> bytes) noexcept {
  uint64_t h = 0xcbf29ce484222325ull ^ bytes.size();
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  for (; i < bytes.size(); ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

constexpr size_t kProbe = 8;

// A slot packs the top 40 bits of the hash with the time in milliseconds modulo 2^24 (4.6 h),
// far longer than any de-duplication period.
constexpr uint64_t kTimeBits = 24;
constexpr uint64_t kTimeMask = (uint64_t{1} << kTimeBits) - 1;
constexpr Millis kMaxPeriod = Millis{1} << 23;
constexpr Millis kClockSkew = 60'000;  // the most one worker's `now` may lag another's

}  // namespace

Deduplicator::Deduplicator(Millis period, size_t slots)
    : period_(period < kMaxPeriod ? period : kMaxPeriod),
      slots_(std::make_unique<std::atomic<uint64_t>[]>(std::bit_ceil(slots))),
      mask_(std::bit_ceil(slots) - 1) {}

bool Deduplicator::seen_recently(std::span<const uint8_t> bytes, Millis now) noexcept {
  const uint64_t tag = (hash_bytes(bytes) & ~kTimeMask) | (kTimeMask + 1);  // never 0: 0 is an empty slot
  const uint64_t time = static_cast<uint64_t>(now) & kTimeMask;
  // Workers read their clocks at different moments: a slot another stamped a little later than
  // this `now` is recent (a moment ago), not 4.6 h old.
  const auto age = [&](uint64_t slot) {
    const auto a = static_cast<Millis>((time - slot) & kTimeMask);
    return a > static_cast<Millis>(kTimeMask) - kClockSkew ? 0 : a;
  };
  std::atomic<uint64_t>* stalest = nullptr;
  Millis stalest_age = -1;
  for (size_t k = 0; k < kProbe; ++k) {
    std::atomic<uint64_t>& s = slots_[static_cast<size_t>((tag >> kTimeBits) + k) & mask_];
    // relaxed: a slot is one word, read and written whole; a race between workers costs one duplicate check, never
    // memory.
    const uint64_t v = s.load(std::memory_order_relaxed);
    if (v != 0 && (v & ~kTimeMask) == tag) {
      s.store(tag | time, std::memory_order_relaxed);
      return age(v) < period_;
    }
    const Millis a = v == 0 ? kMaxPeriod * 2 : age(v);
    if (a > stalest_age) {
      stalest_age = a;
      stalest = &s;
    }
  }
  // Not present: take the stalest slot of the probe window (expired or not: memory is bounded).
  // relaxed: a slot is one word, read and written whole; a race between workers costs one duplicate check, never
  // memory.
  stalest->store(tag | time, std::memory_order_relaxed);
  return false;
}

}  // namespace mavswitch::routing
