// Test helper for interop.mjs: encodes every message of the built-in dialect whose id is listed
// in IDS_FILE, with random values, as MAVLink 2 (full and mostly-zero, to exercise truncation)
// and MAVLink 1 (ids below 256), and writes the frames to FRAMES_OUT and, one JSON line per
// frame, the values that were encoded to EXPECTED_OUT.
//   interop_encode IDS_FILE FRAMES_OUT EXPECTED_OUT
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <random>

#include <set>
#include "support/random_fields.hpp"

#include "mavswitch/msg/all.hpp"
#include "tools/field_format.hpp"

using namespace mavswitch;

namespace {

struct Writer {
  const std::set<uint32_t>& ids;
  std::ofstream& frames;
  std::ofstream& expected;
  std::mt19937_64 rng{2024};
  uint8_t seq = 0;
  int written = 0;

  template <class M>
  void operator()() {
    if (!ids.count(M::kId)) return;
    for (int variant = 0; variant < 3; ++variant) {
      const bool v1 = variant == 2;
      if (v1 && M::kId >= 256) continue;
      M m;
      m.visit(test::RandomFields{rng, variant == 1});
      uint8_t buf[protocol::kMaxFrameLen];
      const size_t n = dialect::typed::encode_frame(m, {.seq = seq++, .sysid = 42, .compid = 17}, buf, v1);
      frames.write(reinterpret_cast<const char*>(buf), static_cast<std::streamsize>(n));
      // What the receiver must see: a v1 frame carries no extensions, which then read as zero.
      const M on_wire = v1 ? M::decode({buf + protocol::kHeaderLenV1, M::kMinLen}) : m;
      fmt::memory_buffer line;
      fmt::format_to(std::back_inserter(line), "{{\"msgid\":{},\"version\":{},\"fields\":{{", M::kId, v1 ? 1 : 2);
      tools::FieldFormatter fields(line, tools::FieldFormatter::Style::kJson);
      on_wire.visit(dialect::typed::SinkAdapter{fields});
      line.append(std::string_view("}}\n"));
      expected.write(line.data(), static_cast<std::streamsize>(line.size()));
      ++written;
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: interop_encode IDS_FILE FRAMES_OUT EXPECTED_OUT\n";
    return 2;
  }
  std::set<uint32_t> ids;
  std::ifstream in(argv[1]);
  for (uint32_t id; in >> id;) ids.insert(id);
  std::ofstream frames(argv[2], std::ios::binary);
  std::ofstream expected(argv[3]);
  Writer w{ids, frames, expected};
  msg::for_each_message_type(w);
  std::cerr << "interop_encode: " << w.written << " frames\n";
  return frames && expected ? 0 : 1;
}
