#include "window/history.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"

namespace mavswitch::window {

void History::owned() const {
  if (owner_ == std::thread::id()) owner_ = std::this_thread::get_id();
  if (owner_ == std::this_thread::get_id()) return;
  std::fprintf(stderr, "mavswitch: the window's history used off the window's thread\n");
  std::abort();
}

void History::links(const std::vector<LinkTotals>& up, int64_t unix_ms) {
  owned();
  std::map<std::string, Link> next;
  for (const LinkTotals& now : up) {
    auto it = links_.find(now.name);
    if (it == links_.end()) {  // new: its first second is the next one
      if (next.size() + 1 > kMaxLinks) continue;
      next.emplace(now.name, Link{now, {}, unix_ms});
      continue;
    }
    Link link = std::move(it->second);
    // Counters only grow; a link that came up again under the same name starts again.
    const auto step = [](uint64_t a, uint64_t b) {
      return static_cast<uint32_t>(std::min<uint64_t>(b >= a ? b - a : b, UINT32_MAX));
    };
    link.seconds.push_back({step(link.last.rx, now.rx), step(link.last.tx, now.tx), step(link.last.lost, now.lost),
                            step(link.last.dropped, now.dropped)});
    if (link.seconds.size() > kSeconds) link.seconds.pop_front();
    link.last = now;
    link.at = unix_ms;
    if (next.size() < kMaxLinks) next.emplace(now.name, std::move(link));
  }
  links_ = std::move(next);
}

void History::position(uint8_t system, const Point& p) {
  owned();
  auto it = tracks_.find(system);
  if (it == tracks_.end()) {
    if (tracks_.size() >= kMaxTracks) return;
    it = tracks_.emplace(system, std::deque<Point>{}).first;
  }
  std::deque<Point>& track = it->second;
  if (!track.empty() && p.unix_ms - track.back().unix_ms < 1000) return;
  track.push_back(p);
  while (track.size() > kSeconds) track.pop_front();
}

std::string History::json(const std::map<uint8_t, std::string>& names, int64_t unix_ms) const {
  owned();
  using HistoryJson = nlohmann::json;
  HistoryJson links = HistoryJson::array();
  for (const auto& [name, link] : links_) {
    HistoryJson rx = HistoryJson::array(), tx = HistoryJson::array(), lost = HistoryJson::array(),
                dropped = HistoryJson::array();
    for (const LinkSecond& s : link.seconds) {
      rx.push_back(s.rx);
      tx.push_back(s.tx);
      lost.push_back(s.lost);
      dropped.push_back(s.dropped);
    }
    links.push_back({{"name", name},
                     {"unix_ms", link.at},
                     {"rx_frames", rx},
                     {"tx_frames", tx},
                     {"lost", lost},
                     {"dropped", dropped}});
  }
  HistoryJson tracks = HistoryJson::array();
  for (const auto& [system, track] : tracks_) {
    HistoryJson points = HistoryJson::array();
    for (const Point& p : track) points.push_back({p.unix_ms, p.lat / 1e7, p.lon / 1e7, p.relative_alt_mm / 1000.0});
    HistoryJson t = {{"system", system}, {"points", std::move(points)}};
    if (const auto named = names.find(system); named != names.end() && !named->second.empty())
      t["vehicle"] = named->second;
    tracks.push_back(std::move(t));
  }
  return json_text(HistoryJson{{"interval_ms", 1000}, {"unix_ms", unix_ms}, {"links", links}, {"tracks", tracks}});
}

}  // namespace mavswitch::window
