// The telemetry log: rotation by size, the file-count limit, while-armed files, and trouble on
// the disk (full, the directory gone, MinFreeSpace) that pauses it and resumes it.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "dialect/builtin.hpp"
#include "dialect/typed_message.hpp"
#include "logs/telemetry_log.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/logging_ack.hpp"
#include "mavswitch/msg/logging_data.hpp"
#include "mavswitch/msg/logging_data_acked.hpp"
#include "mavswitch/msg/remote_log_block_status.hpp"
#include "mavswitch/msg/remote_log_data_block.hpp"
#include "protocol/tlog.hpp"
#include "support/frames.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;
namespace fs = std::filesystem;

namespace {

class TelemetryLogTest : public ::testing::Test {
 protected:
  template <class M>
  void write(logs::TelemetryLog& log, const M& m, uint8_t sys = 1) {
    const test::Bytes frame = test::frame_of(m, sys, 1);
    log.write(test::view_of(frame));
  }
  std::vector<fs::path> files() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().extension() == ".tlog") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }
  size_t frames_in(const fs::path& file) { return static_cast<size_t>(read(file).frames); }
  static protocol::ParserStats read(const fs::path& file) {
    const auto bytes = test::read_bytes(file);
    return protocol::read_tlog(dialect::builtin::message_table(), bytes, [](uint64_t, const protocol::FrameView&) {});
  }
  // Every file holds whole records only, and as many as the log says it wrote.
  void expect_whole_records(uint64_t frames_written) {
    uint64_t frames = 0;
    for (const auto& f : files()) {
      const protocol::ParserStats st = read(f);
      EXPECT_EQ(st.bytes_skipped + st.truncated_bytes + st.crc_failures, 0u) << f << ": a torn record";
      frames += st.frames;
    }
    EXPECT_EQ(frames, frames_written);
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
    logs::TelemetryLog log({dir_, 1000, 3, 0, config::LogMode::kAlways, std::nullopt});
    write(log, heartbeat(false));         // the vehicle: logging starts
    for (uint32_t i = 0; i < 200; ++i) {  // 200 x (8 + 39) bytes: about ten files' worth
      msg::Attitude a;
      a.time_boot_ms = i + 1;
      write(log, a);
    }
    log.close();
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
    logs::TelemetryLog log({dir_, 0, 0, 0, config::LogMode::kAlways, std::nullopt});
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
    logs::TelemetryLog log({dir_, 0, 0, 0, config::LogMode::kAlways, std::nullopt});
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
    logs::TelemetryLog log({dir_, 0, 0, 0, config::LogMode::kWhileArmed, std::nullopt});
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
    logs::TelemetryLog log({dir_, 0, 0, 0, config::LogMode::kWhileArmed, uint8_t{7}});
    write(log, heartbeat(true), 1);  // another vehicle arms: not ours
    EXPECT_TRUE(files().empty());
    write(log, heartbeat(true), 7);
  }
  EXPECT_EQ(files().size(), 1u);
}

namespace {

msg::Attitude attitude(uint32_t i) {
  msg::Attitude a;
  a.time_boot_ms = i;
  a.yawspeed = 1;  // a last field not zero: every frame the same length
  return a;
}

}  // namespace

// A full disk: logging pauses with one error, no file holds a torn record, what was not written
// is counted, and logging resumes by itself (in a new file) once space is back.
TEST_F(TelemetryLogTest, AFullDiskPausesWithoutTornRecordsAndResumesWhenSpaceReturns) {
  test::SmallDisk disk(dir_, "4m");
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): the full-disk case is not tested";
  logs::TelemetryLog log({dir_, 0, 0, 0, config::LogMode::kAlways, std::nullopt});
  disk.fill(dir_ / "filler", 100 * 1024);
  write(log, heartbeat(false));
  uint32_t i = 0;
  for (; i < 100'000 && log.stats().frames_lost == 0; ++i) write(log, attitude(i));
  ASSERT_GT(log.stats().frames_lost, 0u) << "the disk never filled";
  EXPECT_TRUE(log.stats().paused);
  log.tick();
  EXPECT_TRUE(log.stats().paused) << "still no space: still paused";
  const uint64_t lost_before = log.stats().frames_lost;
  for (uint32_t k = 0; k < 10; ++k) write(log, attitude(i++));
  EXPECT_EQ(log.stats().frames_lost, lost_before + 10) << "frames while paused are counted";
  expect_whole_records(log.stats().frames_written);

  fs::remove(dir_ / "filler");
  log.tick();
  EXPECT_FALSE(log.stats().paused) << "space came back: logging resumed";
  const uint64_t written_before = log.stats().frames_written;
  for (uint32_t k = 0; k < 10; ++k) write(log, attitude(i++));
  log.close();
  EXPECT_EQ(log.stats().frames_written, written_before + 10);
  EXPECT_EQ(log.stats().pauses, 1u);
  EXPECT_EQ(files().size(), 2u) << "the first file, and the one after the pause";
  expect_whole_records(log.stats().frames_written);
}

// A rotation that cannot create its file (the directory is gone, a file in its place) pauses
// with the reason, and resumes once the directory can be made again.
// The flight log's transfer is in the .ulg or .bin already: the tlog leaves it out (counted)
// unless TelemetryLogFlightLogData asks for it.
TEST_F(TelemetryLogTest, FlightLogTransferIsLeftOutUnlessAskedFor) {
  for (const bool keep : {false, true}) {
    fs::remove_all(dir_);
    {
      logs::TelemetryLog log({dir_, 0, 0, 0, config::LogMode::kAlways, std::nullopt, keep});
      write(log, heartbeat(false));
      write(log, msg::RemoteLogDataBlock{});
      write(log, msg::RemoteLogBlockStatus{});
      write(log, msg::LoggingData{});
      write(log, msg::LoggingDataAcked{});
      write(log, msg::LoggingAck{});
      write(log, msg::Attitude{});
      EXPECT_EQ(log.stats().left_out, keep ? 0u : 5u);
    }
    ASSERT_EQ(files().size(), 1u);
    EXPECT_EQ(frames_in(files()[0]), keep ? 7u : 2u) << (keep ? "kept" : "left out");
  }
}

TEST_F(TelemetryLogTest, ARotationThatCannotCreateItsFileSaysWhyAndResumes) {
  logs::TelemetryLog log({dir_, 500, 0, 0, config::LogMode::kAlways, std::nullopt});
  write(log, heartbeat(false));
  fs::remove_all(dir_);
  std::ofstream(dir_) << "not a directory";
  uint32_t i = 0;
  testing::internal::CaptureStderr();
  for (; i < 40; ++i) write(log, attitude(i));  // past 500 bytes: a rotation, which fails
  EXPECT_TRUE(log.stats().paused);
  EXPECT_GT(log.stats().frames_lost, 0u);
  for (int tick = 0; tick < 5; ++tick) log.tick();  // five seconds of trying again
  EXPECT_TRUE(log.stats().paused) << "the directory still cannot be made";
  const std::string said = testing::internal::GetCapturedStderr();
  size_t lines = 0;
  for (size_t at = 0; (at = said.find("logging paused", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 1u) << "one line, not one a try: " << said;
  fs::remove(dir_);
  log.tick();
  EXPECT_FALSE(log.stats().paused) << "resumed by itself";
  for (uint32_t k = 0; k < 3; ++k) write(log, attitude(i++));
  log.close();
  ASSERT_EQ(files().size(), 1u);
  EXPECT_EQ(frames_in(files()[0]), 3u);
}

// MinFreeSpace holds while writing, not only when a file is opened: a disk that fills under an
// open log pauses it, once the oldest logs are gone and it still does not hold.
TEST_F(TelemetryLogTest, MinFreeSpaceIsCheckedWhileWriting) {
  test::SmallDisk disk(dir_, "4m");
  if (!disk.mounted())
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root): MinFreeSpace while writing is not tested";
  logs::TelemetryLog log({dir_, 0, 0, 1 << 20, config::LogMode::kAlways, std::nullopt});
  write(log, heartbeat(false));
  for (uint32_t i = 0; i < 100; ++i) write(log, attitude(i));
  log.tick();
  EXPECT_FALSE(log.stats().paused);
  disk.fill(dir_ / "filler", 512 * 1024);  // something else fills the disk: under 1 MiB free
  log.tick();
  EXPECT_TRUE(log.stats().paused);
  write(log, attitude(1000));
  EXPECT_EQ(log.stats().frames_lost, 1u);
  EXPECT_EQ(log.stats().frames_written, 101u) << "what was written before stays";
  fs::remove(dir_ / "filler");
  log.tick();
  EXPECT_FALSE(log.stats().paused);
}
