// What the benchmark programs share: loopback addresses, free ports, and starting the router
// under test as a child process.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace mavswitch::bench {

inline sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// A port free on 127.0.0.1 right now, for SOCK_DGRAM or SOCK_STREAM.
inline uint16_t free_port(int type) {
  const int fd = socket(AF_INET, type, 0);
  sockaddr_in a = loopback(0);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// Runs argv (looked up on the PATH) with its output discarded, or appended to the file that
// BENCH_ROUTER_LOG names (to read the router's own statistics after a run); returns its pid.
inline pid_t start_quietly(std::vector<std::string> argv) {
  const pid_t pid = fork();
  if (pid == 0) {
    const char* log = std::getenv("BENCH_ROUTER_LOG");
    const int out = log != nullptr ? open(log, O_WRONLY | O_CREAT | O_APPEND, 0644) : open("/dev/null", O_WRONLY);
    dup2(out, 1);
    dup2(out, 2);
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    execvp(c[0], c.data());
    _exit(127);
  }
  return pid;
}

// CPU time of a process, in seconds: the scheduler's run time of each of its threads (in
// nanoseconds, where /proc's utime and stime count 10 ms ticks).
inline double cpu_seconds(pid_t pid) {
  double total = 0;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    std::ifstream schedstat(task.path() / "schedstat");
    double ns = 0;
    if (schedstat >> ns) total += ns / 1e9;
  }
  return total;
}

}  // namespace mavswitch::bench
