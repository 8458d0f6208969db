// The decision of where a UDP server's peers live with several workers: gather while the
// router is quiet, spread from a busy worker to an idle one, and hold still in between.
#include "transport/peer_balance.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace mavswitch::transport {
namespace {

std::vector<PeerLoad> peers_sending(std::vector<uint64_t> frames) {
  std::vector<PeerLoad> loads;
  for (size_t i = 0; i < frames.size(); ++i) loads.push_back({i, frames[i]});
  return loads;
}

TEST(PeerBalance, AQuietRoutersPeersAllGoToTheGatheringWorker) {
  const std::vector<double> busy{0.05, 0.10};
  const auto moves = plan_peer_moves(busy, 1, peers_sending({10, 0, 500}));
  ASSERT_EQ(moves.size(), 3u);
  for (size_t i = 0; i < moves.size(); ++i) {
    EXPECT_EQ(moves[i].peer, i);
    EXPECT_EQ(moves[i].to, kGatherMember);
  }
  EXPECT_TRUE(plan_peer_moves(busy, kGatherMember, peers_sending({10, 20})).empty()) << "they are home already";
}

TEST(PeerBalance, ABusyWorkerHandsAboutHalfItsTrafficToTheIdlestWorker) {
  const std::vector<double> busy{0.90, 0.30, 0.02};
  // Half the difference to worker 2 is 49% of worker 0's traffic (342 of its 700 frames): the
  // busiest peer (300); another 100 would overshoot by more than they would fill.
  const auto moves = plan_peer_moves(busy, 0, peers_sending({100, 300, 100, 100, 100}));
  uint64_t moved = 0;
  for (const auto& m : moves) {
    EXPECT_EQ(m.to, 2u);
    moved += m.peer == 1 ? 300 : 100;
  }
  EXPECT_EQ(moves.front().peer, 1u) << "the busiest peer first";
  EXPECT_GE(moved, 250u);
  EXPECT_LE(moved, 400u);
}

TEST(PeerBalance, NothingMovesBetweenQuietAndBusy) {
  EXPECT_TRUE(plan_peer_moves(std::vector<double>{0.65, 0.0}, 0, peers_sending({100, 100})).empty())
      << "one worker carries it all below the spreading threshold";
  EXPECT_TRUE(plan_peer_moves(std::vector<double>{0.35, 0.35}, 1, peers_sending({100, 100})).empty())
      << "spread, and busy enough not to gather";
  EXPECT_TRUE(plan_peer_moves(std::vector<double>{0.90, 0.60}, 0, peers_sending({100, 100})).empty())
      << "no other worker is idle enough to take work";
}

TEST(PeerBalance, APeerIsNeverSplitAndTheLastOneStays) {
  const std::vector<double> busy{0.95, 0.0};
  EXPECT_TRUE(plan_peer_moves(busy, 0, peers_sending({1000})).empty());
  EXPECT_TRUE(plan_peer_moves(busy, 0, peers_sending({1000, 0})).empty())
      << "moving the one busy peer would only swap the workers' roles; a silent one brings nothing";
  const auto moves = plan_peer_moves(busy, 0, peers_sending({500, 500}));
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].to, 1u);
}

TEST(PeerBalance, ANewcomerGoesToTheGatheringWorkerUnlessBusyThenToTheLeastBusy) {
  EXPECT_EQ(place_newcomer(std::vector<double>{0.2, 0.1, 0.0}), kGatherMember);
  EXPECT_EQ(place_newcomer(std::vector<double>{0.9, 0.5, 0.3}), 2u);
  EXPECT_EQ(place_newcomer(std::vector<double>{0.1, 0.8}), 0u);
}

TEST(PeerBalance, OneWorkerOrNoPeersIsNothingToDecide) {
  EXPECT_TRUE(plan_peer_moves(std::vector<double>{0.0}, 0, peers_sending({1, 2})).empty());
  EXPECT_TRUE(plan_peer_moves(std::vector<double>{0.9, 0.0}, 0, {}).empty());
}

}  // namespace
}  // namespace mavswitch::transport
