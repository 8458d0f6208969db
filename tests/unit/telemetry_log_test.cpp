// The telemetry log: rotation by size, the file-count limit, and while-armed files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

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
    for (uint32_t i = 0; i < 200; ++i) {  // 200 x (8 + 39) bytes: about ten files' worth
      msg::Attitude a;
      a.time_boot_ms = i + 1;
      write(log, a);
    }
    EXPECT_EQ(log.frames_written(), 200u);
  }
  const auto logs = files();
  ASSERT_EQ(logs.size(), 3u) << "older files were deleted";
  for (const auto& f : logs) {
    EXPECT_EQ(f.extension(), ".tlog");
    EXPECT_LE(fs::file_size(f), 1000u + 47u);
  }
  EXPECT_GT(frames_in(logs[0]), 0u);
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
