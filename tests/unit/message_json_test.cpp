// Messages as mavlink2rest's JSON: the shapes programs read (enums, bitmasks, strings, arrays,
// NaN, "mavtype"), every message of the dialect both ways, the errors a bad post gets, and the
// tree and WebSocket feeds built on them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "dialect/builtin.hpp"
#include "dialect/loader.hpp"
#include "mavswitch/msg/gps_status.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/statustext.hpp"
#include "protocol/encoder.hpp"
#include "protocol/parser.hpp"
#include "support/alloc_counter.hpp"
#include "support/frames.hpp"
#include "vehicle/json_feed.hpp"
#include "vehicle/message_json.hpp"
#include "vehicle/message_tree.hpp"

namespace mavswitch {
namespace {

using Json = nlohmann::json;
using dialect::FieldType;

const vehicle::MessageJson& codec() {
  static const vehicle::MessageJson json(dialect::builtin::model());
  return json;
}

Json as_json(const test::Bytes& frame) {
  std::string text;
  EXPECT_TRUE(codec().write_frame(test::view_of(frame), text));
  return Json::parse(text);
}

TEST(BuiltinModel, IsTheDialectTheXmlDefines) {
  const dialect::Dialect xml = dialect::load_dialect(std::string(MAVSWITCH_DEFINITIONS_DIR) + "/" +
                                                     std::string(dialect::builtin::name()) + ".xml");
  const dialect::Dialect& built = dialect::builtin::model();
  ASSERT_EQ(built.messages.size(), xml.messages.size());
  for (size_t i = 0; i < xml.messages.size(); ++i) {
    const auto &a = built.messages[i], &b = xml.messages[i];
    ASSERT_EQ(a.name, b.name);
    EXPECT_EQ(a.crc_extra, b.crc_extra) << a.name;
    EXPECT_EQ(a.max_len, b.max_len) << a.name;
    ASSERT_EQ(a.fields.size(), b.fields.size()) << a.name;
    for (size_t f = 0; f < a.fields.size(); ++f) {
      EXPECT_EQ(a.fields[f].enum_name, b.fields[f].enum_name) << a.name;
      EXPECT_EQ(a.fields[f].display, b.fields[f].display) << a.name;
      EXPECT_EQ(a.fields[f].wire_offset, b.fields[f].wire_offset) << a.name;
    }
  }
  ASSERT_EQ(built.enums.size(), xml.enums.size());
  for (size_t i = 0; i < xml.enums.size(); ++i) {
    EXPECT_EQ(built.enums[i].name, xml.enums[i].name);
    EXPECT_EQ(built.enums[i].bitmask, xml.enums[i].bitmask);
    ASSERT_EQ(built.enums[i].entries.size(), xml.enums[i].entries.size()) << xml.enums[i].name;
    for (size_t e = 0; e < xml.enums[i].entries.size(); ++e) {
      EXPECT_EQ(built.enums[i].entries[e].name, xml.enums[i].entries[e].name);
      EXPECT_EQ(built.enums[i].entries[e].value, xml.enums[i].entries[e].value);
    }
  }
}

TEST(MessageJson, HeartbeatAsMavlink2restWritesIt) {
  msg::Heartbeat hb;
  hb.type = 2;             // MAV_TYPE_QUADROTOR
  hb.autopilot = 3;        // MAV_AUTOPILOT_ARDUPILOTMEGA
  hb.base_mode = 128 | 1;  // SAFETY_ARMED | CUSTOM_MODE_ENABLED
  hb.custom_mode = 4;
  hb.system_status = 4;  // MAV_STATE_ACTIVE
  const Json j = as_json(test::frame_of(hb, 1, 1, 7));
  EXPECT_EQ(j["header"], (Json{{"system_id", 1}, {"component_id", 1}, {"sequence", 7}}));
  const Json& m = j["message"];
  EXPECT_EQ(m["type"], "HEARTBEAT");
  EXPECT_EQ(m["mavtype"], (Json{{"type", "MAV_TYPE_QUADROTOR"}}));
  EXPECT_FALSE(m.contains("type") && m["type"].is_object());
  EXPECT_EQ(m["autopilot"], (Json{{"type", "MAV_AUTOPILOT_ARDUPILOTMEGA"}}));
  EXPECT_EQ(m["system_status"], (Json{{"type", "MAV_STATE_ACTIVE"}}));
  EXPECT_EQ(m["base_mode"], "MAV_MODE_FLAG_SAFETY_ARMED | MAV_MODE_FLAG_CUSTOM_MODE_ENABLED");
  EXPECT_EQ(m["custom_mode"], 4);
  EXPECT_EQ(m["mavlink_version"], 3);
  // Fields in wire order, as mavlink2rest's structs have them: custom_mode (uint32) first.
  std::string text;
  codec().write_message(msg::Heartbeat::kId, test::view_of(test::frame_of(hb, 1, 1)).payload(), text);
  EXPECT_EQ(std::next(nlohmann::ordered_json::parse(text).begin()).key(), "custom_mode");
  hb.base_mode = 0;
  EXPECT_EQ(as_json(test::frame_of(hb, 1, 1))["message"]["base_mode"], "");
}

TEST(MessageJson, AValueItsEnumDoesNotNameIsANumber) {
  msg::Heartbeat hb;
  hb.type = 200;  // no MAV_TYPE
  hb.system_status = 99;
  const Json m = as_json(test::frame_of(hb, 1, 1))["message"];
  EXPECT_EQ(m["mavtype"], 200);
  EXPECT_EQ(m["system_status"], 99);
}

TEST(MessageJson, StringsArraysAndNanAreWhatJsonCanCarry) {
  msg::Statustext text;
  text.severity = 6;
  const std::string said =
      "Temp 40\xc2\xb0"
      "C \"ok\"\x01\xff";
  std::memcpy(text.text.data(), said.data(), said.size());
  const Json m = as_json(test::frame_of(text, 1, 1))["message"];
  // UTF-8 as it is, a quote escaped, a control byte and a byte that is not UTF-8 as \u00XX.
  EXPECT_EQ(m["text"],
            "Temp 40\xc2\xb0"
            "C \"ok\"\x01\xc3\xbf");
  EXPECT_EQ(m["severity"], (Json{{"type", "MAV_SEVERITY_INFO"}}));

  msg::GpsStatus gps;
  gps.satellites_visible = 2;
  gps.satellite_prn[0] = 7;
  gps.satellite_prn[1] = 9;
  const Json g = as_json(test::frame_of(gps, 1, 1))["message"];
  ASSERT_TRUE(g["satellite_prn"].is_array());
  EXPECT_EQ(g["satellite_prn"].size(), 20u);
  EXPECT_EQ(g["satellite_prn"][1], 9);

  std::string out;
  const float values[6] = {NAN, INFINITY, -INFINITY, 0.1f, -0.0f, 1e30f};
  uint8_t payload[28] = {};  // time_boot_ms, then the six floats
  std::memcpy(payload + 4, values, sizeof values);
  ASSERT_TRUE(codec().write_message(30, payload, out));  // ATTITUDE: time_boot_ms, then 6 floats
  const Json a = Json::parse(out);
  EXPECT_TRUE(a["roll"].is_null() && a["pitch"].is_null() && a["yaw"].is_null());
  EXPECT_EQ(a["rollspeed"].get<float>(), 0.1f);
}

// Found by vehicle_data_fuzz: bytes that look like UTF-8 but are not (an overlong form, a
// surrogate, past U+10FFFF) were written as they were, and the tree was not JSON.
TEST(MessageJson, BytesThatOnlyLookLikeUtf8AreEscaped) {
  msg::Statustext text;
  const std::string said = "\xf0\x83\x9b\x86 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf \xf0\x9f\x9a\x81";
  std::memcpy(text.text.data(), said.data(), said.size());
  std::string out;
  const auto frame = test::frame_of(text, 1, 1);
  ASSERT_TRUE(codec().write_message(msg::Statustext::kId, test::view_of(frame).payload(), out));
  const Json m = Json::parse(out, nullptr, false);
  ASSERT_FALSE(m.is_discarded()) << out;
  EXPECT_EQ(m["text"].get<std::string>().substr(m["text"].get<std::string>().size() - 4), "\xf0\x9f\x9a\x81")
      << "a well-formed sequence stays as it is";
}

// Every message of the dialect, with random values: to JSON and back gives the same payload.
TEST(MessageJson, EveryMessageRoundTrips) {
  std::mt19937_64 rng(7);
  const dialect::Dialect& d = dialect::builtin::model();
  protocol::FrameParser parser(dialect::builtin::message_table());
  for (const dialect::MessageDef& m : d.messages) {
    uint8_t payload[256] = {};
    for (const dialect::FieldDef& f : m.fields) {
      uint8_t* at = payload + f.wire_offset;
      const size_t n = std::max<uint16_t>(f.array_len, 1);
      for (size_t i = 0; i < n; ++i) {
        uint8_t* p = at + i * dialect::type_size(f.type);
        if (f.type == FieldType::kFloat) {
          const float v = float(std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
          std::memcpy(p, &v, 4);
        } else if (f.type == FieldType::kDouble) {
          const double v = std::uniform_real_distribution<double>(-1e9, 1e9)(rng);
          std::memcpy(p, &v, 8);
        } else if (f.type == FieldType::kChar) {
          *p = static_cast<uint8_t>(i < n - rng() % (n + 1) ? '!' + rng() % 94 : 0);
          if (i > 0 && p[-1] == 0) *p = 0;  // a string ends at its first NUL
        } else {
          const uint64_t v = rng();
          std::memcpy(p, &v, dialect::type_size(f.type));
        }
      }
      if (f.mavlink_version) *at = 3;
    }
    std::string text = R"({"header":{"system_id":3,"component_id":4,"sequence":5},"message":)";
    ASSERT_TRUE(codec().write_message(m.id, {payload, m.max_len}, text));
    text += "}";
    uint8_t frame[protocol::kMaxFrameLen];
    std::string error;
    const size_t len = codec().encode(Json::parse(text), frame, &error);
    ASSERT_GT(len, 0u) << m.name << ": " << error << "\n" << text;
    const test::Bytes bytes(frame, frame + len);
    const protocol::FrameView view = test::view_of(bytes);
    EXPECT_EQ(view.msgid(), m.id);
    EXPECT_EQ(view.sysid(), 3);
    EXPECT_EQ(view.compid(), 4);
    EXPECT_EQ(view.seq(), 5);
    uint8_t back[256] = {};
    std::memcpy(back, view.payload().data(), view.payload().size());
    EXPECT_EQ(std::memcmp(back, payload, m.max_len), 0) << m.name << "\n" << text;
    size_t frames = 0;
    parser.feed({frame, len}, [&](const protocol::FrameView& f) { frames += f.verified(); });
    EXPECT_EQ(frames, 1u) << m.name << ": a frame with its CRC";
  }
}

std::string encode_error(const std::string& body) {
  uint8_t frame[protocol::kMaxFrameLen];
  std::string error;
  EXPECT_EQ(codec().encode(Json::parse(body), frame, &error), 0u) << body;
  return error;
}

TEST(MessageJson, ABadPostIsRefusedNamingWhatIsWrong) {
  EXPECT_NE(encode_error(R"({"message":{"type":"NO_SUCH"}})").find("NO_SUCH"), std::string::npos);
  EXPECT_NE(encode_error(R"({"message":{"type":"COMMAND_LONG","colour":1}})").find("\"colour\""), std::string::npos);
  EXPECT_NE(
      encode_error(R"({"message":{"type":"COMMAND_LONG","command":{"type":"MAV_CMD_NOPE"}}})").find("MAV_CMD_NOPE"),
      std::string::npos);
  EXPECT_NE(encode_error(R"({"message":{"type":"COMMAND_LONG","target_system":256}})").find("out of range"),
            std::string::npos);
  EXPECT_NE(encode_error(R"({"message":{"type":"COMMAND_LONG","target_system":-1}})").find("out of range"),
            std::string::npos);
  EXPECT_NE(encode_error(R"({"message":{"type":"COMMAND_LONG","param1":"1"}})").find("a number"), std::string::npos);
  EXPECT_NE(encode_error(R"({"message":{"type":"COMMAND_LONG","confirmation":1.5}})").find("confirmation"),
            std::string::npos);
  EXPECT_NE(encode_error(R"({"message":{"type":"STATUSTEXT","text":")" + std::string(60, 'x') + "\"}}").find("50"),
            std::string::npos);
  EXPECT_NE(encode_error(R"({"header":{"system_id":300},"message":{"type":"HEARTBEAT"}})").find("system_id"),
            std::string::npos);
  EXPECT_NE(encode_error(R"({"header":{"sysid":1},"message":{"type":"HEARTBEAT"}})").find("sysid"), std::string::npos);
  EXPECT_NE(encode_error(R"([1,2])").find("object"), std::string::npos);
  EXPECT_NE(
      encode_error(R"({"message":{"type":"HEARTBEAT","base_mode":"MAV_MODE_FLAG_NOPE"}})").find("MAV_MODE_FLAG_NOPE"),
      std::string::npos);
}

TEST(MessageJson, NamesNumbersAndFlagsAreAllAccepted) {
  uint8_t frame[protocol::kMaxFrameLen];
  std::string error;
  const auto heartbeat_of = [&](const std::string& message) {
    const size_t n = codec().encode(Json::parse(R"({"message":{"type":"HEARTBEAT",)" + message + "}}"), frame, &error);
    EXPECT_GT(n, 0u) << error;
    return msg::Heartbeat::decode(test::view_of(test::Bytes(frame, frame + n)).payload());
  };
  EXPECT_EQ(heartbeat_of(R"("mavtype":{"type":"MAV_TYPE_QUADROTOR"})").type, 2);
  EXPECT_EQ(heartbeat_of(R"("mavtype":"MAV_TYPE_HEXAROTOR")").type, 13);
  EXPECT_EQ(heartbeat_of(R"("mavtype":2)").type, 2);
  EXPECT_EQ(heartbeat_of(R"("base_mode":"MAV_MODE_FLAG_SAFETY_ARMED | MAV_MODE_FLAG_CUSTOM_MODE_ENABLED")").base_mode,
            129);
  EXPECT_EQ(heartbeat_of(R"("base_mode":{"bits":129})").base_mode, 129);
  EXPECT_EQ(heartbeat_of(R"("base_mode":"")").base_mode, 0);
  EXPECT_EQ(heartbeat_of(R"("custom_mode":4.0)").custom_mode, 4u);
  const auto hb = heartbeat_of(R"("mavtype":{"type":"MAV_TYPE_GCS"})");
  EXPECT_EQ(hb.mavlink_version, 3);  // filled whatever was given
  // The header mavlink2rest's helper gives when none is posted.
  const test::Bytes bytes(frame,
                          frame + codec().encode(Json::parse(R"({"message":{"type":"HEARTBEAT"}})"), frame, &error));
  const auto view = test::view_of(bytes);
  EXPECT_EQ(view.sysid(), 255);
  EXPECT_EQ(view.compid(), 0);
}

TEST(MessageJson, TheHelperIsATemplateWithEnumsShapedAsNames) {
  const Json h = Json::parse(codec().helper("COMMAND_LONG"));
  EXPECT_EQ(h["header"]["system_id"], 255);
  EXPECT_EQ(h["message"]["type"], "COMMAND_LONG");
  EXPECT_TRUE(h["message"]["command"].is_object());
  EXPECT_EQ(h["message"]["param1"], 0);
  EXPECT_EQ(Json::parse(codec().helper("HEARTBEAT"))["message"]["mavlink_version"], 3);
  EXPECT_TRUE(codec().helper("NOPE").empty());
}

TEST(NewestFrames, KeepsTheNewestOfEachMessageAndCountsIt) {
  NewestFrames newest;
  const transport::Millis t0 = 1'000'000;
  for (uint32_t i = 0; i < 100; ++i) newest.add(test::view_of(test::attitude(1, 1, i * 20)), t0 + i * 20);
  newest.add(test::view_of(test::heartbeat(2, 1)), t0);
  const vehicle::WallTimes at{t0 + 2000, vehicle::WallClock::now()};
  const Json j = Json::parse(vehicle::render_tree(newest.copy(at.loop_now), codec(), at));
  const Json& att = j["vehicles"]["1"]["components"]["1"]["messages"]["ATTITUDE"];
  EXPECT_EQ(j["vehicles"]["1"]["id"], 1);
  EXPECT_EQ(j["vehicles"]["1"]["components"]["1"]["id"], 1);
  EXPECT_EQ(att["message"]["time_boot_ms"], 99 * 20);
  EXPECT_EQ(att["status"]["time"]["counter"], 100);
  EXPECT_NEAR(att["status"]["time"]["frequency"].get<double>(), 50, 2.5);
  EXPECT_EQ(att["status"]["time"]["last_update"],
            vehicle::iso_time(at.wall_now - std::chrono::milliseconds(2000 - 99 * 20)));
  EXPECT_EQ(j["vehicles"]["2"]["components"]["1"]["messages"]["HEARTBEAT"]["message"]["type"], "HEARTBEAT");
  // A stream that stopped reads slower and slower, not its old rate for ever.
  const vehicle::WallTimes later_at{t0 + 20'000, vehicle::WallClock::now()};
  const Json later = Json::parse(vehicle::render_tree(newest.copy(later_at.loop_now), codec(), later_at));
  EXPECT_LT(
      later["vehicles"]["1"]["components"]["1"]["messages"]["ATTITUDE"]["status"]["time"]["frequency"].get<double>(),
      10);
}

TEST(NewestFrames, ARateIsOfTheLastWindowRead) {
  NewestFrames newest;
  const transport::Millis t0 = 5'000;
  for (int i = 0; i < 40; ++i) newest.add(test::view_of(test::attitude(1, 1, 0)), t0 + i * 50);  // 20 Hz for 2 s
  EXPECT_NEAR(newest.copy(30, t0 + 2000).at(0).frequency_at(t0 + 2000), 20, 1);
  for (int i = 0; i < 20; ++i) newest.add(test::view_of(test::attitude(1, 1, 0)), t0 + 2000 + i * 100);  // then 10 Hz
  EXPECT_NEAR(newest.copy(30, t0 + 4000).at(0).frequency_at(t0 + 4000), 10, 1);
  EXPECT_TRUE(newest.copy(0, t0 + 4000).empty());
}

TEST(NewestFrames, ASlotsFrameIsKeptWithoutAllocating) {
  NewestFrames newest;
  const auto frame = test::attitude(1, 1, 0);
  newest.add(test::view_of(frame), 0);
  test::AllocationCounter counter;
  for (int i = 0; i < 1000; ++i) newest.add(test::view_of(frame), i);
  EXPECT_EQ(counter.count(), 0u);
}

TEST(NewestFrames, EveryPayloadLengthIsKeptExactlyInBothVersions) {
  // FILE_TRANSFER_PROTOCOL: any length up to 254 parses; each frame of one key replaces the last,
  // longer and shorter, so a copy in pieces that ran short or long would show.
  const auto* info = dialect::builtin::message_table().find(110);
  ASSERT_NE(info, nullptr);
  NewestFrames newest;
  for (const bool v1 : {false, true}) {
    for (size_t len = 1; len <= info->max_len; len += (len < 40 ? 1 : 13)) {
      std::vector<uint8_t> payload(len);
      for (size_t i = 0; i < len; ++i) payload[i] = uint8_t(1 + (i * 7 + len) % 250);  // no zero: v2 keeps it all
      test::Bytes frame(protocol::kMaxFrameLen);
      const protocol::FrameHeader header{.seq = uint8_t(len), .sysid = 3, .compid = 4, .msgid = 110};
      frame.resize(v1 ? protocol::encode_v1(header, payload, info->crc_extra, frame)
                      : protocol::encode_v2(header, payload, info->crc_extra, frame));
      const protocol::FrameView view = test::view_of(frame);
      ASSERT_EQ(view.payload_len(), len);
      newest.add(view, transport::Millis(len));
      const auto kept = newest.copy(110, transport::Millis(len));
      ASSERT_EQ(kept.size(), 1u);
      const auto want = view.payload();
      ASSERT_EQ(kept[0].payload_len, want.size()) << len;
      EXPECT_TRUE(std::equal(want.begin(), want.end(), kept[0].payload.begin())) << "length " << len;
      EXPECT_EQ(kept[0].sequence, uint8_t(len));
      EXPECT_EQ(kept[0].last, transport::Millis(len));
    }
  }
}

TEST(NewestFrames, InventedSystemsStopAtTheBound) {
  NewestFrames newest;
  for (int sys = 0; sys < 256; ++sys)
    for (int comp = 0; comp < 65; ++comp) newest.add(test::view_of(test::heartbeat(uint8_t(sys), uint8_t(comp))), 0);
  EXPECT_EQ(newest.copy(0).size(), NewestFrames::kMaxSlots);
  EXPECT_EQ(newest.refused(), 256u * 65 - NewestFrames::kMaxSlots);
  // Each kept slot is found again, not made twice.
  newest.add(test::view_of(test::heartbeat(0, 0)), 1);
  EXPECT_EQ(newest.size(), NewestFrames::kMaxSlots);
  EXPECT_EQ(newest.copy(0, 1).at(0).counter, 2u);
}

TEST(JsonFeed, TakesWhatItsFilterWantsAtItsRateAndDropsItsOldest) {
  int wakes = 0;
  vehicle::JsonFeed::Filter filter;
  filter.messages = {30};  // ATTITUDE
  filter.system = 1;
  filter.rate = 5;
  vehicle::JsonFeed feed(filter, [&] { ++wakes; });
  const auto t0 = vehicle::WallClock::now();
  EXPECT_FALSE(feed.wants(test::view_of(test::heartbeat(1, 1)), t0));
  EXPECT_FALSE(feed.wants(test::view_of(test::attitude(2, 1, 0)), t0));
  int wanted = 0;
  for (int i = 0; i < 500; ++i)  // ten seconds at 50 Hz, with jitter
    wanted += feed.wants(test::view_of(test::attitude(1, 1, 0)), t0 + std::chrono::milliseconds(i * 20 + i % 3));
  EXPECT_NEAR(wanted, 50, 2);
  for (size_t i = 0; i < vehicle::JsonFeed::kMaxWaiting + 10; ++i)
    feed.push(std::make_shared<const std::string>(std::to_string(i)));
  EXPECT_EQ(wakes, 0) << "pushes are woken in batches";
  feed.wake();
  feed.wake();
  EXPECT_EQ(wakes, 1) << "once for the batch, not again with nothing new";
  std::vector<vehicle::Text> got;
  feed.take(got);
  ASSERT_EQ(got.size(), vehicle::JsonFeed::kMaxWaiting);
  EXPECT_EQ(*got.front(), "10");  // the oldest went
  EXPECT_EQ(feed.dropped(), 10u);
  // A batch larger than twice the bound between two wake-ups stays bounded; still the newest kept.
  const size_t burst = 2 * vehicle::JsonFeed::kMaxWaiting + 5;
  for (size_t i = 0; i < burst; ++i) feed.push(std::make_shared<const std::string>("b" + std::to_string(i)));
  feed.wake();
  got.clear();
  feed.take(got);
  ASSERT_EQ(got.size(), vehicle::JsonFeed::kMaxWaiting);
  EXPECT_EQ(*got.front(), "b" + std::to_string(burst - vehicle::JsonFeed::kMaxWaiting));
  EXPECT_EQ(*got.back(), "b" + std::to_string(burst - 1));
  EXPECT_EQ(feed.dropped(), 10u + burst - vehicle::JsonFeed::kMaxWaiting);
}

}  // namespace
}  // namespace mavswitch
