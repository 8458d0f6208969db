// MAVFTP's exchange driven by hand (support/exchange_fixture.hpp): a burst read whose first
// packet is lost, a listing, a refused write.
#include <algorithm>
#include <memory>
#include <string>

#include "base/byte_stream.hpp"
#include "mavswitch/msg/file_transfer_protocol.hpp"
#include "services/ftp_exchange.hpp"
#include "support/exchange_fixture.hpp"

using namespace mavswitch;
using services::FtpExchange;
namespace ftp = services::ftp;

namespace {

class FtpExchangeTest : public test::ExchangeTest {
 protected:
  ftp::Payload asked_ftp() const { return ftp::Payload::decode(asked<msg::FileTransferProtocol>().payload); }
  // The vehicle's reply to the last request: `after` past its sequence number.
  Exchange::Step answer(Exchange& e, uint8_t opcode, uint32_t offset, std::string_view data, uint16_t after = 1,
                        bool burst_complete = false) {
    const ftp::Payload asked = asked_ftp();
    ftp::Payload p;
    p.seq = static_cast<uint16_t>(asked.seq + after);
    p.session = 3;
    p.opcode = opcode;
    p.req_opcode = asked.opcode;
    p.offset = offset;
    p.burst_complete = burst_complete;
    p.size = static_cast<uint8_t>(data.size());
    std::copy(data.begin(), data.end(), p.data.begin());
    msg::FileTransferProtocol m;
    m.payload = p.encode();
    return say(e, m);
  }
};

std::string le32(uint32_t v) {
  return {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
}

TEST_F(FtpExchangeTest, a_file_is_read_in_a_burst_and_its_gap_read_again) {
  const std::string file = [] {
    std::string f(300, '\0');
    for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<char>('a' + i % 26);
    return f;
  }();
  auto stream = std::make_shared<ByteStream>(4096);
  on_router([&] {
    FtpExchange e(FtpExchange::Mode::kRead, 1, 1, "/logs/a.bin", 7);
    uint64_t opened = 0;
    e.read_into(stream, [&](uint64_t size) { opened = size; });
    e.start(*own_);
    ASSERT_EQ(asked_ftp().opcode, ftp::kOpenFileRO);
    EXPECT_EQ(asked_ftp().seq, 7);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(asked_ftp().data.data()), asked_ftp().size), "/logs/a.bin");
    EXPECT_EQ(answer(e, ftp::kAck, 0, le32(static_cast<uint32_t>(file.size()))), Exchange::Step::kProgress);
    EXPECT_EQ(opened, file.size());
    ASSERT_EQ(asked_ftp().opcode, ftp::kBurstReadFile);
    EXPECT_EQ(asked_ftp().offset, 0u);
    // The burst's first packet is lost: its end comes, and the gap before it is asked for.
    EXPECT_EQ(answer(e, ftp::kAck, 239, std::string_view(file).substr(239), 2, true), Exchange::Step::kProgress);
    ASSERT_EQ(asked_ftp().opcode, ftp::kReadFile);
    EXPECT_EQ(asked_ftp().offset, 0u);
    EXPECT_EQ(asked_ftp().size, 239);
    EXPECT_EQ(stream->available(), 0u) << "nothing after a gap goes to the reader before the gap";
    // A silence asks for the gap again, as a new request.
    const uint16_t before = asked_ftp().seq;
    EXPECT_TRUE(e.silent(*own_));
    EXPECT_EQ(asked_ftp().opcode, ftp::kReadFile);
    EXPECT_NE(asked_ftp().seq, before);
    EXPECT_EQ(answer(e, ftp::kAck, 0, std::string_view(file).substr(0, 239)), Exchange::Step::kProgress);
    EXPECT_TRUE(e.complete());
    ASSERT_EQ(asked_ftp().opcode, ftp::kTerminateSession);
    EXPECT_EQ(answer(e, ftp::kAck, 0, {}), Exchange::Step::kDone);
    EXPECT_FALSE(e.error().has_value());
  });
  std::string got(file.size() + 1, '\0');
  bool last = false;
  got.resize(stream->take(reinterpret_cast<uint8_t*>(got.data()), got.size(), &last));
  EXPECT_EQ(got, file);
}

TEST_F(FtpExchangeTest, a_listing_keeps_files_and_directories_and_ends_at_end_of_file) {
  on_router([&] {
    FtpExchange e(FtpExchange::Mode::kList, 1, 1, "/APM", 0);
    e.start(*own_);
    ASSERT_EQ(asked_ftp().opcode, ftp::kListDirectory);
    const std::string entries("Fa.param\t1234\0Dlogs\0D.\0S\0", 25);
    EXPECT_EQ(answer(e, ftp::kAck, 0, entries), Exchange::Step::kProgress);
    ASSERT_EQ(asked_ftp().opcode, ftp::kListDirectory);
    EXPECT_EQ(asked_ftp().offset, 4u) << "the next listing starts after every entry given, skipped ones too";
    // A reply to an older request is not this one's.
    EXPECT_EQ(answer(e, ftp::kNak, 0, std::string(1, ftp::kEndOfFile), 0), Exchange::Step::kIgnored);
    EXPECT_EQ(answer(e, ftp::kNak, 0, std::string(1, ftp::kEndOfFile)), Exchange::Step::kDone);
    EXPECT_TRUE(e.complete());
    ASSERT_EQ(e.entries().size(), 2u);
    EXPECT_EQ(e.entries()[0].name, "a.param");
    EXPECT_EQ(e.entries()[0].size, 1234u);
    EXPECT_FALSE(e.entries()[0].directory);
    EXPECT_EQ(e.entries()[1].name, "logs");
    EXPECT_TRUE(e.entries()[1].directory);
  });
}

TEST_F(FtpExchangeTest, a_refused_write_says_why_and_closes_nothing_it_did_not_open) {
  on_router([&] {
    FtpExchange e(FtpExchange::Mode::kWrite, 1, 1, "/a.txt", 0);
    e.write_from(std::string(600, 'x'));
    e.start(*own_);
    ASSERT_EQ(asked_ftp().opcode, ftp::kCreateFile);
    const int before = requests<msg::FileTransferProtocol>();
    EXPECT_EQ(answer(e, ftp::kNak, 0, std::string(1, ftp::kFileProtected)), Exchange::Step::kDone);
    EXPECT_EQ(e.error(), ftp::kFileProtected);
    EXPECT_EQ(requests<msg::FileTransferProtocol>(), before) << "no TerminateSession for a session never opened";
  });
}

}  // namespace
