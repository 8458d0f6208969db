#include "window/status_text_history.hpp"

#include <cstring>

namespace mavswitch::window {

void StatusTextHistory::add(uint8_t system, uint8_t component, const msg::Statustext& m, int64_t unix_ms) {
  const size_t length = strnlen(m.text.data(), m.text.size());
  const std::string_view text(m.text.data(), length);
  const bool last_chunk = length < m.text.size();  // a NUL ends the line
  const auto key = static_cast<uint16_t>(system << 8 | component);
  auto pending = pending_.find(key);
  // Another line, or a chunk out of turn: what was pending is kept as it stands.
  if (pending != pending_.end() &&
      (m.id == 0 || m.id != pending->second.id || m.chunk_seq != pending->second.next_chunk)) {
    pending->second.line.incomplete = true;
    keep(system, std::move(pending->second.line));
    pending_.erase(pending);
    pending = pending_.end();
  }
  if (m.id == 0) {  // a line in one piece
    keep(system, {unix_ms, component, m.severity, std::string(text), false});
    return;
  }
  if (pending == pending_.end()) {
    if (m.chunk_seq != 0 || pending_.size() >= kMaxPending) {  // its beginning was lost, or no room
      keep(system, {unix_ms, component, m.severity, std::string(text), true});
      return;
    }
    pending = pending_.emplace(key, Pending{m.id, 0, {unix_ms, component, m.severity, {}, false}}).first;
  }
  Pending& p = pending->second;
  p.line.text.append(text);
  ++p.next_chunk;
  if (last_chunk || p.next_chunk >= kMaxChunks) {
    p.line.incomplete = !last_chunk;
    keep(system, std::move(p.line));
    pending_.erase(pending);
  }
}

void StatusTextHistory::keep(uint8_t system, Line line) {
  std::deque<Line>& lines = systems_[system];
  if (lines.size() == kLinesPerSystem) lines.pop_front();
  lines.push_back(std::move(line));
}

}  // namespace mavswitch::window
