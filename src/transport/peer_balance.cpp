#include "transport/peer_balance.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace mavswitch::transport {

namespace {

bool not_busy(std::span<const double> busy) { return std::accumulate(busy.begin(), busy.end(), 0.0) < kGatherBelow; }

// The least busy member other than `except` (SIZE_MAX: any).
size_t least_busy(std::span<const double> busy, size_t except = SIZE_MAX) {
  size_t least = except == 0 ? 1 : 0;
  for (size_t i = 0; i < busy.size(); ++i) {
    if (i != except && busy[i] < busy[least]) least = i;
  }
  return least;
}

}  // namespace

size_t place_newcomer(std::span<const double> busy) {
  if (busy.empty() || not_busy(busy)) return kGatherMember;
  return least_busy(busy);
}

std::vector<PeerMove> plan_peer_moves(std::span<const double> busy, size_t self, std::span<const PeerLoad> peers) {
  std::vector<PeerMove> moves;
  if (peers.empty() || self >= busy.size() || busy.size() < 2) return moves;
  if (not_busy(busy)) {
    if (self != kGatherMember) {
      for (const PeerLoad& p : peers) moves.push_back({p.peer, kGatherMember});
    }
    return moves;
  }
  if (busy[self] <= kSpreadAbove) return moves;
  const size_t least = least_busy(busy, self);
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
