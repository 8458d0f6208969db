#include "protocol/crc.hpp"

#include <array>
#include <cstring>

namespace mavswitch::protocol {
namespace {

using Table = std::array<std::array<uint16_t, 256>, 8>;

// tables[0][b] is the CRC of the single byte b from state 0; tables[k] advances that by k more
// zero bytes, which is what lets eight input bytes be folded with independent lookups.
constexpr Table make_tables() {
  Table t{};
  for (unsigned b = 0; b < 256; ++b) {
    t[0][b] = static_cast<uint16_t>(crc16_accumulate(static_cast<uint8_t>(b), 0));
  }
  for (unsigned k = 1; k < 8; ++k) {
    for (unsigned b = 0; b < 256; ++b) {
      const uint16_t prev = t[k - 1][b];
      t[k][b] = static_cast<uint16_t>((prev >> 8) ^ t[0][prev & 0xFF]);
    }
  }
  return t;
}

constexpr Table kTables = make_tables();

}  // namespace

uint16_t crc16(const uint8_t* data, size_t len, uint16_t crc) noexcept {
  const auto& t = kTables;
  while (len >= 8) {
    uint64_t word;
    std::memcpy(&word, data, 8);  // little-endian host (x86-64, aarch64)
    word ^= crc;
    crc = static_cast<uint16_t>(t[7][word & 0xFF] ^ t[6][(word >> 8) & 0xFF] ^
                                t[5][(word >> 16) & 0xFF] ^ t[4][(word >> 24) & 0xFF] ^
                                t[3][(word >> 32) & 0xFF] ^ t[2][(word >> 40) & 0xFF] ^
                                t[1][(word >> 48) & 0xFF] ^ t[0][word >> 56]);
    data += 8;
    len -= 8;
  }
  while (len--) {
    crc = static_cast<uint16_t>((crc >> 8) ^ t[0][(crc ^ *data++) & 0xFF]);
  }
  return crc;
}

}  // namespace mavswitch::protocol
