// A three-node nats-server cluster on loopback for a test (Debian's nats-server): each node
// with its own client, cluster and monitoring ports and routes to the other two; started in the
// constructor (ready when every node has its two routes), stopped in the destructor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "e2e/daemon_process.hpp"

namespace mavswitch::test {

class NatsCluster {
 public:
  // The program, or empty when it is not installed (the test skips, saying so).
  static std::string server_program();
  // extra: arguments every node gets (e.g. --user, --pass). jetstream_dir: JetStream on, each
  // node storing under a directory of its own there.
  explicit NatsCluster(size_t nodes = 3, std::vector<std::string> extra = {}, const std::string& jetstream_dir = "");
  bool ready() const noexcept { return ready_; }
  std::string url(size_t node) const;  // nats://127.0.0.1:PORT
  void kill(size_t node);              // a node that dies: SIGKILL, no goodbye
  void restart(size_t node);           // a node killed comes back, on its ports (started, not waited for)
  void signal(size_t node, int sig);   // SIGSTOP: a node that hangs; SIGCONT: it goes on
  const std::string& log(size_t node);

 private:
  struct Node {
    uint16_t client, cluster, monitor;
    std::unique_ptr<DaemonProcess> process;
    std::vector<std::string> args;
  };
  std::vector<Node> nodes_;
  bool ready_ = false;
};

}  // namespace mavswitch::test
