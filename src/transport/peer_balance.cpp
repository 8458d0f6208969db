#include "transport/peer_balance.hpp"

#include <algorithm>
#include <numeric>

namespace mavswitch::transport {

std::vector<PeerMove> plan_peer_moves(std::span<const double> busy, size_t self, std::span<const PeerLoad> peers) {
  std::vector<PeerMove> moves;
  if (peers.empty() || self >= busy.size() || busy.size() < 2) return moves;
  const double total = std::accumulate(busy.begin(), busy.end(), 0.0);
  if (total < kGatherBelow) {
    if (self != kGatherMember) {
      for (const PeerLoad& p : peers) moves.push_back({p.peer, kGatherMember});
    }
    return moves;
  }
  if (busy[self] <= kSpreadAbove) return moves;
  size_t least = self == 0 ? 1 : 0;
  for (size_t i = 0; i < busy.size(); ++i) {
    if (i != self && busy[i] < busy[least]) least = i;
  }
  if (busy[least] >= busy[self] / 2) return moves;
  // Frames stand for the work a peer brings: hand over peers worth about half the difference,
  // busiest first, each that brings the remainder closer to it, and never every peer (that
  // would only swap the roles).
  const uint64_t frames = std::accumulate(peers.begin(), peers.end(), uint64_t{0},
                                          [](uint64_t sum, const PeerLoad& p) { return sum + p.frames; });
  if (frames == 0 || peers.size() < 2) return moves;
  double budget = static_cast<double>(frames) * (busy[self] - busy[least]) / (2 * busy[self]);
  std::vector<PeerLoad> by_load(peers.begin(), peers.end());
  std::sort(by_load.begin(), by_load.end(), [](const PeerLoad& a, const PeerLoad& b) { return a.frames > b.frames; });
  for (const PeerLoad& p : by_load) {
    if (moves.size() + 1 == peers.size()) break;
    if (p.frames == 0 || static_cast<double>(p.frames) >= 2 * budget) continue;
    moves.push_back({p.peer, least});
    budget -= static_cast<double>(p.frames);
  }
  return moves;
}

}  // namespace mavswitch::transport
