// One ArduCopter SITL instance (../shared/sitl/start.sh) for the end-to-end tests, stopped by
// its destructor (SIGTERM: it exits within 0.1 s).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "e2e/peers.hpp"
#include "support/test_support.hpp"

namespace mavswitch::test {

class Sitl {
 public:
  Sitl(const std::filesystem::path& start, int instance, const std::filesystem::path& run_dir,
       const std::filesystem::path& defaults) {
    pid_ = fork();
    if (pid_ == 0) {
      setenv("SITL_DEFAULTS", defaults.c_str(), 1);
      const int out = ::open((run_dir.string() + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (out >= 0) {
        dup2(out, 1);
        dup2(out, 2);
      }
      const std::string i = std::to_string(instance);
      execl("/bin/bash", "bash", start.c_str(), i.c_str(), run_dir.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Sitl() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    bool exited = wait_until([&] { return ::waitpid(pid_, &status, WNOHANG) != 0; }, std::chrono::milliseconds(2000));
    if (!exited) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace mavswitch::test
