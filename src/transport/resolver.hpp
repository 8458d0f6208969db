// Name resolution that never blocks the event loop: numeric addresses resolve at once; host
// names are looked up on the blocking-work thread (base/blocking_work), whose answer is posted
// back to the loop.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/event_loop.hpp"
#include "transport/socket_address.hpp"

namespace mavswitch::transport {

class Resolver {
 public:
  using Callback = std::function<void(std::vector<SocketAddress> addresses, std::string error)>;

  explicit Resolver(EventLoop& loop);
  ~Resolver();  // pending answers are dropped; their lookups finish on their own

  // Calls back on the loop's thread (never from inside this call).
  void resolve(const std::string& host, uint16_t port, int socktype, Callback callback);

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
};

}  // namespace mavswitch::transport
