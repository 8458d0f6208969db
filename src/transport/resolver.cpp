#include "transport/resolver.hpp"

#include <netdb.h>

#include <mutex>

#include "base/blocking_work.hpp"

namespace mavswitch::transport {

struct Resolver::Shared {
  std::mutex mutex;
  EventLoop* loop;  // null once the Resolver is gone
};

Resolver::Resolver(EventLoop& loop) : shared_(std::make_shared<Shared>()) { shared_->loop = &loop; }

Resolver::~Resolver() {
  std::lock_guard lock(shared_->mutex);
  shared_->loop = nullptr;
}

void Resolver::resolve(const std::string& host, uint16_t port, int socktype, Callback callback) {
  if (auto numeric = SocketAddress::numeric(host, port)) {
    shared_->loop->post([cb = std::move(callback), a = *numeric] { cb({a}, {}); });
    return;
  }
  blocking_work::run([shared = shared_, host, port, socktype, cb = std::move(callback)]() mutable {
    MAVSWITCH_ASSERT_BLOCKING_WORK("a host name lookup");
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = socktype;
    addrinfo* result = nullptr;
    const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &result);
    std::vector<SocketAddress> addresses;
    std::string error;
    if (rc != 0) {
      error = host + ": " + gai_strerror(rc);
    } else {
      for (addrinfo* ai = result; ai != nullptr; ai = ai->ai_next) addresses.emplace_back(ai->ai_addr, ai->ai_addrlen);
      freeaddrinfo(result);
    }
    std::lock_guard lock(shared->mutex);
    if (shared->loop) shared->loop->post([cb = std::move(cb), addresses, error] { cb(addresses, error); });
  });
}

}  // namespace mavswitch::transport
