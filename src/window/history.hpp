// What the router's window remembers so that a page opened now shows the last 15 minutes, not
// only what comes next: each link's frames a second (in, out, lost, dropped) and each vehicle's
// track (its position once a second). Sampled once a second on the window's thread from what
// the router already counts (its links' totals, the newest GLOBAL_POSITION_INT in the vehicle
// tree): nothing on the frame path. Bounded: kSeconds samples for at most kMaxLinks links
// (16 bytes each: 0.9 MiB) and kSeconds points for at most kMaxTracks systems (24 bytes each:
// 2.1 MiB at 100 vehicles, 5.3 MiB at most). bench/run history measures it.
//
// Chose not to build: a history kept on disk across restarts, and coarser samples past 15
// minutes (Prometheus keeps longer history from /metrics).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace mavswitch::window {

// The wall clock in Unix milliseconds: what the history and the status texts are stamped with.
inline int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class History {
 public:
  static constexpr size_t kSeconds = 900;
  static constexpr size_t kMaxLinks = 64;
  static constexpr size_t kMaxTracks = 256;

  // A link's totals since it came up, as its counters say.
  struct LinkTotals {
    std::string name;
    uint64_t rx = 0, tx = 0, lost = 0, dropped = 0;
  };
  // Frames in one second.
  struct LinkSecond {
    uint32_t rx = 0, tx = 0, lost = 0, dropped = 0;
  };
  // A vehicle's position: degrees * 1e7, altitude above home in mm.
  struct Point {
    int64_t unix_ms = 0;
    int32_t lat = 0, lon = 0, relative_alt_mm = 0;
  };

  // One second's totals of every link up: each gets its second (the difference from the last
  // totals); a link not listed is gone, and its history with it. A new link starts now.
  void links(const std::vector<LinkTotals>& up, int64_t unix_ms);
  // A vehicle's position, when it said it: kept if at least a second after the last kept one.
  void position(uint8_t system, const Point& p);

  struct Link {
    LinkTotals last;                 // the totals at the last second
    std::deque<LinkSecond> seconds;  // oldest first; the newest ends at `at`
    int64_t at = 0;
  };
  // The window's thread, as every call here.
  const std::map<std::string, Link>& link_history() const { return links_; }
  const std::map<uint8_t, std::deque<Point>>& tracks() const { return tracks_; }
  // GET /api/v1/history: {"interval_ms": 1000, "unix_ms": NOW, "links": [{"name", "unix_ms"
  // (its newest second's end), "rx_frames", "tx_frames", "lost", "dropped" (one number a second,
  // oldest first)}], "tracks": [{"system", "vehicle" (its fleet name, if any), "points":
  // [[unix_ms, lat, lon, relative_alt_m]]}]}.
  std::string json(const std::map<uint8_t, std::string>& names, int64_t unix_ms) const;

 private:
  void owned() const;  // asserts the caller is the thread that first called
  std::map<std::string, Link> links_;
  std::map<uint8_t, std::deque<Point>> tracks_;
  mutable std::thread::id owner_;
};

}  // namespace mavswitch::window
