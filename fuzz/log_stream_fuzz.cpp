// The flight log reassemblers under packets an autopilot (or anyone on the link) could send:
// ULog packets with any sequence, length and first-message offset, dataflash blocks with any
// number. What holds whatever came: the ULog output is a header then whole messages (sizes walk
// exactly to its end), the dataflash stream's missing set stays bounded.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "logs/dataflash_stream.hpp"
#include "logs/ulog_stream.hpp"

using namespace mavswitch;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  logs::UlogStream ulog;
  logs::DataflashStream blocks;
  std::vector<uint8_t> out;
  uint64_t now = 0;
  // Each packet: sequence (2), first_message_offset (1), length (1), then that many bytes.
  static const uint8_t kHeader[16] = {'U', 'L', 'o', 'g', 0x01, 0x12, 0x35};
  bool first = true;
  size_t at = 0;
  while (at + 4 <= size) {
    const uint16_t seq = static_cast<uint16_t>(data[at] | data[at + 1] << 8);
    const uint8_t fmo = data[at + 2];
    const size_t len = std::min<size_t>(data[at + 3] % 250, size - at - 4);
    std::vector<uint8_t> packet(data + at + 4, data + at + 4 + len);
    at += 4 + len;
    if (first && packet.size() >= 16) std::copy(kHeader, kHeader + 7, packet.begin());  // let the stream start
    first = false;
    now += fmo % 7;
    ulog.packet(seq, packet, fmo, now, [&](std::span<const uint8_t> b) { out.insert(out.end(), b.begin(), b.end()); });
    blocks.block(static_cast<uint32_t>(seq) * (fmo | 1u), now);
    blocks.due_nacks(now, 0, 1, 64);
    if (fmo == 0xEE) blocks.give_up(now, 0);
    check(blocks.missing() <= 4096);
  }
  if (out.empty()) return 0;
  check(out.size() >= logs::UlogStream::kHeaderLen);  // the header comes out whole, or not at all
  size_t pos = logs::UlogStream::kHeaderLen;
  while (pos < out.size()) {
    check(pos + 3 <= out.size());
    pos += 3 + (out[pos] | out[pos + 1] << 8);
  }
  check(pos == out.size());
  return 0;
}
