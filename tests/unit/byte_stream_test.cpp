// ByteStream (a file's bytes from the router's thread to the window's), OrderedBytes (what
// comes by offset, given on in order) and MAVFTP's payload header, as the spec lays it out.
#include <gtest/gtest.h>

#include <string>

#include "base/byte_stream.hpp"
#include "services/ftp_exchange.hpp"
#include "services/ordered_bytes.hpp"

namespace mavswitch {
namespace {

TEST(ByteStream, BytesComeOutInOrderAndRoomIsWhatIsUnread) {
  ByteStream s(8);
  int rings = 0;
  s.on_data([&] { ++rings; });
  EXPECT_EQ(s.room(), 8u);
  s.write("abcdef");
  EXPECT_EQ(s.room(), 2u);
  s.write("ghijk");  // past the room: kept, not lost
  EXPECT_EQ(s.room(), 0u);
  uint8_t out[16];
  bool last = true;
  EXPECT_EQ(s.take(out, 4, &last), 4u);
  EXPECT_FALSE(last);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out), 4), "abcd");
  EXPECT_EQ(s.room(), 1u);
  s.finish(true);
  EXPECT_EQ(s.take(out, sizeof out, &last), 7u);
  EXPECT_TRUE(last) << "whole, and nothing left";
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out), 7), "efghijk");
  EXPECT_EQ(rings, 3) << "two writes and the end";
  EXPECT_EQ(s.state(), ByteStream::State::kWhole);
}

TEST(ByteStream, AReaderThatGoesCancelsAndWhatComesLaterIsDropped) {
  ByteStream s(1024);
  s.write("abc");
  s.cancel();
  EXPECT_TRUE(s.cancelled());
  s.write("def");
  s.finish(true);
  uint8_t out[8];
  bool last = false;
  EXPECT_EQ(s.take(out, sizeof out, &last), 0u);
  EXPECT_EQ(s.state(), ByteStream::State::kCancelled);
}

TEST(ByteStream, AFailedStreamIsNeverWhole) {
  ByteStream s(16);
  s.write("ab");
  s.finish(false);
  s.finish(true);  // the first end stands
  uint8_t out[8];
  bool last = true;
  EXPECT_EQ(s.take(out, sizeof out, &last), 2u);
  EXPECT_FALSE(last);
  EXPECT_EQ(s.state(), ByteStream::State::kFailed);
}

TEST(FtpPayload, TheHeaderIsLaidOutAsTheSpecSays) {
  services::ftp::Payload p;
  p.seq = 0x1234, p.session = 7, p.opcode = services::ftp::kBurstReadFile, p.size = 3;
  p.req_opcode = services::ftp::kOpenFileRO, p.burst_complete = true, p.offset = 0xA1B2C3D4;
  p.data[0] = 'x', p.data[238] = 'z';
  const auto bytes = p.encode();
  EXPECT_EQ(bytes[0], 0x34);
  EXPECT_EQ(bytes[1], 0x12);
  EXPECT_EQ(bytes[2], 7);
  EXPECT_EQ(bytes[3], 15);
  EXPECT_EQ(bytes[4], 3);
  EXPECT_EQ(bytes[5], 4);
  EXPECT_EQ(bytes[6], 1);
  EXPECT_EQ(bytes[8], 0xD4);
  EXPECT_EQ(bytes[11], 0xA1);
  EXPECT_EQ(bytes[12], 'x');
  EXPECT_EQ(bytes[250], 'z');
  const auto back = services::ftp::Payload::decode(bytes);
  EXPECT_EQ(back.seq, p.seq);
  EXPECT_EQ(back.offset, p.offset);
  EXPECT_TRUE(back.burst_complete);
  EXPECT_EQ(back.data, p.data);
}

TEST(FtpPayload, APeersSizeNeverReachesPastTheData) {
  std::array<uint8_t, 251> bytes{};
  bytes[4] = 255;  // more than a payload holds
  EXPECT_EQ(services::ftp::Payload::decode(bytes).size, services::ftp::kDataMax);
}

// put() says whether it kept anything new: what a peer sends again is no progress, in order or
// ahead of a gap, and neither is what a full stream cannot take.
TEST(OrderedBytes, OnlyNewBytesCountAsProgress) {
  auto stream = std::make_shared<ByteStream>(8);
  services::OrderedBytes in(stream, 0, 64);
  EXPECT_TRUE(in.put(0, "ab"));
  EXPECT_FALSE(in.put(0, "ab")) << "had it";
  EXPECT_TRUE(in.put(1, "bc")) << "partly new";
  EXPECT_TRUE(in.put(5, "fg")) << "past a gap: kept";
  EXPECT_FALSE(in.put(5, "fg")) << "kept already";
  EXPECT_TRUE(in.put(3, "de"));
  EXPECT_EQ(in.at(), 7u);
  EXPECT_TRUE(in.put(7, "h"));
  EXPECT_FALSE(in.put(8, "i")) << "the stream is full: not taken";
  EXPECT_EQ(stream->available(), 8u);
}

}  // namespace
}  // namespace mavswitch
