// Counts frames lost between a source and us from gaps in its 8-bit sequence numbers, per
// (system, component) heard on one link. At most kMaxSources sources per link are tracked one
// by one: a peer that sends from every one of the 65,536 (system, component) pairs costs a few
// tens of KiB here, not megabytes, and a statistics report of a few hundred lines, not 65,536.
//
// An 8-bit counter cannot tell 10 lost frames from 266. A link that knows when it was cut off
// (the fabric, whose whole cluster may go for seconds) records arrival times (record_timed) and
// says when it is back (outage_ended): each source is anchored at its last frame, which came
// before the outage, and the first gap after it is counted by the source's pace since the anchor
// (a mean over 256 sequence numbers), rounded to the count that ends on the sequence number that came. A
// frame held back across the outage that comes after newer ones cannot be told from one far
// ahead: such frames may be counted as lost as well (a few dozen). A pace that changed during
// the outage (a busy machine) makes the count a wrap off.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace mavswitch::routing {

class SequenceTracker {
 public:
  static constexpr size_t kMaxSources = 1024;

  struct Source {
    uint64_t received = 0;
    uint64_t lost = 0;
    uint64_t restarts = 0;  // the sender's counter began again (a reboot, a restarted program)
    uint8_t last_seq = 0;
  };

  void record(uint8_t sysid, uint8_t compid, uint8_t seq) { count(sysid, compid, seq, -1); }
  // The same, arriving at `now_ms`.
  void record_timed(uint8_t sysid, uint8_t compid, uint8_t seq, int64_t now_ms) { count(sysid, compid, seq, now_ms); }
  // The link is back from being cut off (nothing came meanwhile): every source is anchored at its
  // last frame.
  void outage_ended() {
    for (auto& [key, pace] : paces_) {
      pace.window_open = false;  // the outage's own silence is not the source's pace
      if (pace.interval_ms > 0)
        pace.anchored = true, pace.anchor_ms = pace.last_ms, pace.since_anchor = 0,
        pace.anchor_seq = sources_.at(key).last_seq;
    }
  }

 private:
  // A timed source's pace, and its anchor across an outage.
  struct Pace {
    int64_t last_ms = 0;
    int64_t window_ms = 0;        // when the current window of kWindow sequence numbers began
    uint32_t window_advance = 0;  // sequence numbers since then
    bool window_open = false;
    double interval_ms = 0;  // the mean over the last whole window; 0: not known yet
    bool anchored = false;
    int64_t anchor_ms = 0;
    uint8_t anchor_seq = 0;
    uint64_t since_anchor = 0;  // frames received since the anchor
  };
  static constexpr uint32_t kWindow = 256;

  // How many frames a forward gap of `gap` lost, for a timed source.
  static uint64_t paced_loss(Pace& p, uint8_t seq, uint8_t gap, int64_t now_ms) {
    uint64_t lost = gap;
    if (p.anchored) {
      ++p.since_anchor;
      if (gap != 0) {
        // The sequence's advance since the anchor, by pace, snapped to the residue that came.
        const double paced = double(now_ms - p.anchor_ms) / p.interval_ms;
        const auto residue = static_cast<uint8_t>(seq - p.anchor_seq);
        const double wraps = std::max(0.0, std::round((paced - residue) / 256.0));
        const uint64_t advance = residue + 256 * static_cast<uint64_t>(wraps);
        if (advance > p.since_anchor) lost = std::max<uint64_t>(gap, advance - p.since_anchor);
        p.anchored = false;
      } else if (p.since_anchor >= 256) {
        p.anchored = false;  // a wrap's worth in step: nothing of that size was lost
      }
    }
    // Its pace, by the sequence's advance (lost frames count: a lossy link keeps its pace).
    if (p.window_open && gap < 128 && now_ms - p.last_ms < 1000) {
      p.window_advance += gap + 1u;
      if (p.window_advance >= kWindow) {
        p.interval_ms = double(std::max<int64_t>(1, now_ms - p.window_ms)) / p.window_advance;
        p.window_ms = now_ms, p.window_advance = 0;
      }
    } else {  // a pause or a jump: the window starts again at this frame
      p.window_open = true, p.window_ms = now_ms, p.window_advance = 0;
    }
    p.last_ms = now_ms;
    return lost;
  }

  void count(uint8_t sysid, uint8_t compid, uint8_t seq, int64_t now_ms) {
    // Most links carry one source, or a few in turn: remember the last one (map nodes never
    // move), so the common frame costs a compare instead of a hash lookup.
    const auto key = static_cast<uint16_t>(sysid << 8 | compid);
    if (last_ == nullptr || key != last_key_) {
      auto it = sources_.find(key);
      if (it == sources_.end()) {
        if (sources_.size() >= kMaxSources) {
          ++untracked_frames_;
          return;
        }
        it = sources_.emplace(key, Source{}).first;
      }
      last_ = &it->second;
      last_key_ = key;
      last_pace_ = nullptr;
    }
    Source& s = *last_;
    Pace* pace = now_ms < 0 ? nullptr : last_pace_ != nullptr ? last_pace_ : (last_pace_ = &paces_[key]);
    if (s.received > 0) {
      const uint8_t gap = static_cast<uint8_t>(seq - s.last_seq - 1);
      // Senders count from 0: a jump back to 0 past a frame or more is a restart, not loss (a
      // real loss that happens to end at 0 is taken for one); the same number again is a copy.
      // A large "gap" is a reordering, unless the source's pace says it was an outage.
      if (seq == 0 && gap >= 2 && seq != s.last_seq) {
        ++s.restarts;
        if (pace != nullptr) *pace = Pace{now_ms};
      } else {
        const uint64_t lost = pace != nullptr && gap != 255 ? paced_loss(*pace, seq, gap, now_ms) : gap;
        if (gap < 128 || lost > gap) s.lost += lost;
      }
    } else if (pace != nullptr) {
      pace->last_ms = now_ms;
    }
    s.last_seq = seq;
    ++s.received;
  }

 public:
  // Keyed by sysid << 8 | compid.
  const std::unordered_map<uint16_t, Source>& sources() const noexcept { return sources_; }
  // Frames lost over every source tracked.
  uint64_t lost() const noexcept {
    uint64_t n = 0;
    for (const auto& [key, source] : sources_) n += source.lost;
    return n;
  }
  // Frames from sources past the first kMaxSources (counted, their losses not).
  uint64_t untracked_frames() const noexcept { return untracked_frames_; }

 private:
  std::unordered_map<uint16_t, Source> sources_;
  std::unordered_map<uint16_t, Pace> paces_;  // record_timed's sources only
  uint64_t untracked_frames_ = 0;
  Source* last_ = nullptr;
  uint16_t last_key_ = 0;
  Pace* last_pace_ = nullptr;  // last_'s, once timed (map nodes never move)
};

}  // namespace mavswitch::routing
