// Counts frames lost between a source and us from gaps in its 8-bit sequence numbers, per
// (system, component) heard on one link. At most kMaxSources sources per link are tracked one
// by one: a peer that sends from every one of the 65,536 (system, component) pairs costs a few
// tens of KiB here, not megabytes, and a statistics report of a few hundred lines, not 65,536.
//
// Only a link whose sources send on it straight (Link::Path::kWire) is counted this way: a gap
// there is frames lost on the way. Across the fabric the sending router may have thinned a
// stream or the receiver taken part of it: the fabric counts its own loss (fabric_link.hpp).
#pragma once

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

  void record(uint8_t sysid, uint8_t compid, uint8_t seq) {
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
    }
    Source& s = *last_;
    if (s.received > 0) {
      const uint8_t gap = static_cast<uint8_t>(seq - s.last_seq - 1);
      // Senders count from 0: a jump back to 0 past a frame or more is a restart, not loss (a
      // real loss that happens to end at 0 is taken for one); the same number again is a copy;
      // a large "gap" is a reordering.
      if (seq == 0 && gap >= 2 && seq != s.last_seq)
        ++s.restarts;
      else if (gap < 128)
        s.lost += gap;
    }
    s.last_seq = seq;
    ++s.received;
  }

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
  uint64_t untracked_frames_ = 0;
  Source* last_ = nullptr;
  uint16_t last_key_ = 0;
};

}  // namespace mavswitch::routing
