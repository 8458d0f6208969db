// The log directory's rules, shared by telemetry and flight logs: names that count on from the
// highest index of any kind, finished logs read-only, leftovers finished at start, retention
// that deletes finished logs only, lowest index first.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "base/log_files.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;
namespace fs = std::filesystem;

namespace {

bool read_only(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && (st.st_mode & 0222) == 0;
}

}  // namespace

TEST(LogFiles, LeftoversAreFinishedAndRetentionDeletesFinishedLogsOnly) {
  test::ScratchDir dir("mavswitch-logfiles");
  const fs::path crashed = dir.write("00003-2026-12-01_10-00-00.ulg", "a log a crash left writable");
  const fs::path other = dir.write("notes.txt", "not a log");
  log_files::finish_leftovers(dir.path());
  EXPECT_TRUE(read_only(crashed)) << "a crash's leftover is finished at start";
  EXPECT_FALSE(read_only(other)) << "only logs are touched";

  const fs::path a = dir.write("00001-2026-12-01_09-00-00.tlog", "x");
  const fs::path b = dir.write("00002-2026-12-01_09-30-00.bin", "x");
  log_files::finish(a);
  log_files::finish(b);
  const fs::path open = dir.write("00004-2026-12-01_11-00-00.tlog", "being written");  // writable: open
  const fs::path next = log_files::next_name(dir.path(), ".ulg");
  EXPECT_EQ(next.filename().string().substr(0, 6), "00005-");
  EXPECT_EQ(next.extension(), ".ulg");

  // Two logs at most, one about to be opened: the open one counts and stays; the oldest finished go.
  log_files::enforce_retention(dir.path(), log_files::retention_limit(2, true), 0);
  EXPECT_FALSE(fs::exists(a));
  EXPECT_FALSE(fs::exists(b));
  EXPECT_FALSE(fs::exists(crashed));
  EXPECT_TRUE(fs::exists(open)) << "a log being written is never deleted";
  EXPECT_TRUE(fs::exists(other));
}
