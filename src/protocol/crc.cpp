#include "protocol/crc.hpp"

#include <array>
#include <cstring>

namespace mavswitch::protocol {
namespace {

using Table = std::array<std::array<uint16_t, 256>, 16>;

// tables[0][b] is the CRC of the single byte b from state 0; tables[k] advances that by k more
// zero bytes, which is what lets sixteen input bytes be folded with independent lookups
// (slicing-by-16: 8 KiB of tables, resident in L1 on the hot path).
constexpr Table make_tables() {
  Table t{};
  for (unsigned b = 0; b < 256; ++b) {
    t[0][b] = static_cast<uint16_t>(crc16_accumulate(static_cast<uint8_t>(b), 0));
  }
  for (unsigned k = 1; k < 16; ++k) {
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
  auto b = [](uint64_t w, int i) { return static_cast<size_t>((w >> (8 * i)) & 0xFF); };
  while (len >= 16) {  // a typical 40-byte frame: two rounds, then the 4-byte step, then < 4 bytes
    uint64_t lo, hi;
    std::memcpy(&lo, data, 8);  // little-endian host (x86-64, aarch64)
    std::memcpy(&hi, data + 8, 8);
    lo ^= crc;
    crc = static_cast<uint16_t>(t[15][b(lo, 0)] ^ t[14][b(lo, 1)] ^ t[13][b(lo, 2)] ^ t[12][b(lo, 3)] ^
                                t[11][b(lo, 4)] ^ t[10][b(lo, 5)] ^ t[9][b(lo, 6)] ^ t[8][b(lo, 7)] ^
                                t[7][b(hi, 0)] ^ t[6][b(hi, 1)] ^ t[5][b(hi, 2)] ^ t[4][b(hi, 3)] ^
                                t[3][b(hi, 4)] ^ t[2][b(hi, 5)] ^ t[1][b(hi, 6)] ^ t[0][b(hi, 7)]);
    data += 16;
    len -= 16;
  }
  if (len >= 8) {
    uint64_t w;
    std::memcpy(&w, data, 8);
    w ^= crc;
    crc = static_cast<uint16_t>(t[7][b(w, 0)] ^ t[6][b(w, 1)] ^ t[5][b(w, 2)] ^ t[4][b(w, 3)] ^
                                t[3][b(w, 4)] ^ t[2][b(w, 5)] ^ t[1][b(w, 6)] ^ t[0][b(w, 7)]);
    data += 8;
    len -= 8;
  }
  if (len >= 4) {
    uint32_t w32;
    std::memcpy(&w32, data, 4);
    const uint64_t w = w32 ^ crc;
    crc = static_cast<uint16_t>(t[3][b(w, 0)] ^ t[2][b(w, 1)] ^ t[1][b(w, 2)] ^ t[0][b(w, 3)]);
    data += 4;
    len -= 4;
  }
  while (len--) {
    crc = static_cast<uint16_t>((crc >> 8) ^ t[0][(crc ^ *data++) & 0xFF]);
  }
  return crc;
}

}  // namespace mavswitch::protocol
