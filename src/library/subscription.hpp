// What a subscriber asks for, and the handle that keeps the subscription alive.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

namespace mavswitch {

struct MessageFilter {
  std::optional<uint8_t> source_system = std::nullopt;     // any system
  std::optional<uint8_t> source_component = std::nullopt;  // any component
  std::optional<uint32_t> message_id = std::nullopt;       // every message
  bool addressed_to_me = false;  // only frames whose target is this component (or its system, component 0)
  // Only frames that came in on the link their source lives on (Router::from_home): an answer
  // another link sends in the source's name is counted as spoofed and not delivered.
  bool from_home = false;
};

namespace library_detail {
class ComponentCore;
}

// Dropping (or reset()) unsubscribes. Once that returns, the handler is never called again.
class Subscription {
 public:
  Subscription() = default;
  Subscription(Subscription&& o) noexcept : core_(std::move(o.core_)), id_(o.id_) { o.id_ = 0; }
  Subscription& operator=(Subscription&& o) noexcept {
    if (this != &o) {
      reset();
      core_ = std::move(o.core_);
      id_ = o.id_;
      o.id_ = 0;
    }
    return *this;
  }
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;
  ~Subscription() { reset(); }

  void reset();
  bool active() const noexcept { return id_ != 0 && !core_.expired(); }

 private:
  friend class library_detail::ComponentCore;
  Subscription(std::weak_ptr<library_detail::ComponentCore> core, uint64_t id) : core_(std::move(core)), id_(id) {}
  std::weak_ptr<library_detail::ComponentCore> core_;
  uint64_t id_ = 0;
};

}  // namespace mavswitch
