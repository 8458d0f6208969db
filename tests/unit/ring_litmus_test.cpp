// Message passing through each handover between two threads, the litmus test of memory order:
// the producer writes a frame's bytes, then publishes; the consumer that sees it published must
// see every byte as written, and the producer must not write over bytes the consumer has not
// read. Each frame's bytes all carry its number, so a frame read early (a publish made before
// its bytes, as a relaxed store may be on ARM) or overwritten late (a head freed before the
// read) shows as a wrong byte or a wrong order. Under ThreadSanitizer (scripts/test.sh runs
// these there) a weakened publish is a data race report even where the hardware is strong;
// under qemu and on ARM hardware the byte checks are what fails.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "base/handover.hpp"
#include "library/frame_queues.hpp"
#include "protocol/frame_batch.hpp"
#include "router/frame_handover.hpp"

namespace mavswitch {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kFrames = 200'000;
constexpr auto kDeadline = std::chrono::seconds(60);  // bounded under emulation and sanitizers

// Frame n: between 12 and 75 bytes (so records wrap at every offset), each byte n's low byte,
// the first four n itself.
std::vector<uint8_t> frame_of(uint32_t n) {
  std::vector<uint8_t> f(12 + n % 64, static_cast<uint8_t>(n));
  std::memcpy(f.data(), &n, sizeof n);
  return f;
}

// The number the frame carries, or a message saying how it is torn.
bool whole(std::span<const uint8_t> bytes, uint32_t expected, std::string* why) {
  uint32_t n = 0;
  if (bytes.size() < sizeof n) {
    *why = "short frame";
    return false;
  }
  std::memcpy(&n, bytes.data(), sizeof n);
  if (n != expected || bytes.size() != 12 + n % 64) {
    *why = "frame " + std::to_string(n) + " (size " + std::to_string(bytes.size()) + ") where " +
           std::to_string(expected) + " was due";
    return false;
  }
  for (size_t i = sizeof n; i < bytes.size(); ++i) {
    if (bytes[i] != static_cast<uint8_t>(n)) {
      *why = "frame " + std::to_string(n) + " byte " + std::to_string(i) + " torn";
      return false;
    }
  }
  return true;
}

// Runs produce(n) -> bool (false: full, try again) on one thread and consume() -> frames seen
// on this one until every frame went through or the deadline passed.
template <class Produce, class Consume>
void run_pair(Produce produce, Consume consume, uint32_t* received, std::string* failure) {
  const auto deadline = Clock::now() + kDeadline;
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    for (uint32_t n = 0; n < kFrames && !stop.load();) {
      if (produce(n))
        ++n;
      else
        std::this_thread::yield();
    }
  });
  while (*received < kFrames && failure->empty() && Clock::now() < deadline) {
    if (!consume()) std::this_thread::yield();
  }
  stop.store(true);
  producer.join();
}

TEST(RingLitmus, FrameHandoverPublishesWholeFramesInOrder) {
  FrameHandover ring;
  uint32_t received = 0;
  std::string failure;
  std::vector<uint8_t> bytes;
  run_pair(
      [&](uint32_t n) {
        bytes = frame_of(n);
        const protocol::FrameView view(bytes.data(), static_cast<uint16_t>(bytes.size()), n, protocol::FrameView::kV2);
        const routing::LinkId to = n % 7;
        if (!ring.push(std::span<const routing::LinkId>(&to, 1), view, bytes)) {
          ring.publish();
          return false;
        }
        if (n % 8 == 7 || n + 1 == kFrames) ring.publish();  // batches, as a worker's iteration makes them
        return true;
      },
      [&] {
        const uint32_t before = received;
        ring.drain([&](routing::LinkId to, const protocol::FrameView& f) {
          if (!failure.empty()) return;
          if (to != received % 7 || f.msgid() != received) {
            failure = "record " + std::to_string(f.msgid()) + " for link " + std::to_string(to) + " out of order";
          } else if (whole(f.bytes(), received, &failure)) {
            ++received;
          }
        });
        return received != before;
      },
      &received, &failure);
  EXPECT_EQ(failure, "");
  EXPECT_EQ(received, kFrames);
}

TEST(RingLitmus, FrameQueuePublishesWholeFramesInOrder) {
  FrameQueue queue(64);
  uint32_t received = 0;
  std::string failure;
  OwnedFrame out;
  run_pair([&](uint32_t n) { return queue.push(frame_of(n)); },
           [&] {
             if (!queue.pop(out)) return false;
             if (whole(out.span(), received, &failure)) ++received;
             return true;
           },
           &received, &failure);
  EXPECT_EQ(failure, "");
  EXPECT_EQ(received, kFrames);
}

// Two producers (a library's senders): each one's frames arrive whole and in its own order, and
// the consumer is rung once per batch, not per frame.
TEST(RingLitmus, HandoverKeepsEachProducersFramesWholeAndInOrder) {
  std::atomic<uint64_t> rings{0};
  Handover<protocol::FrameBatch> handover([&] { rings.fetch_add(1); });
  const auto deadline = Clock::now() + kDeadline;
  std::atomic<bool> stop{false};
  auto produce = [&](uint32_t mark) {
    for (uint32_t n = 0; n < kFrames && !stop.load();) {
      const auto frame = frame_of(n | mark);
      if (handover.put([&](protocol::FrameBatch& waiting) {
            if (waiting.size() >= 64) return false;
            waiting.add(frame);
            return true;
          }))
        ++n;
      else
        std::this_thread::yield();
    }
  };
  std::thread first(produce, 0u), second(produce, 0x8000'0000u);
  uint32_t received[2] = {0, 0};
  uint64_t batches = 0;
  std::string failure;
  protocol::FrameBatch batch;
  while ((received[0] < kFrames || received[1] < kFrames) && failure.empty() && Clock::now() < deadline) {
    if (!handover.wait_take(batch, std::chrono::milliseconds(100))) continue;
    ++batches;
    size_t at = 0;
    for (const uint16_t size : batch.sizes) {
      const std::span<const uint8_t> frame(batch.bytes.data() + at, size);
      at += size;
      uint32_t n = 0;
      std::memcpy(&n, frame.data(), sizeof n);
      const uint32_t who = n >> 31;
      if (whole(frame, received[who] | (who << 31), &failure)) ++received[who];
    }
  }
  stop.store(true);
  first.join();
  second.join();
  EXPECT_EQ(failure, "");
  EXPECT_EQ(received[0], kFrames);
  EXPECT_EQ(received[1], kFrames);
  // A ring for each batch that began empty: never more rings than batches taken (plus the last,
  // which may be pending as the producers stop).
  EXPECT_LE(rings.load(), batches + 1);
}

}  // namespace
}  // namespace mavswitch
