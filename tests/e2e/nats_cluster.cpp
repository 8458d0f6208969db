#include "e2e/nats_cluster.hpp"

#include <csignal>

#include "e2e/http_client.hpp"
#include "e2e/peers.hpp"
#include "support/test_support.hpp"

namespace mavswitch::test {

std::string NatsCluster::server_program() { return found_program("nats-server"); }

NatsCluster::NatsCluster(size_t nodes, std::vector<std::string> extra, const std::string& jetstream_dir) {
  const std::string program = server_program();
  if (program.empty()) return;
  // Every node's three ports at once: ports found one at a time may come back twice.
  const std::vector<uint16_t> ports = free_tcp_ports(3 * nodes);
  for (size_t i = 0; i < nodes; ++i) nodes_.push_back({ports[3 * i], ports[3 * i + 1], ports[3 * i + 2], nullptr, {}});
  for (size_t i = 0; i < nodes; ++i) {
    std::string routes;
    for (size_t j = 0; j < nodes; ++j) {
      if (j != i)
        routes += (routes.empty() ? "" : ",") + std::string("nats://127.0.0.1:") + std::to_string(nodes_[j].cluster);
    }
    std::vector<std::string> args = {"-a", "127.0.0.1",
                                     "-p", std::to_string(nodes_[i].client),
                                     "-n", "node" + std::to_string(i + 1),
                                     "-m", std::to_string(nodes_[i].monitor)};
    // One node stands alone: clustered JetStream would wait for peers that never come.
    if (nodes > 1) {
      args.insert(args.end(), {"--cluster", "nats://127.0.0.1:" + std::to_string(nodes_[i].cluster), "--cluster_name",
                               "mavswitch-test", "--routes", routes});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    if (!jetstream_dir.empty()) {
      args.insert(args.end(), {"-js", "-sd", jetstream_dir + "/node" + std::to_string(i + 1)});
    }
    nodes_[i].args = args;
    nodes_[i].process = std::make_unique<DaemonProcess>(DaemonProcess::Program{program}, args);
  }
  // Ready when each node routes to every other one.
  const std::string want = "\"num_routes\": " + std::to_string(nodes - 1);
  ready_ = wait_until(
      [&] {
        for (const Node& n : nodes_) {
          if (http_request(n.monitor, "GET", "/routez").body.find(want) == std::string::npos) return false;
        }
        return true;
      },
      10000ms);
}

std::string NatsCluster::url(size_t node) const { return "nats://127.0.0.1:" + std::to_string(nodes_.at(node).client); }

void NatsCluster::kill(size_t node) {
  nodes_.at(node).process->signal(SIGKILL);
  nodes_.at(node).process->wait_exit();
}

void NatsCluster::restart(size_t node) {
  Node& n = nodes_.at(node);
  n.process = std::make_unique<DaemonProcess>(DaemonProcess::Program{server_program()}, n.args);
}

void NatsCluster::signal(size_t node, int sig) { nodes_.at(node).process->signal(sig); }

const std::string& NatsCluster::log(size_t node) { return nodes_.at(node).process->err(); }

}  // namespace mavswitch::test
