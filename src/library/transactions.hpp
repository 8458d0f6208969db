// The transaction engine: one request to one component (a command, a mission's transfer, ...)
// sent from the router's own component, answered only from the link the component lives on
// (Router::from_home), sent again after a silence, and ended when it is done, when its tries
// are spent, or when the router no longer has a route to the component. At most one transaction
// of a kind per component at once (a second is refused: the caller's 409), and at most
// kMaxOpen in all. Each protocol is an Exchange: what to send and what an answer means; the
// engine owns time, tries and where answers may come from. The router's thread only. Each
// Component owns one (Component::transactions()); a C++ program runs its own exchanges on it.
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

#include "library/component.hpp"
#include "routing/types.hpp"
#include "transport/event_loop.hpp"

namespace mavswitch {

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
  // tries again, so it is for something new only (bytes, an item, an entry not had before):
  // what a component says again is kIgnored, or it could keep the exchange open for ever. An
  // exchange may send its next request before returning.
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

// An exchange whose every try sends the same request again.
class RepeatedRequest : public Exchange {
 public:
  void start(Component& from) override { send(from); }
  bool silent(Component& from) override {
    send(from);
    return true;
  }

 protected:
  virtual void send(Component& from) = 0;
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

  // Each Component has one (Component::transactions()); `component` must outlive this.
  Transactions(Router& router, Component& component);
  ~Transactions();
  Transactions(const Transactions&) = delete;
  Transactions& operator=(const Transactions&) = delete;

  // Runs `exchange` with (system, component); `done` is called once, on the router's thread (at
  // once for kBusy and kFull), with the exchange as it ended. `owner` (the caller) cancels what
  // it started before it goes: cancel(owner).
  template <class E>
  void run(const void* owner, uint8_t system, uint8_t component, std::string kind, std::unique_ptr<E> exchange,
           std::function<void(End, E&)> done) {
    E& e = *exchange;
    start(owner, system, component, std::move(kind), std::move(exchange),
          [&e, done = std::move(done)](End end) { done(end, e); });
  }

  // Ends that transaction, if it runs, without an answer: its `done` is not called (its owner
  // is going, or asks something newer instead). Router thread.
  void cancel(uint8_t system, uint8_t component, const std::string& kind);
  // Ends every transaction `owner` started, the same way.
  void cancel(const void* owner);

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
    const void* owner = nullptr;
    int tries = 0;
    transport::EventLoop::TimerId timer = 0;
    // Only a route that was there can be lost: a component not yet heard of gets every try (it
    // may be joining, and what is sent to it goes where the routing rules send the unknown).
    bool known = false;
  };
  void start(const void* owner, uint8_t system, uint8_t component, std::string kind, std::unique_ptr<Exchange> exchange,
             std::function<void(End)> done);
  void listen(const Exchange::Listen& l);
  void heard(const protocol::FrameView& frame, bool addressed);
  void hear(const Key& key, const protocol::FrameView& frame, bool addressed);
  // A route to it: the component heard, or for component 0 any component of the system.
  bool reachable(uint8_t system, uint8_t component) const;
  void arm(const Key& key);
  void finish(const Key& key, End end);

  // An exchange may end while one of its own calls is on the stack (what it sent was answered
  // at once, by a component in this process): it is kept in ended_ until the engine's outermost
  // call returns, never destroyed under itself.
  struct Inside {
    explicit Inside(Transactions& t) : t_(t) { ++t_.inside_; }
    ~Inside() {
      if (--t_.inside_ == 0) t_.ended_.clear();
    }
    Inside(const Inside&) = delete;
    Inside& operator=(const Inside&) = delete;
    Transactions& t_;
  };
  void bury(Running r);  // destroyed now, or once the outermost call returns

  Router& router_;
  Component& component_;
  std::map<Key, Running> running_;
  int inside_ = 0;
  std::vector<Running> ended_;
  std::map<std::pair<uint32_t, bool>, Subscription> listening_;  // kept once made: a few messages
};

}  // namespace mavswitch
