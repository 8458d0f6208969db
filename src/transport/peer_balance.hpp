// Where a UDP server's peers should live when several I/O workers serve it: the decision only,
// from how busy each worker was and how many frames each peer sent over the last period (the
// endpoint carries it out, see udp_server_endpoint.cpp).
//
// Why peers move at all: a worker's cost is mostly per wake-up and per datagram it writes, not
// per frame. Two workers that each hear half the vehicles each wake for their own and each send
// every ground station its own coalesced datagram: two to three times the CPU of one worker
// hearing them all (BENCHMARKS.md, "Peers that gather and spread"). So while the router is not
// busy its peers gather on one worker, and they spread out only once a worker is busy enough
// that a second core buys capacity and latency. Gathering below what spreading needs keeps it
// from swinging: gathered, one worker carries at most what all did (spreading never makes the
// work smaller), so under kSpreadAbove; spread, they carry at least what one did, so not under
// kGatherBelow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mavswitch::transport {

// Not busy: the workers together used less than this share of one core. Then every peer lives
// on member kGatherMember.
inline constexpr double kGatherBelow = 0.6;
inline constexpr size_t kGatherMember = 0;
// Busy: a worker used more than this share of one core, and another less than half of what it
// used. Then it hands that one about half the difference, in whole peers.
inline constexpr double kSpreadAbove = 0.7;

struct PeerLoad {
  size_t peer;      // the caller's index
  uint64_t frames;  // received over the last period
};
struct PeerMove {
  size_t peer;
  size_t to;  // member
};

// What member `self` should do with its peers, given every member's busy share (`busy`, by
// member). At most one direction per call: gather when quiet, else spread from a busy self.
std::vector<PeerMove> plan_peer_moves(std::span<const double> busy, size_t self, std::span<const PeerLoad> peers);

// Where a newcomer that cannot move once it lives somewhere (a TCP server's client) goes: the
// gathering member while the workers are not busy, else the least busy one.
size_t place_newcomer(std::span<const double> busy);

}  // namespace mavswitch::transport
