// Real traffic recorded elsewhere: every frame validates under the official definitions.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "dialect/builtin.hpp"
#include "dialect/loader.hpp"
#include "dialect/runtime_decode.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;

namespace {

struct CaptureSummary {
  protocol::ParserStats stats;
  std::map<std::string, int> by_name;
  int v1 = 0;
  int v2 = 0;
};

CaptureSummary summarize(const std::string& file) {
  const auto data = test::read_bytes(test::captures_dir() / file);
  CaptureSummary s;
  const auto frames = test::parse_all(data, {}, &s.stats);
  protocol::FrameParser parser(dialect::builtin::message_table());
  parser.feed(data, [&](const protocol::FrameView& f) {
    const auto* info = dialect::builtin::message_table().find(f.msgid());
    ++s.by_name[info ? std::string(info->name) : "?"];
    ++(f.is_v2() ? s.v2 : s.v1);
  });
  return s;
}

// Records fields as bytes, so two decoders can be compared exactly (NaN included).
struct RecordingSink final : dialect::FieldSink {
  std::vector<std::tuple<std::string, dialect::FieldType, bool, std::vector<uint8_t>>> fields;
  void field(std::string_view name, dialect::FieldType type, bool is_array, uint16_t count,
             const void* values) override {
    const auto* p = static_cast<const uint8_t*>(values);
    fields.emplace_back(std::string(name), type, is_array,
                        std::vector<uint8_t>(p, p + count * dialect::type_size(type)));
  }
};

}  // namespace

TEST(Captures, V2CaptureValidatesCompletely) {
  const auto s = summarize("mavlink-v2-3412-packets.bin");
  EXPECT_EQ(s.stats.frames, 3412u);
  EXPECT_EQ(s.by_name.size(), 27u);
  EXPECT_EQ(s.v2, 3412);
  EXPECT_EQ(s.stats.crc_failures, 0u);
  EXPECT_EQ(s.stats.unknown_ids, 0u);
  EXPECT_EQ(s.stats.bytes_skipped, 0u);
  EXPECT_EQ(s.stats.truncated_frames, 0u);
  EXPECT_EQ(s.by_name.at("HEARTBEAT"), 10);
  EXPECT_EQ(s.by_name.at("ATTITUDE"), 505);
  EXPECT_EQ(s.by_name.at("MISSION_ITEM_INT"), 145);
  EXPECT_EQ(s.by_name.at("VFR_HUD"), 41);
}

TEST(Captures, MixedV1V2CaptureValidatesCompletely) {
  const auto s = summarize("GH-5.bin");
  EXPECT_EQ(s.stats.frames, 138u);
  EXPECT_EQ(s.by_name.size(), 22u);
  EXPECT_GT(s.v1, 0);
  EXPECT_GT(s.v2, 0);
  EXPECT_EQ(s.stats.crc_failures, 0u);
  EXPECT_EQ(s.stats.unknown_ids, 0u);
  EXPECT_EQ(s.stats.bytes_skipped, 5u);  // the recording starts 5 bytes into a frame
  EXPECT_EQ(s.by_name.at("HIGHRES_IMU"), 21);
  EXPECT_EQ(s.by_name.at("TIMESYNC"), 5);
}

TEST(Captures, RuntimeLoaderAndGeneratedCodeDecodeIdentically) {
  const dialect::Dialect runtime =
      dialect::load_dialect(test::definitions_dir() / (std::string(dialect::builtin::name()) + ".xml"));
  const protocol::MessageTable runtime_table = runtime.message_table();
  int compared = 0;
  for (const char* file : {"mavlink-v2-3412-packets.bin", "GH-5.bin"}) {
    const auto data = test::read_bytes(test::captures_dir() / file);
    protocol::FrameParser parser(runtime_table);
    parser.feed(data, [&](const protocol::FrameView& f) {
      RecordingSink generated, loaded;
      ASSERT_TRUE(dialect::builtin::decode_fields(f.msgid(), f.payload(), generated));
      const dialect::MessageDef* def = runtime.find(f.msgid());
      ASSERT_NE(def, nullptr);
      dialect::decode_fields(*def, f.payload(), loaded);
      ASSERT_FALSE(generated.fields.empty());
      ASSERT_EQ(generated.fields, loaded.fields) << def->name;
      ++compared;
    });
    EXPECT_EQ(parser.stats().crc_failures, 0u);
  }
  EXPECT_EQ(compared, 3412 + 138);
}

TEST(Captures, RuntimeTableMatchesTheBuiltInTable) {
  const dialect::Dialect runtime =
      dialect::load_dialect(test::definitions_dir() / (std::string(dialect::builtin::name()) + ".xml"));
  const auto& builtin = dialect::builtin::message_table();
  ASSERT_EQ(runtime.messages.size(), builtin.size());
  for (const auto& m : runtime.messages) {
    const auto* b = builtin.find(m.id);
    ASSERT_NE(b, nullptr) << m.name;
    EXPECT_EQ(b->name, m.name);
    EXPECT_EQ(b->crc_extra, m.crc_extra);
    EXPECT_EQ(b->min_len, m.min_len);
    EXPECT_EQ(b->max_len, m.max_len);
    EXPECT_EQ(b->target_system_offset, m.target_system_offset);
    EXPECT_EQ(b->target_component_offset, m.target_component_offset);
  }
}
