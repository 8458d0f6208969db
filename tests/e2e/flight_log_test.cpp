// The flight log writer against autopilots played from the protocol: PX4's ULog over UDP and TCP
// (byte for byte; with packets lost, whole messages and a dropout where each gap was, checked by
// PX4's own reader when it is at hand) and ArduPilot's dataflash blocks (lost, repeated and
// reordered: the file equals the input, and exactly the lost blocks were NACKed).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <time.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include "e2e/log_streaming_autopilot.hpp"
#include "e2e/router_fixture.hpp"
#include "logs/flight_log.hpp"
#include "mavswitch/msg/remote_log_data_block.hpp"
#include "support/test_support.hpp"

namespace mavswitch::test {
namespace {

namespace fs = std::filesystem;
constexpr uint8_t kPx4 = 12, kArduPilot = 3;

fs::path ulog_input(const std::string& name) {
  const fs::path shared = shared_dir();
  return shared.empty() ? fs::path() : shared / "captures" / "ulog" / name;
}

// A small ULog reader of our own: the header's magic, then messages whose sizes walk exactly to
// the end of the file. Returns the messages (header excluded) or an error.
struct UlogCheck {
  std::vector<std::vector<uint8_t>> messages;
  size_t dropouts = 0;
  std::string error;
};
UlogCheck check_ulog(const std::vector<uint8_t>& f) {
  UlogCheck c;
  static const uint8_t magic[] = {'U', 'L', 'o', 'g', 0x01, 0x12, 0x35};
  if (f.size() < 16 || !std::equal(std::begin(magic), std::end(magic), f.begin())) {
    c.error = "no ULog header";
    return c;
  }
  size_t at = 16;
  while (at < f.size()) {
    if (at + 3 > f.size()) {
      c.error = "a torn message header at " + std::to_string(at);
      return c;
    }
    const size_t end = at + 3 + static_cast<size_t>(f[at] | f[at + 1] << 8);
    if (end > f.size()) {
      c.error = "a torn message at " + std::to_string(at);
      return c;
    }
    if (f[at + 2] == 'O') ++c.dropouts;
    c.messages.emplace_back(f.begin() + static_cast<std::ptrdiff_t>(at), f.begin() + static_cast<std::ptrdiff_t>(end));
    at = end;
  }
  return c;
}

// PX4's pyulog, where ../shared has it and Debian's python3 has numpy: its count of dropouts.
std::optional<int> pyulog_dropouts(const fs::path& file, std::string* why) {
  const fs::path pyulog = shared_dir().empty() ? fs::path() : shared_dir() / "thirdparty" / "pyulog";
  if (pyulog.empty() || !fs::exists(pyulog / "pyulog" / "core.py")) {
    *why = "../shared/thirdparty/pyulog is not here";
    return std::nullopt;
  }
  std::string out;
  const int rc = run_command("PYTHONPATH=" + pyulog.string() +
                                 " /usr/bin/python3 -c 'import sys; from pyulog import ULog; u = ULog(sys.argv[1]); "
                                 "print(\"dropouts\", len(u.dropouts))' " +
                                 file.string() + " 2>&1",
                             &out);
  const size_t at = out.rfind("dropouts ");
  if (rc != 0 || at == std::string::npos) {
    *why = out;
    return std::nullopt;
  }
  return std::stoi(out.substr(at + 9));
}

// A REMOTE_LOG_DATA_BLOCK of 0xEE bytes to the writer the autopilot streams to, sent by `from`
// as `sysid`/`compid`.
void send_block(Peer& from, const LoggingAutopilot& autopilot, uint8_t sysid, uint8_t compid, uint32_t seqno) {
  msg::RemoteLogDataBlock b;
  b.target_system = autopilot.writer_system();
  b.target_component = autopilot.writer_component();
  b.seqno = seqno;
  b.data.fill(0xEE);
  from.send(frame_of(b, sysid, compid, static_cast<uint8_t>(seqno)));
}

class FlightLogTest : public ::testing::Test {
 protected:
  void start(bool tcp, logs::FlightLogOptions options = {}) {
    options.dir = scratch_ / "logs";
    port_ = tcp ? free_tcp_port() : free_udp_port();
    rt_.router.add_endpoint(tcp ? tcp_server(port_) : udp_server(port_));
    rt_.start();
    if (tcp) {
      link_ = std::make_unique<TcpPeer>(port_);
    } else {
      auto udp = std::make_unique<UdpPeer>();
      udp->connect_to(port_);
      link_ = std::move(udp);
    }
    log_ = std::make_unique<logs::FlightLog>(rt_.router, options);
  }
  logs::FlightLogStats stats() {
    return rt_.on_loop([&] { return log_->stats(); });
  }
  fs::path finish() {  // the writer closes its file
    const fs::path file = rt_.on_loop([&] { return log_->current_file(); });
    log_.reset();
    return file;
  }
  bool wait_written(uint64_t bytes) {
    return wait_until([&] { return stats().bytes_written >= bytes; }, 10'000ms);
  }
  std::vector<fs::path> logs() {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(scratch_ / "logs", ec)) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }

  ScratchDir scratch_{"mavswitch-flightlog"};
  RouterThread rt_;
  uint16_t port_ = 0;
  std::unique_ptr<Peer> link_;
  std::unique_ptr<logs::FlightLog> log_;
};

struct UlogCase {
  const char* file;
  bool tcp;
};

class UlogByteForByte : public FlightLogTest, public ::testing::WithParamInterface<UlogCase> {};

TEST_P(UlogByteForByte, TheFileWrittenEqualsTheAutopilots) {
  const fs::path input = ulog_input(GetParam().file);
  if (input.empty()) GTEST_SKIP() << "../shared/captures/ulog is not here: PX4's ULog files are needed";
  const std::vector<uint8_t> ulog = read_bytes(input);
  start(GetParam().tcp);
  UdpPeer gcs;  // another link on the router (UDP): the log stream is not for it
  LoggingAutopilot px4(*link_, kPx4);
  ASSERT_TRUE(px4.wait_for_request(5000ms)) << "the writer never asked for the log";
  if (!GetParam().tcp) {
    gcs.send_to(port_, heartbeat(255, 190));
    ASSERT_TRUE(wait_until([&] { return rt_.link_count(0) == 2; }));
  }
  const auto cpu = [&] {
    return rt_.on_loop([] {
      timespec t;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
      return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
    });
  };
  const double cpu_before = cpu();
  ASSERT_TRUE(px4.stream_ulog(ulog));
  ASSERT_TRUE(wait_written(ulog.size())) << stats().bytes_written << " of " << ulog.size();
  const double cpu_seconds = cpu() - cpu_before;
  std::cout << "[ result ] " << GetParam().file << (GetParam().tcp ? " over TCP: " : " over UDP: ") << ulog.size()
            << " bytes byte for byte; the router's thread spent "
            << cpu_seconds * 1000 / (static_cast<double>(ulog.size()) / 1e6) << " ms of CPU per MB of log\n";
  const logs::FlightLogStats s = stats();
  rt_.router.settle();
  EXPECT_EQ(gcs.received().count_msgid(266) + gcs.received().count_msgid(267), 0u)
      << "the log stream goes to the writer only";
  const fs::path file = finish();
  EXPECT_EQ(file.extension(), ".ulg");
  EXPECT_TRUE(read_bytes(file) == ulog) << "byte for byte";
  EXPECT_EQ(s.packets_lost, 0u);
  EXPECT_EQ(s.dropouts, 0u);
  struct stat st;
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0222, 0u) << "a finished log is read-only";
}

INSTANTIATE_TEST_SUITE_P(Px4, UlogByteForByte,
                         ::testing::Values(UlogCase{"sample_px4_events.ulg", false},
                                           UlogCase{"sample_px4_events.ulg", true},
                                           UlogCase{"sample_logging_tagged_and_default_params.ulg", false},
                                           UlogCase{"sample_logging_tagged_and_default_params.ulg", true}),
                         [](const auto& p) {
                           return std::string(p.param.file[7] == 'p' ? "Events" : "TaggedParams") +
                                  (p.param.tcp ? "OverTcp" : "OverUdp");
                         });

class UlogLossy : public FlightLogTest, public ::testing::WithParamInterface<double> {};

// Data packets lost on the way (and some sent twice): the file holds only whole messages, each
// one of the autopilot's in its order, with a dropout where each gap was; PX4's reader parses it.
TEST_P(UlogLossy, WholeMessagesAndADropoutWhereEachGapWas) {
  const fs::path input = ulog_input("sample_px4_events.ulg");
  if (input.empty()) GTEST_SKIP() << "../shared/captures/ulog is not here: PX4's ULog files are needed";
  const std::vector<uint8_t> ulog = read_bytes(input);
  start(false);
  LoggingAutopilot px4(*link_, kPx4, {.lose = GetParam(), .repeat = 0.05, .seed = 7});
  ASSERT_TRUE(px4.wait_for_request(5000ms));
  ASSERT_TRUE(px4.stream_ulog(ulog));
  ASSERT_TRUE(wait_until([&] { return stats().packets >= 1; }));
  rt_.router.settle();
  uint64_t before = 0;
  ASSERT_TRUE(wait_until([&] {  // until the writer has taken all that came
    const uint64_t now = stats().bytes_written;
    const bool still = now == before;
    before = now;
    rt_.router.settle();
    return still;
  }));
  const logs::FlightLogStats s = stats();
  const fs::path file = finish();
  const UlogCheck out = check_ulog(read_bytes(file));
  ASSERT_TRUE(out.error.empty()) << out.error;
  EXPECT_EQ(s.packets_lost, px4.packets_lost()) << "every packet lost is counted";
  EXPECT_GT(s.retransmissions, 0u) << "packets sent twice are recognised";
  EXPECT_GT(out.dropouts, 0u);
  EXPECT_EQ(out.dropouts, s.dropouts);
  // Every message written is one of the autopilot's, in order (a subsequence), dropouts aside.
  const auto in_spans = ulog_messages(ulog);
  size_t k = 1;
  size_t kept = 0;
  for (const auto& m : out.messages) {
    if (m[2] == 'O') continue;
    while (k < in_spans.size() &&
           !std::equal(m.begin(), m.end(), ulog.begin() + static_cast<std::ptrdiff_t>(in_spans[k].first),
                       ulog.begin() + static_cast<std::ptrdiff_t>(in_spans[k].second)))
      ++k;
    ASSERT_LT(k, in_spans.size()) << "a message that is not the autopilot's, or out of order";
    ++k;
    ++kept;
  }
  std::cout << "[ result ] " << GetParam() * 100 << "% of data packets lost: " << kept << " of " << in_spans.size() - 1
            << " messages kept, " << out.dropouts << " dropouts written, " << s.packets_lost
            << " packets counted lost\n";
  std::string why;
  if (const auto dropouts = pyulog_dropouts(file, &why)) {
    EXPECT_EQ(static_cast<size_t>(*dropouts), out.dropouts) << "pyulog reads the same dropouts";
  } else {
    std::cout << "[ note ] pyulog not run: " << why << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Px4, UlogLossy, ::testing::Values(0.05, 0.20), [](const auto& p) {
  return std::string(p.param < 0.1 ? "FivePercentLost" : "TwentyPercentLost");
});

// ArduPilot's blocks, lost, repeated and reordered on the way: the file equals the input, and
// exactly the lost blocks were NACKed, each by its own number.
TEST_F(FlightLogTest, DataflashBlocksLostRepeatedAndReorderedMakeTheSameFile) {
  std::vector<uint8_t> input(200 * 1500);
  std::mt19937 rng(3);
  for (auto& b : input) b = static_cast<uint8_t>(rng());
  start(false);
  LoggingAutopilot ardupilot(*link_, kArduPilot, {.lose = 0.05, .repeat = 0.05, .reorder = 0.05, .seed = 11});
  ASSERT_TRUE(ardupilot.wait_for_request(5000ms)) << "the writer never sent START";
  ASSERT_TRUE(ardupilot.stream_dataflash(input, 600ms));
  ASSERT_TRUE(wait_written(input.size() + 0)) << stats().bytes_written;
  const logs::FlightLogStats s = stats();
  const fs::path file = finish();
  EXPECT_EQ(file.extension(), ".bin");
  EXPECT_TRUE(read_bytes(file) == input) << "the same bytes, each block where it belongs";
  const std::set<uint32_t> nacked(ardupilot.nacked_blocks().begin(), ardupilot.nacked_blocks().end());
  EXPECT_FALSE(ardupilot.lost_blocks().empty());
  EXPECT_EQ(nacked, ardupilot.lost_blocks()) << "NACKs name exactly the blocks that never came";
  EXPECT_EQ(s.nacks, ardupilot.nacked_blocks().size());
  EXPECT_EQ(s.packets_lost, 0u);
}

// Another system on the network sends REMOTE_LOG_DATA_BLOCKs of its own for the same positions,
// addressed to the writer, before and while ArduPilot streams: none reaches the file, which equals
// the vehicle's log, and each is counted.
TEST_F(FlightLogTest, OnlyTheLoggedAutopilotWritesItsFlightLog) {
  std::vector<uint8_t> input(200 * 300);
  std::mt19937 rng(7);
  for (auto& b : input) b = static_cast<uint8_t>(rng());
  start(false);
  LoggingAutopilot ardupilot(*link_, kArduPilot);
  ASSERT_TRUE(ardupilot.wait_for_request(5000ms));
  UdpPeer attacker;
  attacker.connect_to(port_);
  auto attack = [&](uint8_t sysid, uint8_t compid, uint32_t first) {
    for (uint32_t seqno = first; seqno < first + 75; ++seqno) send_block(attacker, ardupilot, sysid, compid, seqno);
  };
  attack(66, 155, 0);  // another system's log component
  attack(1, 190, 75);  // the vehicle's system, another component
  ASSERT_TRUE(wait_until([&] { return stats().foreign >= 150; })) << stats().foreign;
  ASSERT_TRUE(ardupilot.stream_dataflash(input, 300ms));
  ASSERT_TRUE(wait_written(input.size()));
  const logs::FlightLogStats s = stats();
  const fs::path file = finish();
  EXPECT_TRUE(read_bytes(file) == input) << "the vehicle's blocks, none of the attacker's";
  EXPECT_EQ(s.foreign, 150u);
}

// A ground station's link sends blocks in the autopilot's own name (1/1): they count only from
// the link the autopilot lives on, so none is written and each is counted as spoofed.
TEST_F(FlightLogTest, BlocksInTheAutopilotsNameFromAnotherLinkAreNotWritten) {
  std::vector<uint8_t> input(200 * 300);
  std::mt19937 rng(9);
  for (auto& b : input) b = static_cast<uint8_t>(rng());
  start(false);
  LoggingAutopilot ardupilot(*link_, kArduPilot);
  ASSERT_TRUE(ardupilot.wait_for_request(5000ms));
  UdpPeer attacker;
  attacker.connect_to(port_);
  for (uint32_t seqno = 0; seqno < 100; ++seqno) send_block(attacker, ardupilot, 1, 1, seqno);
  ASSERT_TRUE(wait_until([&] { return rt_.router.spoofed_answers() >= 100; })) << rt_.router.spoofed_answers();
  ASSERT_TRUE(ardupilot.stream_dataflash(input, 300ms));
  ASSERT_TRUE(wait_written(input.size()));
  const fs::path file = finish();
  EXPECT_TRUE(read_bytes(file) == input) << "the vehicle's blocks, none of the impostor's";
}

// An autopilot whose stream keeps jumping far ahead (or a peer making it look so) makes a new
// file at most once a minute: the second restart within the minute is held back.
TEST_F(FlightLogTest, AStreamThatKeepsJumpingAheadMakesANewFileAtMostOnceAMinute) {
  std::vector<uint8_t> input(200 * 100);
  std::mt19937 rng(11);
  for (auto& b : input) b = static_cast<uint8_t>(rng());
  start(false);
  LoggingAutopilot ardupilot(*link_, kArduPilot);
  // One block 5,000 ahead, from the autopilot's log component itself.
  const auto jump = [&] { send_block(*link_, ardupilot, 1, 155, 5000); };
  ASSERT_TRUE(ardupilot.wait_for_request(5000ms));
  ASSERT_TRUE(ardupilot.stream_dataflash(input, 300ms));
  jump();
  ASSERT_TRUE(wait_until([&] { return stats().restarts == 1; })) << "the first: a new file";
  ASSERT_TRUE(ardupilot.wait_for_request(5000ms));
  ASSERT_TRUE(ardupilot.stream_dataflash(input, 300ms));
  jump();
  ASSERT_TRUE(wait_until([&] { return stats().restarts_held >= 1; })) << stats().restarts;
  EXPECT_EQ(stats().restarts, 1u);
  EXPECT_EQ(logs().size(), 2u);
}

// ArduPilot already streaming (to someone before us, or before a restart of the router): blocks
// that begin far into a log are not taken as its start; the writer asks again (START, and STOP
// then START if it was already streaming) and the file holds the log from its first block.
TEST_F(FlightLogTest, ADataflashStreamBegunMidLogIsStartedAgain) {
  std::vector<uint8_t> input(200 * 600);
  std::mt19937 rng(5);
  for (auto& b : input) b = static_cast<uint8_t>(rng());
  start(false);
  LoggingAutopilot ardupilot(*link_, kArduPilot);
  ASSERT_TRUE(ardupilot.wait_for_request(5000ms));
  ASSERT_TRUE(ardupilot.stream_dataflash(input, 100ms, 400));  // blocks 400 on: the middle of a log
  ASSERT_TRUE(ardupilot.wait_for_request(5000ms)) << "asked again from the start";
  ASSERT_TRUE(ardupilot.stream_dataflash(input, 300ms));
  ASSERT_TRUE(wait_written(input.size()));
  const fs::path file = finish();
  EXPECT_TRUE(read_bytes(file) == input);
  EXPECT_EQ(logs().size(), 1u) << "no file for the blocks from the middle";
}

// MinFreeSpace holds while the flight log grows, not only when a file opens: it pauses before
// the disk is full, the file keeps whole messages.
TEST_F(FlightLogTest, MinFreeSpaceIsCheckedAsTheFlightLogGrows) {
  const fs::path input = ulog_input("sample_px4_events.ulg");
  if (input.empty()) GTEST_SKIP() << "../shared/captures/ulog is not here: PX4's ULog files are needed";
  SmallDisk disk(scratch_ / "logs", "4m");
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): MinFreeSpace is not tested";
  logs::FlightLogOptions o;
  o.min_free_space = 3 << 20;  // of 4 MiB: the 1.5 MB log passes it
  start(false, o);
  LoggingAutopilot px4(*link_, kPx4);
  ASSERT_TRUE(px4.wait_for_request(5000ms));
  ASSERT_TRUE(px4.stream_ulog(read_bytes(input)));
  ASSERT_TRUE(wait_until([&] {
    px4.heartbeat(false);
    return px4.stop_requested();
  })) << "paused: the stream is stopped";
  EXPECT_EQ(stats().write_errors, 0u) << "paused before the disk was full";
  const auto files = logs();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(check_ulog(read_bytes(files[0])).error.empty());
}

// A prefix of a ULog file, cut at a message boundary past `bytes`.
std::vector<uint8_t> ulog_prefix(const std::vector<uint8_t>& ulog, size_t bytes) {
  for (const auto& [begin, end] : ulog_messages(ulog))
    if (end >= bytes) return {ulog.begin(), ulog.begin() + static_cast<std::ptrdiff_t>(end)};
  return ulog;
}

bool read_only(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && (st.st_mode & 0222) == 0;
}

// while-armed: nothing while disarmed; a file from arming; after disarm it ends once the tail
// of the log has come (LOGGING_STOP sent), read-only; no more files until the next arming,
// however many disarmed heartbeats come (mavlink-router's empty files and storm of tiny files
// after disarm do not happen here).
TEST_F(FlightLogTest, WhileArmedMakesOneFilePerArmingAndNoneOtherwise) {
  const fs::path input = ulog_input("sample_px4_events.ulg");
  if (input.empty()) GTEST_SKIP() << "../shared/captures/ulog is not here: PX4's ULog files are needed";
  const std::vector<uint8_t> ulog = ulog_prefix(read_bytes(input), 300'000);
  logs::FlightLogOptions o;
  o.mode = config::LogMode::kWhileArmed;
  start(false, o);
  LoggingAutopilot px4(*link_, kPx4);
  EXPECT_FALSE(px4.wait_for_request(500ms, false)) << "disarmed: the log is not asked for";
  EXPECT_TRUE(logs().empty());
  for (int arming = 0; arming < 2; ++arming) {
    ASSERT_TRUE(px4.wait_for_request(5000ms, true)) << "arming " << arming;
    ASSERT_TRUE(px4.stream_ulog(ulog));
    ASSERT_TRUE(
        wait_until([&] { return stats().bytes_written >= ulog.size() * static_cast<size_t>(arming + 1); }, 10'000ms));
    ASSERT_TRUE(wait_until(
        [&] {
          px4.heartbeat(false);
          return px4.stop_requested();
        },
        6000ms))
        << "the file ends after the disarm's tail";
    for (int k = 0; k < 10; ++k) {
      px4.heartbeat(false);
      pace(50ms);
    }
    const auto files = logs();
    ASSERT_EQ(files.size(), size_t(arming + 1)) << "one file per arming, none after the disarm";
    EXPECT_TRUE(read_only(files.back()));
    EXPECT_TRUE(read_bytes(files.back()) == ulog);
  }
}

// No log data for 5 s while logging: the stream is asked for again, into a new file; the first
// keeps the whole messages it had.
TEST_F(FlightLogTest, ASilentStreamIsStartedAgainInANewFile) {
  const fs::path input = ulog_input("sample_px4_events.ulg");
  if (input.empty()) GTEST_SKIP() << "../shared/captures/ulog is not here: PX4's ULog files are needed";
  const std::vector<uint8_t> ulog = ulog_prefix(read_bytes(input), 100'000);
  start(false);
  LoggingAutopilot px4(*link_, kPx4);
  ASSERT_TRUE(px4.wait_for_request(5000ms));
  ASSERT_TRUE(px4.stream_ulog(ulog));
  ASSERT_TRUE(wait_written(ulog.size()));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(px4.wait_for_request(8000ms)) << "asked again after 5 s of silence";
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 4500ms);
  EXPECT_EQ(stats().restarts, 1u);
  const auto files = logs();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_TRUE(read_only(files[0]));
  EXPECT_TRUE(read_bytes(files[0]) == ulog);
}

// A full disk pauses the flight log with one error: the file keeps whole messages only, the
// router routes on, and logging comes back (a new file) once there is room.
TEST_F(FlightLogTest, AFullDiskPausesTheFlightLogAndTheRouterRoutesOn) {
  const fs::path input = ulog_input("sample_px4_events.ulg");
  if (input.empty()) GTEST_SKIP() << "../shared/captures/ulog is not here: PX4's ULog files are needed";
  SmallDisk disk(scratch_ / "logs", "4m");
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): the full-disk case is not tested";
  const std::vector<uint8_t> ulog = read_bytes(input);
  start(false);
  disk.fill(scratch_ / "logs" / "filler", 400'000);
  LoggingAutopilot px4(*link_, kPx4);
  ASSERT_TRUE(px4.wait_for_request(5000ms));
  ASSERT_TRUE(px4.stream_ulog(ulog));
  ASSERT_TRUE(wait_until([&] { return stats().write_errors == 1; })) << "the disk filled";
  const auto files = logs();
  ASSERT_EQ(files.size(), 2u);  // the filler and the log
  const fs::path log = files[0].extension() == ".ulg" ? files[0] : files[1];
  const UlogCheck c = check_ulog(read_bytes(log));
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_TRUE(read_only(log));
  px4.heartbeat(false);  // the router still routes: the writer hears it
  fs::remove(scratch_ / "logs" / "filler");
  ASSERT_TRUE(px4.wait_for_request(5000ms)) << "logging again once there is room";
  EXPECT_EQ(stats().files, 2u);
}

// A log directory that cannot be used (a file stands where it should be): the writer says so
// once, not at every try, while the vehicle's heartbeats keep asking for a log.
TEST_F(FlightLogTest, AnUnusableLogDirectoryIsOneErrorLine) {
  std::ofstream(scratch_ / "logs") << "a file, not a directory";
  testing::internal::CaptureStderr();
  start(false);
  LoggingAutopilot ardupilot(*link_, kArduPilot);
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) {
    ardupilot.heartbeat(false);
    std::this_thread::sleep_for(100ms);  // paces the heartbeats; waits for nothing
  }
  const std::string said = testing::internal::GetCapturedStderr();
  size_t lines = 0;
  for (size_t at = 0; (at = said.find("error: flight log", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 1u) << said;
  EXPECT_EQ(stats().files, 0u);
}

}  // namespace
}  // namespace mavswitch::test
