// The last STATUSTEXT lines of each system, kept by the router so that a page opened now shows
// what the vehicle said before (the pre-arm failure a minute ago), not only what comes next.
// Bounded: kLinesPerSystem lines of at most kMaxChunks * 50 characters for each of 256 systems
// (under 7 MB however a peer sends). A line sent in chunks (MAVLink 2's id and chunk_seq) is
// joined first: one pending line per component (kMaxPending of them), ended by a chunk shorter
// than the field, by another line, or by a chunk that is not the next.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "mavswitch/msg/statustext.hpp"

namespace mavswitch::window {

class StatusTextHistory {
 public:
  static constexpr size_t kLinesPerSystem = 100;
  static constexpr size_t kMaxChunks = 5;    // 250 characters: a longer line is cut there
  static constexpr size_t kMaxPending = 64;  // components with a line half received

  struct Line {
    int64_t unix_ms = 0;  // when it came (wall clock, for people)
    uint8_t component = 0;
    uint8_t severity = 0;     // MAV_SEVERITY: 0 emergency .. 7 debug
    std::string text;         // as sent: bytes, not necessarily UTF-8
    bool incomplete = false;  // chunks of it never came
  };

  void add(uint8_t system, uint8_t component, const msg::Statustext& m, int64_t unix_ms);
  // Oldest first.
  const std::deque<Line>& lines(uint8_t system) const { return systems_[system]; }

 private:
  struct Pending {
    uint16_t id = 0;
    uint8_t next_chunk = 0;
    Line line;
  };
  void keep(uint8_t system, Line line);

  std::array<std::deque<Line>, 256> systems_;
  std::map<uint16_t, Pending> pending_;  // system << 8 | component: at most one line each
};

}  // namespace mavswitch::window
