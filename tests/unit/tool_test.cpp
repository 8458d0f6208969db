// The `mavswitch` command line tool, run as a user runs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_support.hpp"

using mavswitch::test::run_command;
namespace fs = std::filesystem;

namespace {

const std::string kTool = MAVSWITCH_TOOL;

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

fs::path temp_file(const std::string& name, const std::string& content) {
  const fs::path p = fs::temp_directory_path() / ("mavswitch-tool-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

}  // namespace

TEST(Tool, DialectPrintsOneLinePerMessageSortedById) {
  std::string out;
  ASSERT_EQ(
      run_command(kTool + " dialect " + q(mavswitch::test::definitions_dir() / "common.xml") + " 2>/dev/null", &out),
      0);
  const auto l = lines(out);
  ASSERT_GT(l.size(), 200u);
  EXPECT_EQ(l[0], "0 HEARTBEAT 50 9 9 - -");
  EXPECT_EQ(l[3], "4 PING 237 14 14 12 13");
  long previous = -1;
  for (const auto& line : l) {
    const long id = std::stol(line);
    EXPECT_GT(id, previous) << line;
    previous = id;
    EXPECT_EQ(std::count(line.begin(), line.end(), ' '), 6) << line;
  }
}

TEST(Tool, DialectErrorsGoToStderrWithNonZeroStatus) {
  const auto bad = temp_file("bad.xml", "<mavlink><messages></mavlink>");
  std::string out;
  EXPECT_EQ(run_command(kTool + " dialect " + q(bad) + " 2>&1", &out), 1);
  EXPECT_NE(out.find(bad.string() + ":1: malformed XML"), std::string::npos) << out;
  std::string stdout_only;
  EXPECT_EQ(run_command(kTool + " dialect " + q(bad) + " 2>/dev/null", &stdout_only), 1);
  EXPECT_TRUE(stdout_only.empty());
  fs::remove(bad);
}

TEST(Tool, DumpPrintsEveryFrameAndASummary) {
  const auto capture = mavswitch::test::captures_dir() / "GH-5.bin";
  std::string out, err;
  ASSERT_EQ(run_command(kTool + " dump " + q(capture) + " 2>/dev/null", &out), 0);
  const auto l = lines(out);
  ASSERT_EQ(l.size(), 138u);
  EXPECT_EQ(l[0].rfind("v1 seq=35 sys=1 comp=1 id=105 HIGHRES_IMU time_usec=2114170 xacc=-0.31771815", 0), 0u) << l[0];
  ASSERT_EQ(run_command(kTool + " dump " + q(capture) + " 2>&1 >/dev/null", &err), 0);
  EXPECT_NE(err.find("summary: 138 frames in 7383 bytes"), std::string::npos) << err;
  EXPECT_NE(err.find("  HIGHRES_IMU 21"), std::string::npos) << err;
  EXPECT_NE(err.find("bytes_skipped=5 crc_failures=0"), std::string::npos) << err;
}

TEST(Tool, DumpJsonHasTheDocumentedKeys) {
  const auto capture = mavswitch::test::captures_dir() / "mavlink-v2-3412-packets.bin";
  std::string out;
  ASSERT_EQ(run_command(kTool + " dump --json " + q(capture) + " 2>/dev/null", &out), 0);
  const auto l = lines(out);
  ASSERT_EQ(l.size(), 3412u);
  for (const char* key : {"\"time_usec\":null", "\"version\":2", "\"seq\":", "\"sysid\":1", "\"compid\":1",
                          "\"msgid\":", "\"name\":\"", "\"fields\":{"}) {
    EXPECT_NE(l[0].find(key), std::string::npos) << key << " in " << l[0];
  }
  bool found_string = false;
  for (const auto& line : l) {
    if (line.find("\"name\":\"STATUSTEXT\"") != std::string::npos) {
      found_string = line.find("\"text\":\"") != std::string::npos;  // char arrays print as strings
    }
  }
  EXPECT_TRUE(found_string);
}

TEST(Tool, RuntimeDialectGivesTheSameOutputAsTheBuiltIn) {
  const auto capture = mavswitch::test::captures_dir() / "mavlink-v2-3412-packets.bin";
  std::string builtin, runtime;
  ASSERT_EQ(run_command(kTool + " dump --json " + q(capture) + " 2>/dev/null", &builtin), 0);
  ASSERT_EQ(
      run_command(kTool + " dump --json --dialect " + q(mavswitch::test::definitions_dir() / "ardupilotmega.xml") +
                      " " + q(capture) + " 2>/dev/null",
                  &runtime),
      0);
  EXPECT_EQ(builtin, runtime);
}

TEST(Tool, CustomDialectDecodesWithoutRebuild) {
  // A private message id the built-in dialect does not know.
  const auto xml = temp_file("custom.xml", R"(<?xml version="1.0"?><mavlink><messages>
    <message id="42424" name="CAMERA_TWEAK"><field type="uint16_t" name="zoom">z</field>
    <field type="char[4]" name="tag">t</field></message></messages></mavlink>)");
  // Frame: v2, seq 1, sys 9, comp 100, msgid 42424, payload zoom=300, tag="ab"; CRC from the dialect.
  std::string table;
  ASSERT_EQ(run_command(kTool + " dialect " + q(xml), &table), 0);
  const int crc_extra = std::stoi(lines(table)[0].substr(std::string("42424 CAMERA_TWEAK ").size()));
  // The frame is built by hand here, so the test does not lean on the code under test.
  uint8_t f[32] = {0xFD, 4, 0, 0, 1, 9, 100, 0xB8, 0xA5, 0x00, 0x2C, 0x01, 'a', 'b'};
  uint16_t crc = 0xFFFF;
  auto acc = [&](uint8_t b) {
    uint8_t t = static_cast<uint8_t>(b ^ (crc & 0xFF));
    t = static_cast<uint8_t>(t ^ (t << 4));
    crc = static_cast<uint16_t>((crc >> 8) ^ (t << 8) ^ (t << 3) ^ (t >> 4));
  };
  for (int i = 1; i < 14; ++i) acc(f[i]);
  acc(static_cast<uint8_t>(crc_extra));
  f[14] = static_cast<uint8_t>(crc & 0xFF);
  f[15] = static_cast<uint8_t>(crc >> 8);
  const auto bin = temp_file("custom.bin", std::string(reinterpret_cast<char*>(f), 16));
  std::string with, without;
  ASSERT_EQ(run_command(kTool + " dump --dialect " + q(xml) + " " + q(bin) + " 2>/dev/null", &with), 0);
  EXPECT_EQ(with, "v2 seq=1 sys=9 comp=100 id=42424 CAMERA_TWEAK zoom=300 tag=\"ab\"\n");
  ASSERT_EQ(run_command(kTool + " dump " + q(bin) + " 2>/dev/null", &without), 0);
  EXPECT_EQ(without, "v2 seq=1 sys=9 comp=100 id=42424 UNKNOWN payload=2c016162\n");
  fs::remove(xml);
  fs::remove(bin);
}

TEST(Tool, DumpReadsTlogsAndStdin) {
  // One HEARTBEAT record at t = 1700000000123456 us.
  const uint8_t rec[] = {0x00, 0x06, 0x0A, 0x24, 0x18, 0x20, 0x22, 0x40,  // 1700000000123456
                         0xfd, 0x09, 0x00, 0x00, 0x2a, 0xff, 0xbe, 0x00, 0x00, 0x00, 0x07,
                         0x00, 0x03, 0x00, 0x02, 0x03, 0x51, 0x04, 0x03, 0x01, 0x97};
  const auto log = temp_file("one.tlog", std::string(reinterpret_cast<const char*>(rec), sizeof rec));
  std::string out, piped;
  ASSERT_EQ(run_command(kTool + " dump " + q(log) + " 2>/dev/null", &out), 0);
  EXPECT_EQ(out.rfind("2023-11-14T22:13:20.123456Z v2 seq=42 sys=255 comp=190 id=0 HEARTBEAT type=2 autopilot=3 "
                      "base_mode=81 "
                      "custom_mode=196615",
                      0),
            0u)
      << out;
  ASSERT_EQ(run_command("cat " + q(log) + " | " + kTool + " dump --tlog --json - 2>/dev/null", &piped), 0);
  EXPECT_EQ(piped.rfind("{\"time_usec\":1700000000123456,\"version\":2", 0), 0u) << piped;
  fs::remove(log);
}

TEST(Tool, BadInputIsAClearErrorNotACrash) {
  std::string out;
  EXPECT_EQ(run_command(kTool + " dump /nonexistent/file.bin 2>&1", &out), 1);
  EXPECT_NE(out.find("/nonexistent/file.bin: No such file or directory"), std::string::npos) << out;
  const auto junk = temp_file("junk.bin", std::string(5000, 'x'));
  out.clear();
  EXPECT_EQ(run_command(kTool + " dump " + q(junk) + " 2>&1", &out), 1);
  EXPECT_NE(out.find("no MAVLink frames found"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(run_command(kTool + " dump --dialect /nonexistent.xml " + q(junk) + " 2>&1", &out), 1);
  EXPECT_NE(out.find("/nonexistent.xml: no such file"), std::string::npos) << out;
  fs::remove(junk);
}

TEST(Tool, LogsListsALogDirectoryOldestFirst) {
  mavswitch::test::ScratchDir dir("mavswitch-logs-tool");
  dir.write("00002-2026-12-01_10-00-00.ulg", "ulog");
  dir.write("00001-2026-12-01_09-00-00.tlog", "tlog!");
  dir.write("notes.txt", "not a log");
  std::filesystem::permissions(dir / "00001-2026-12-01_09-00-00.tlog", std::filesystem::perms::owner_read);
  std::string out;
  ASSERT_EQ(run_command(std::string(MAVSWITCH_TOOL) + " logs " + dir.path().string(), &out), 0);
  const auto tlog = out.find("00001-2026-12-01_09-00-00.tlog"), ulog = out.find("00002-2026-12-01_10-00-00.ulg");
  ASSERT_NE(tlog, std::string::npos) << out;
  ASSERT_NE(ulog, std::string::npos) << out;
  EXPECT_LT(tlog, ulog) << "oldest first";
  EXPECT_EQ(out.find("notes.txt"), std::string::npos);
  EXPECT_NE(out.find("telemetry"), std::string::npos);
  EXPECT_NE(out.find("finished"), std::string::npos);
  EXPECT_NE(out.find("writing"), std::string::npos);
  ASSERT_EQ(run_command(std::string(MAVSWITCH_TOOL) + " logs --json " + dir.path().string(), &out), 0);
  EXPECT_NE(out.find("\"kind\":\"ULog\",\"bytes\":4,\"state\":\"writing\""), std::string::npos) << out;
}
