// The telemetry log: rotation by size, the file-count limit, and while-armed files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "daemon/telemetry_log.hpp"
#include "dialect/builtin.hpp"
#include "dialect/typed_message.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "protocol/tlog.hpp"
#include "support/frames.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;
namespace fs = std::filesystem;

namespace {

class TelemetryLogTest : public ::testing::Test {
 protected:
  template <class M>
  void write(daemon::TelemetryLog& log, const M& m, uint8_t sys = 1) {
    const test::Bytes frame = test::frame_of(m, sys, 1);
    log.write(test::view_of(frame));
  }
  std::vector<fs::path> files() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }
  size_t frames_in(const fs::path& file) {
    const auto bytes = test::read_bytes(file);
    return protocol::read_tlog(dialect::builtin::message_table(), bytes, [](uint64_t, const protocol::FrameView&) {})
        .frames;
  }
  test::ScratchDir scratch_{"mavswitch-tlog"};
  const fs::path dir_ = scratch_ / "logs";  // created by the log itself
};

msg::Heartbeat heartbeat(bool armed) {
  msg::Heartbeat hb;
  hb.autopilot = 3;
  hb.base_mode = armed ? 128 | 1 : 1;
  return hb;
}

}  // namespace

TEST_F(TelemetryLogTest, RotatesBySizeAndKeepsAtMostMaxFiles) {
  {
    daemon::TelemetryLog log({dir_, 1000, 3, 0, daemon::LogMode::kAlways, std::nullopt});
    write(log, heartbeat(false));         // the vehicle: logging starts
    for (uint32_t i = 0; i < 200; ++i) {  // 200 x (8 + 39) bytes: about ten files' worth
      msg::Attitude a;
      a.time_boot_ms = i + 1;
      write(log, a);
    }
    EXPECT_EQ(log.frames_written(), 201u);
  }
  const auto logs = files();
  ASSERT_EQ(logs.size(), 3u) << "older files were deleted";
  for (const auto& f : logs) {
    EXPECT_EQ(f.extension(), ".tlog");
    EXPECT_LE(fs::file_size(f), 1000u + 47u);
  }
  EXPECT_GT(frames_in(logs[0]), 0u);
}

// Named as mavlink-router names them, NNNNN-YYYY-MM-DD_HH-MM-SS.tlog, the index one past the
// highest of any log already in the directory (theirs included), so its scripts find ours.
TEST_F(TelemetryLogTest, NamesCountOnFromTheHighestIndexInTheDirectory) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "00041-2026-11-30_09-00-00.bin") << "a flight log of mavlink-router's";
  std::ofstream(dir_ / "00007-2026-11-29_09-00-00.tlog") << "";
  {
    daemon::TelemetryLog log({dir_, 0, 0, 0, daemon::LogMode::kAlways, std::nullopt});
    write(log, heartbeat(false));
    const std::string name = log.current_file().filename().string();
    ASSERT_EQ(name.size(), std::string("00042-2026-12-02_10-00-00.tlog").size()) << name;
    EXPECT_EQ(name.substr(0, 6), "00042-") << name;
    EXPECT_EQ(name.substr(10, 1) + name.substr(13, 1) + name.substr(16, 1) + name.substr(19, 1) + name.substr(22, 1),
              "--_--")
        << name;
    EXPECT_EQ(log.current_file().extension(), ".tlog");
  }
}

// "always" starts with the vehicle's first heartbeat, not with the process: a router whose
// vehicle never came leaves no empty log. A ground station's heartbeat (autopilot INVALID) is
// not the vehicle's.
TEST_F(TelemetryLogTest, AlwaysStartsAtTheVehiclesFirstHeartbeat) {
  {
    daemon::TelemetryLog log({dir_, 0, 0, 0, daemon::LogMode::kAlways, std::nullopt});
    write(log, msg::Attitude{});
    msg::Heartbeat gcs;
    gcs.autopilot = 8;  // MAV_AUTOPILOT_INVALID
    write(log, gcs, 255);
    EXPECT_TRUE(files().empty());
    write(log, heartbeat(false));
    write(log, msg::Attitude{});
  }
  const auto logs = files();
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(frames_in(logs[0]), 2u) << "from the vehicle's heartbeat on";
}

TEST_F(TelemetryLogTest, WhileArmedWritesOneFilePerArming) {
  {
    daemon::TelemetryLog log({dir_, 0, 0, 0, daemon::LogMode::kWhileArmed, std::nullopt});
    msg::Attitude a;
    write(log, heartbeat(false));
    write(log, a);  // disarmed: not logged
    EXPECT_TRUE(files().empty());
    write(log, heartbeat(true));
    write(log, a);
    write(log, a);
    write(log, heartbeat(false));  // the disarming heartbeat ends the file
    write(log, a);
    write(log, heartbeat(true));
    write(log, a);
  }
  const auto logs = files();
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(frames_in(logs[0]), 4u);  // armed heartbeat, 2 attitudes, disarmed heartbeat
  EXPECT_EQ(frames_in(logs[1]), 2u);
}

TEST_F(TelemetryLogTest, WhileArmedFollowsTheConfiguredSystemOnly) {
  {
    daemon::TelemetryLog log({dir_, 0, 0, 0, daemon::LogMode::kWhileArmed, uint8_t{7}});
    write(log, heartbeat(true), 1);  // another vehicle arms: not ours
    EXPECT_TRUE(files().empty());
    write(log, heartbeat(true), 7);
  }
  EXPECT_EQ(files().size(), 1u);
}
