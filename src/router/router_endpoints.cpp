// The endpoints' lifecycle: added before start, opened (each instance on its own worker,
// listening ones on every worker sharing the port), and opened or closed at run time.
#include <fmt/format.h>
#include <sys/socket.h>

#include <algorithm>
#include <stdexcept>

#include "base/log.hpp"
#include "router/router.hpp"
#include "router/worker.hpp"
#include "transport/socket_util.hpp"

namespace mavswitch {

void Router::add_endpoint(transport::EndpointSpec spec, routing::LinkPolicy policy) {
  specs_.push_back(std::move(spec));
  policies_.push_back(std::make_shared<const routing::LinkPolicy>(std::move(policy)));
  start_errors_.emplace_back();
  closed_.push_back(0);
}

void Router::start(const StartErrorFn& on_error) {
  for (size_t i = 0; i < specs_.size(); ++i) {
    // Opened already (open_endpoint before start: an in-process component).
    if (closed_[i] ||
        std::any_of(instances_.begin(), instances_.end(), [i](const Instance& inst) { return inst.spec_index == i; }))
      continue;
    try {
      start_endpoint(i);
    } catch (const std::runtime_error& e) {
      if (!on_error) throw StartError(i, e.what());
      start_errors_[i] = e.what();
      on_error(StartError(i, e.what()));
    }
  }
}

size_t Router::open_endpoint(transport::EndpointSpec spec, routing::LinkPolicy policy) {
  size_t index = 0;
  run_on_loop([&] {
    index = specs_.size();
    add_endpoint(std::move(spec), std::move(policy));
    try {
      start_endpoint(index);
    } catch (const std::runtime_error& e) {
      closed_[index] = 1;  // kept for the record, as an endpoint that could not open
      start_errors_[index] = e.what();
      throw StartError(index, e.what());
    }
  });
  return index;
}

void Router::close_endpoint(size_t i) {
  run_on_loop([&] {
    if (i >= specs_.size() || closed_[i]) return;
    closed_[i] = 1;
    close_instances(i);
  });
  // Two iterations of every worker: the targets retired with its links, which held its UDP
  // sockets open for writes in flight, are freed, and so is the port. Not from the router's
  // thread (a component closed by its own handler): there they are freed a little later.
  if (!on_loop_thread()) settle();
}

// Its links go down on their own workers (routes through them are forgotten), then the
// instances close there.
void Router::close_instances(size_t endpoint_index) {
  for (auto& inst : instances_) {
    if (inst.spec_index != endpoint_index) continue;
    run_on_worker(inst.worker, [&] {
      workers_[inst.worker]->close(*inst.endpoint);
      inst.endpoint.reset();
    });
  }
  std::erase_if(instances_, [&](const Instance& inst) { return inst.spec_index == endpoint_index; });
}

// Each instance opens on its own worker. All or nothing: when one cannot open, what opened
// of the endpoint (a socket on some of the workers) closes, and the error is thrown.
void Router::open_instances(size_t first) {
  const size_t endpoint_index = instances_[first].spec_index;
  try {
    for (size_t k = first; k < instances_.size(); ++k) {
      Instance& inst = instances_[k];
      if (inst.opened) continue;
      inst.opened = true;
      run_on_worker(inst.worker, [&] {
        workers_[inst.worker]->adopt(*inst.endpoint, policies_[inst.spec_index]);
        inst.endpoint->start();
      });
    }
  } catch (const std::runtime_error&) {
    close_instances(endpoint_index);
    throw;
  }
}

// Listening endpoints get a socket on every worker, sharing the port; the others are dealt
// out to the workers in turn.
void Router::start_endpoint(size_t i) {
  const size_t n = workers_.size();
  transport::EndpointSpec spec = specs_[i];
  const bool shared = n > 1 && transport::listens(spec);
  const size_t first = instances_.size();
  const auto group = shared ? std::make_shared<transport::ListenerGroup>(n) : nullptr;
  auto add = [&](size_t worker) {
    instances_.push_back({i, worker, transport::make_endpoint(spec, *workers_[worker])});
    if (group) instances_.back().endpoint->join_group(group, worker);  // before start()
  };
  if (!shared) {
    add(spec.router_thread ? 0 : next_worker_++ % n);
    open_instances(first);
    return;
  }
  spec.reuse_port = true;
  if (const auto address =
          transport::SocketAddress::numeric(spec.address.empty() ? "0.0.0.0" : spec.address, spec.port)) {
    // Named as the endpoint describes itself, as its own bind would name it with one worker.
    transport::ensure_port_free(*address,
                                spec.kind == transport::EndpointSpec::Kind::kTcpServer ? SOCK_STREAM : SOCK_DGRAM,
                                fmt::format("{} {} {}", transport::kind_name(spec), spec.name, address->to_string()));
  }
  add(0);
  open_instances(first);
  if (spec.port == 0) spec.port = instances_[first].endpoint->local_port();  // any port: the same on every worker
  for (size_t w = 1; w < n; ++w) add(w);
  open_instances(first);
  for (size_t k = first; k < instances_.size(); ++k) {
    Instance& inst = instances_[k];
    run_on_worker(inst.worker, [&] { inst.endpoint->group_complete(); });
  }
  log::info("{}: listening (a socket on each of {} workers)", instances_[first].endpoint->describe(), n);
}

}  // namespace mavswitch
