#include <gtest/gtest.h>

#include <random>
#include <string_view>
#include <vector>

#include "protocol/crc.hpp"

using namespace mavswitch::protocol;

namespace {
uint16_t crc_bytewise(const uint8_t* p, size_t n, uint16_t crc = kCrcInit) {
  while (n--) crc = crc16_accumulate(*p++, crc);
  return crc;
}
}  // namespace

TEST(Crc, StandardCheckValue) {
  // CRC-16/MCRF4XX catalogue check value: the CRC of "123456789".
  constexpr std::string_view kCheck = "123456789";
  const auto* p = reinterpret_cast<const uint8_t*>(kCheck.data());
  EXPECT_EQ(crc16(p, kCheck.size()), 0x6F91);
  EXPECT_EQ(crc_bytewise(p, kCheck.size()), 0x6F91);
}

TEST(Crc, EmptyInputIsInitialValue) { EXPECT_EQ(crc16(nullptr, 0), kCrcInit); }

TEST(Crc, HeartbeatCrcExtra) {
  // CRC_EXTRA of HEARTBEAT is 50 in every MAVLink implementation; computed here from its seed.
  constexpr std::string_view kSeed =
      "HEARTBEAT uint32_t custom_mode uint8_t type uint8_t autopilot uint8_t base_mode "
      "uint8_t system_status uint8_t mavlink_version ";
  const uint16_t c = crc16(reinterpret_cast<const uint8_t*>(kSeed.data()), kSeed.size());
  EXPECT_EQ((c & 0xFF) ^ (c >> 8), 50);
}

TEST(Crc, SlicedMatchesBytewiseForEveryLengthAndSeed) {
  std::mt19937 rng(7);
  std::vector<uint8_t> data(300);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (size_t len = 0; len <= data.size(); ++len) {
    for (uint16_t seed : {uint16_t{0xFFFF}, uint16_t{0}, static_cast<uint16_t>(rng())}) {
      ASSERT_EQ(crc16(data.data(), len, seed), crc_bytewise(data.data(), len, seed)) << "len " << len;
    }
  }
}

TEST(Crc, ChainingEqualsOneShot) {
  std::vector<uint8_t> data(97);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 31 + 7);
  const uint16_t whole = crc16(data.data(), data.size());
  EXPECT_EQ(crc16(data.data() + 40, data.size() - 40, crc16(data.data(), 40)), whole);
}
