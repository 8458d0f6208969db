// The transaction engine: one request to one component (a command, a mission's transfer, ...)
// sent from the router's own component, answered only from the link the component lives on
// (Router::from_home), sent again after a silence, and ended when it is done, when its tries
// are spent, or when the router no longer has a route to the component. At most one transaction
// of a kind per component at once (a second is refused: the caller's 409), and at most
// kMaxOpen in all. Each protocol is an Exchange: what to send and what an answer means; the
// engine owns time, tries and where answers may come from. The router's thread only.
//
// Chose not to build: queueing a second transaction of a kind behind the first (the caller
// asks again), and priorities between kinds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "api/component.hpp"
#include "routing/types.hpp"
#include "transport/event_loop.hpp"

namespace mavswitch::services {

// One protocol's side of a conversation with a component, driven by the engine.
class Exchange {
 public:
  enum class Step { kIgnored, kProgress, kDone };
  // A message it listens for, and whether only frames addressed to the router's component count
  // (false for messages without a target, as PARAM_VALUE and LOG_DATA).
  struct Listen {
    uint32_t message = 0;
    bool addressed = true;
  };
  virtual ~Exchange() = default;
  virtual std::vector<Listen> listens() const = 0;
  // Sends its first request.
  virtual void start(Component& from) = 0;
  // A frame from the component, from its home link: what it means here. kProgress starts the
  // tries again; an exchange may send its next request before returning it.
  virtual Step heard(const protocol::FrameView& frame, Component& from) = 0;
  // The component was silent for retry_ms(): send again (true), or give up at once (false).
  virtual bool silent(Component& from) = 0;
  virtual routing::Millis retry_ms() const { return 1000; }
  virtual int tries() const { return 5; }
  // Waiting on its own reader (a stream with no room): its silences are not the component's,
  // and cost no tries; silent() is called once it goes on.
  virtual bool paused() const { return false; }
  // How far it is (items, bytes): done of total; total 0 when not known yet.
  virtual std::pair<uint64_t, uint64_t> progress() const { return {0, 0}; }
};

class Transactions {
 public:
  static constexpr size_t kMaxOpen = 64;
  enum class End {
    kDone,      // the exchange finished (its own result says how)
    kNoAnswer,  // its tries were spent in silence
    kBusy,      // one of its kind runs for that component already: not started
    kFull,      // kMaxOpen run already: not started
    kGone,      // the router lost its route to the component meanwhile (one it knew at the start)
  };
  static const char* name(End end) noexcept;

  // `component` (the router's own) must outlive this.
  Transactions(Router& router, Component& component);
  ~Transactions();
  Transactions(const Transactions&) = delete;
  Transactions& operator=(const Transactions&) = delete;

  // Runs `exchange` with (system, component); `done` is called once, on the router's thread (at
  // once for kBusy and kFull), with the exchange as it ended.
  template <class E>
  void run(uint8_t system, uint8_t component, std::string kind, std::unique_ptr<E> exchange,
           std::function<void(End, E&)> done) {
    E& e = *exchange;
    start(system, component, std::move(kind), std::move(exchange),
          [&e, done = std::move(done)](End end) { done(end, e); });
  }

  struct Open {
    uint8_t system = 0, component = 0;
    std::string kind;
    uint64_t done = 0, total = 0;
  };
  std::vector<Open> open() const;  // what runs now, with its progress

 private:
  using Key = std::tuple<uint8_t, uint8_t, std::string>;
  struct Running {
    std::unique_ptr<Exchange> exchange;
    std::function<void(End)> done;
    int tries = 0;
    transport::EventLoop::TimerId timer = 0;
    // Only a route that was there can be lost: a component not yet heard of gets every try (it
    // may be joining, and what is sent to it goes where the routing rules send the unknown).
    bool known = false;
  };
  void start(uint8_t system, uint8_t component, std::string kind, std::unique_ptr<Exchange> exchange,
             std::function<void(End)> done);
  void listen(const Exchange::Listen& l);
  void heard(const protocol::FrameView& frame, bool addressed);
  void arm(const Key& key);
  void finish(const Key& key, End end);

  Router& router_;
  Component& component_;
  std::map<Key, Running> running_;
  std::map<std::pair<uint32_t, bool>, Subscription> listening_;  // kept once made: a few messages
};

}  // namespace mavswitch::services
