// A link's bandwidth budget (MaxRate) and the order frames take within it. Frames wait here,
// not in the kernel, so the link's priorities hold: control first (commands, acks, missions,
// parameters, files: FIFO, never thinned), then status (heartbeats), then telemetry, of which
// only the newest frame per (source, message) waits. Status and telemetry older than the
// delay bound are dropped rather than sent late. A command waits at most for the frame being
// paced out ahead of it (280 bytes: 49 ms at 57,600 baud) and for control frames queued before it.
//
// A token bucket of bytes refilled at the budget, holding at most 20 ms of it (or one frame).
// What it does not build: fair shares between sources, or a budget shared between links.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "protocol/frame.hpp"
#include "protocol/message_class.hpp"
#include "transport/clock.hpp"

namespace mavswitch::transport {

class Pacer {
 public:
  static constexpr size_t kControlFrames = 256;
  static constexpr size_t kStatusFrames = 64;
  static constexpr size_t kTelemetryStreams = 512;

  Pacer(uint64_t bytes_per_second, Millis max_delay);

  // Takes a frame (class and stream key from the caller); false when it was dropped (its
  // class's queue full). A telemetry frame replaces the one of its stream still waiting.
  bool push(protocol::MessageClass c, uint64_t stream, std::span<const uint8_t> frame, Millis now);
  // Gives `out` the frames the budget allows by `now`, in order. Returns how many ms until the
  // budget allows the next one, or 0 when nothing waits.
  template <class F>
  Millis release(Millis now, F&& out) {
    refill(now);
    while (tokens_ > 0) {
      const Slot* s = next(now);
      if (s == nullptr) return 0;
      tokens_ -= s->len;
      out(std::span<const uint8_t>(s->bytes, s->len));
      pop();
    }
    return empty() ? 0 : wait_ms();
  }
  bool empty() const noexcept { return control_.size() + status_.size() + telemetry_order_.size() == 0; }
  size_t held_bytes() const noexcept { return held_; }  // of the frames waiting

  struct Counts {
    std::array<uint64_t, protocol::kMessageClasses> dropped{};  // full, or too late (by class)
    uint64_t superseded = 0;                                    // telemetry replaced by newer
  };
  const Counts& counts() const noexcept { return counts_; }
  uint64_t bytes_per_second() const noexcept { return rate_; }
  void set_rate(uint64_t bytes_per_second) noexcept;  // a serial port's new baud rate

 private:
  struct Slot {
    Millis at = 0;  // when it was queued
    uint16_t len = 0;
    uint8_t bytes[protocol::kMaxFrameLen];
  };
  // A FIFO of slot indices over a fixed store.
  class Ring {
   public:
    explicit Ring(size_t capacity) : index_(capacity) {}
    size_t size() const noexcept { return size_; }
    bool full() const noexcept { return size_ == index_.size(); }
    uint16_t front() const noexcept { return index_[head_]; }
    void push(uint16_t i) noexcept {
      index_[(head_ + size_) % index_.size()] = i;
      ++size_;
    }
    void pop() noexcept {
      head_ = (head_ + 1) % index_.size();
      --size_;
    }

   private:
    std::vector<uint16_t> index_;
    size_t head_ = 0, size_ = 0;
  };

  void refill(Millis now) noexcept;
  Millis wait_ms() const noexcept;
  // The next frame due, dropping those that waited too long; null when none.
  const Slot* next(Millis now);
  void pop();
  uint16_t claim(std::vector<uint16_t>& free);

  uint64_t rate_ = 1;
  Millis max_delay_;
  double burst_ = 0;
  double tokens_ = 0;
  Millis refilled_at_ = -1;
  Counts counts_;
  size_t held_ = 0;
  std::unique_ptr<Slot[]> slots_;  // control, then status, then telemetry slots (~240 KiB once used)
  std::vector<uint16_t> free_control_, free_status_, free_telemetry_;
  Ring control_{kControlFrames}, status_{kStatusFrames}, telemetry_order_{kTelemetryStreams};
  std::vector<uint64_t> stream_of_;  // by telemetry slot: its stream key
  // stream key -> telemetry slot, for the streams waiting (at most kTelemetryStreams: a scan
  // of a small flat array beats a hash map here and never allocates).
  std::vector<std::pair<uint64_t, uint16_t>> waiting_;
  enum class From : uint8_t { kNone, kControl, kStatus, kTelemetry } from_ = From::kNone;
};

}  // namespace mavswitch::transport
