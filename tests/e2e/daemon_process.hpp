// Runs mavswitchd as a child process for a test, capturing its output; stopped (and reaped)
// by the destructor at the latest. Every wait is bounded.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace mavswitch::test {

class DaemonProcess {
 public:
  // max_fds: the child's descriptor limit, soft and hard (0: as the test's). Without an --http
  // argument, the daemon gets --http=0 (no HTTP server).
  explicit DaemonProcess(std::vector<std::string> args, unsigned max_fds = 0);
  // Another server a test needs (prometheus): the program at `path`, with exactly `args`.
  struct Program {
    std::string path;
  };
  DaemonProcess(const Program& program, std::vector<std::string> args);
  ~DaemonProcess();

  bool running();
  pid_t pid() const { return pid_; }
  void signal(int sig);
  // Waits for the exit; returns the exit status, or -1 if it did not exit in time (then killed).
  int wait_exit(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  // What it wrote so far.
  const std::string& out();
  const std::string& err();

 private:
  void spawn(const std::string& path, std::vector<std::string> args, unsigned max_fds);
  void drain();
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  std::string out_, err_;
  int status_ = -1;
};

std::string daemon_path();
std::string tool_path();

}  // namespace mavswitch::test
