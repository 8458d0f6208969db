// The window's STATUSTEXT history: bounded per system, chunks joined, a lost chunk shown as such,
// and no more half-received lines than kMaxPending whatever a peer sends.
#include "window/status_text_history.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

using mavswitch::window::StatusTextHistory;
namespace msg = mavswitch::msg;

namespace {

msg::Statustext said(const std::string& text, uint16_t id = 0, uint8_t chunk = 0, uint8_t severity = 6) {
  msg::Statustext m;
  m.severity = severity;
  std::copy_n(text.begin(), std::min(text.size(), m.text.size()), m.text.begin());
  m.id = id;
  m.chunk_seq = chunk;
  return m;
}

}  // namespace

TEST(StatusTextHistory, KeepsTheLastHundredLinesOfEachSystemOldestFirst) {
  StatusTextHistory h;
  for (int i = 0; i < 150; ++i) h.add(1, 1, said("line " + std::to_string(i)), 1000 + i);
  h.add(2, 1, said("another vehicle", 0, 0, 2), 5000);
  ASSERT_EQ(h.lines(1).size(), StatusTextHistory::kLinesPerSystem);
  EXPECT_EQ(h.lines(1).front().text, "line 50");
  EXPECT_EQ(h.lines(1).back().text, "line 149");
  EXPECT_EQ(h.lines(1).back().unix_ms, 1149);
  ASSERT_EQ(h.lines(2).size(), 1u);
  EXPECT_EQ(h.lines(2).front().severity, 2);
  EXPECT_TRUE(h.lines(3).empty());
}

TEST(StatusTextHistory, ChunksAreJoinedIntoOneLine) {
  StatusTextHistory h;
  const std::string first(50, 'a');  // a full field: no NUL, more to come
  h.add(1, 1, said(first, 7, 0), 1);
  EXPECT_TRUE(h.lines(1).empty()) << "not kept until its last chunk";
  h.add(1, 1, said("end", 7, 1), 2);
  ASSERT_EQ(h.lines(1).size(), 1u);
  EXPECT_EQ(h.lines(1).front().text, first + "end");
  EXPECT_FALSE(h.lines(1).front().incomplete);
}

TEST(StatusTextHistory, ALostChunkLeavesAnIncompleteLine) {
  StatusTextHistory h;
  h.add(1, 1, said(std::string(50, 'a'), 7, 0), 1);
  h.add(1, 1, said("third", 7, 2), 2);  // chunk 1 never came
  ASSERT_EQ(h.lines(1).size(), 2u);
  EXPECT_EQ(h.lines(1)[0].text, std::string(50, 'a'));
  EXPECT_TRUE(h.lines(1)[0].incomplete);
  EXPECT_EQ(h.lines(1)[1].text, "third");
  EXPECT_TRUE(h.lines(1)[1].incomplete) << "its beginning was lost";
  h.add(1, 1, said(std::string(50, 'b'), 8, 0), 3);
  h.add(1, 1, said("a whole line"), 4);  // a line in one piece ends what was pending
  ASSERT_EQ(h.lines(1).size(), 4u);
  EXPECT_TRUE(h.lines(1)[2].incomplete);
  EXPECT_EQ(h.lines(1)[3].text, "a whole line");
}

TEST(StatusTextHistory, AnEndlessLineIsCutAndPendingLinesAreBounded) {
  StatusTextHistory h;
  for (uint8_t chunk = 0; chunk < 20; ++chunk) h.add(1, 1, said(std::string(50, 'x'), 9, chunk), chunk);
  ASSERT_FALSE(h.lines(1).empty());
  EXPECT_EQ(h.lines(1).front().text.size(), StatusTextHistory::kMaxChunks * 50);
  EXPECT_TRUE(h.lines(1).front().incomplete);
  // First chunks from many components: at most kMaxPending wait; the rest are kept at once.
  for (unsigned comp = 0; comp < 100; ++comp) h.add(5, uint8_t(comp), said(std::string(50, 'y'), 1, 0), 1);
  EXPECT_EQ(h.lines(5).size(), 100 - StatusTextHistory::kMaxPending);
}
