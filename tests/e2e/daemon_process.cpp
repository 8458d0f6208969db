#include "e2e/daemon_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace mavswitch::test {

std::string daemon_path() { return MAVSWITCHD_PATH; }
std::string tool_path() { return MAVSWITCH_TOOL_PATH; }

DaemonProcess::DaemonProcess(std::vector<std::string> args, unsigned max_fds) {
  // Daemons run side by side here: none takes the default HTTP port unless its test asks.
  const bool http_asked =
      std::any_of(args.begin(), args.end(), [](const std::string& a) { return a.starts_with("--http"); });
  if (!http_asked) args.push_back("--http=0");
  // The daemon runs with as many I/O workers as the router tests (see router_fixture.hpp),
  // unless the test says how many.
  const char* workers = std::getenv("MAVSWITCH_TEST_WORKERS");
  const bool chosen = std::find_if(args.begin(), args.end(),
                                   [](const std::string& a) { return a == "-j" || a == "--workers"; }) != args.end();
  if (workers != nullptr && *workers != '\0' && !chosen) args.insert(args.begin(), {"--workers", workers});
  spawn(daemon_path(), std::move(args), max_fds);
}

DaemonProcess::DaemonProcess(const Program& program, std::vector<std::string> args) {
  spawn(program.path, std::move(args), 0);
}

void DaemonProcess::spawn(const std::string& path, std::vector<std::string> args, unsigned max_fds) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) throw std::runtime_error("pipe");
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (max_fds != 0) {
      const rlimit rl{max_fds, max_fds};
      setrlimit(RLIMIT_NOFILE, &rl);
    }
    std::vector<char*> argv;
    std::string program = path;
    argv.push_back(program.data());
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(path.c_str(), argv.data());
    _exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
  fcntl(out_fd_, F_SETFL, O_NONBLOCK);
  fcntl(err_fd_, F_SETFL, O_NONBLOCK);
}

DaemonProcess::~DaemonProcess() {
  if (running()) {
    signal(SIGKILL);
    wait_exit();
  }
  ::close(out_fd_);
  ::close(err_fd_);
}

void DaemonProcess::drain() {
  char buf[4096];
  for (int fd : {out_fd_, err_fd_}) {
    for (int i = 0; i < 1000; ++i) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      (fd == out_fd_ ? out_ : err_).append(buf, static_cast<size_t>(n));
    }
  }
}

bool DaemonProcess::running() {
  if (pid_ < 0) return false;
  int st;
  const pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    pid_ = -1;
    return false;
  }
  return true;
}

void DaemonProcess::signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

int DaemonProcess::wait_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running() && std::chrono::steady_clock::now() < deadline) {
    drain();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (running()) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    drain();
    return -1;
  }
  drain();
  return status_;
}

const std::string& DaemonProcess::out() {
  drain();
  return out_;
}
const std::string& DaemonProcess::err() {
  drain();
  return err_;
}

}  // namespace mavswitch::test
