#include "protocol/crc.hpp"

#include <array>
#include <utility>

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

// Folds N bytes (N of 4, 8 or 16) into crc with N independent table lookups. Bytes are read one
// by one (a load each, which also zero-extends) rather than shifted out of a word: fewer
// instructions per byte. Only the first two bytes meet the running CRC.
template <size_t... I>
[[gnu::always_inline]] inline uint16_t fold(const uint8_t* d, uint16_t crc, std::index_sequence<I...>) noexcept {
  constexpr size_t n = sizeof...(I);
  auto byte = [&](size_t i) -> size_t {
    return i == 0 ? static_cast<size_t>((d[0] ^ crc) & 0xFF) : i == 1 ? static_cast<size_t>(d[1] ^ (crc >> 8)) : d[i];
  };
  return static_cast<uint16_t>((kTables[n - 1 - I][byte(I)] ^ ...));
}

}  // namespace

uint16_t crc16(const uint8_t* data, size_t len, uint16_t crc) noexcept {
  // A typical 40-byte frame: two rounds of 16, then 4, then the last byte or three.
  for (; len >= 16; data += 16, len -= 16) crc = fold(data, crc, std::make_index_sequence<16>{});
  if (len >= 8) {
    crc = fold(data, crc, std::make_index_sequence<8>{});
    data += 8;
    len -= 8;
  }
  if (len >= 4) {
    crc = fold(data, crc, std::make_index_sequence<4>{});
    data += 4;
    len -= 4;
  }
  while (len--) crc = static_cast<uint16_t>((crc >> 8) ^ kTables[0][(crc ^ *data++) & 0xFF]);
  return crc;
}

}  // namespace mavswitch::protocol
