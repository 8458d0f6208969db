#include "library/transactions.hpp"

#include "router/router.hpp"

namespace mavswitch {

const char* Transactions::name(End end) noexcept {
  switch (end) {
    case End::kDone: return "done";
    case End::kNoAnswer: return "no answer";
    case End::kBusy: return "busy";
    case End::kFull: return "full";
    case End::kGone: return "gone";
  }
  return "?";
}

Transactions::Transactions(Router& router, Component& component) : router_(router), component_(component) {}

Transactions::~Transactions() {
  router_.run_on_loop([&] {
    listening_.clear();
    for (auto& [key, r] : running_) router_.event_loop().cancel(r.timer);
    running_.clear();
  });
}

void Transactions::start(const void* owner, uint8_t system, uint8_t component, std::string kind,
                         std::unique_ptr<Exchange> exchange, std::function<void(End)> done) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "Transactions::run");
  const Inside inside(*this);
  Key key{system, component, std::move(kind)};
  if (running_.contains(key)) return done(End::kBusy);
  if (running_.size() >= kMaxOpen) return done(End::kFull);
  for (const Exchange::Listen& l : exchange->listens()) listen(l);
  Running& r = running_[key];
  r.known = reachable(system, component);
  r.exchange = std::move(exchange);
  r.done = std::move(done);
  r.owner = owner;
  r.exchange->start(component_);
  // What it sent may have been routed at once, and answered, and ended it (an in-process
  // component answers within the same turn of the loop).
  if (running_.contains(key)) arm(key);
}

void Transactions::listen(const Exchange::Listen& l) {
  const std::pair<uint32_t, bool> what{l.message, l.addressed};
  if (listening_.contains(what)) return;
  listening_[what] =
      component_.subscribe(MessageFilter{.message_id = l.message, .addressed_to_me = l.addressed, .from_home = true},
                           [this, addressed = l.addressed](const protocol::FrameView& f) { heard(f, addressed); });
}

void Transactions::heard(const protocol::FrameView& frame, bool addressed) {
  const Inside inside(*this);
  // The transactions with this component, or with its whole system (component 0: any of its
  // components may answer), that listen for this message, this way.
  for (const uint8_t target : {frame.compid(), uint8_t{0}}) {
    for (auto it = running_.lower_bound(Key{frame.sysid(), target, ""});
         it != running_.end() && std::get<0>(it->first) == frame.sysid() && std::get<1>(it->first) == target;) {
      const Key key = it->first;
      ++it;  // `key` may end below
      hear(key, frame, addressed);
    }
    if (frame.compid() == 0) break;
  }
}

void Transactions::hear(const Key& key, const protocol::FrameView& frame, bool addressed) {
  Running& r = running_.at(key);
  bool listens = false;
  for (const Exchange::Listen& l : r.exchange->listens())
    listens = listens || (l.message == frame.msgid() && l.addressed == addressed);
  if (!listens) return;
  switch (r.exchange->heard(frame, component_)) {
    case Exchange::Step::kIgnored: break;
    case Exchange::Step::kProgress:
      if (!running_.contains(key)) break;  // ended meanwhile, as in start
      r.tries = 0;
      arm(key);
      break;
    case Exchange::Step::kDone:
      if (running_.contains(key)) finish(key, End::kDone);
      break;
  }
}

void Transactions::arm(const Key& key) {
  Running& r = running_.at(key);
  router_.event_loop().cancel(r.timer);
  r.timer = router_.event_loop().after(r.exchange->retry_ms(), [this, key] {
    const Inside inside(*this);
    Running& again = running_.at(key);
    again.timer = 0;
    if (again.known && !reachable(std::get<0>(key), std::get<1>(key))) return finish(key, End::kGone);
    if (again.exchange->paused()) return arm(key);
    if (++again.tries >= again.exchange->tries() || !again.exchange->silent(component_))
      return finish(key, End::kNoAnswer);
    if (running_.contains(key)) arm(key);  // (or it ended meanwhile, as in start)
  });
}

bool Transactions::reachable(uint8_t system, uint8_t component) const {
  if (component != 0) return router_.routing().routes().knows(system, component);
  bool any = false;
  router_.routing().routes().for_each_system_link(system, [&](routing::LinkId) { any = true; });
  return any;
}

void Transactions::cancel(uint8_t system, uint8_t component, const std::string& kind) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "Transactions::cancel");
  const auto it = running_.find(Key{system, component, kind});
  if (it == running_.end()) return;
  if (it->second.timer != 0) router_.event_loop().cancel(it->second.timer);
  bury(std::move(it->second));
  running_.erase(it);
}

void Transactions::cancel(const void* owner) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "Transactions::cancel");
  for (auto it = running_.begin(); it != running_.end();) {
    if (it->second.owner != owner) {
      ++it;
      continue;
    }
    if (it->second.timer != 0) router_.event_loop().cancel(it->second.timer);
    bury(std::move(it->second));
    it = running_.erase(it);
  }
}

void Transactions::finish(const Key& key, End end) {
  auto it = running_.find(key);
  if (it == running_.end()) return;  // it ended inside the call that would end it
  Running r = std::move(it->second);
  running_.erase(it);
  if (r.timer != 0) router_.event_loop().cancel(r.timer);
  const Inside inside(*this);  // done() may start or end others
  r.done(end);
  bury(std::move(r));
}

void Transactions::bury(Running r) {
  if (inside_ > 0) ended_.push_back(std::move(r));
}

std::vector<Transactions::Open> Transactions::open() const {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "Transactions::open");
  std::vector<Open> all;
  for (const auto& [key, r] : running_) {
    const auto [done, total] = r.exchange->progress();
    all.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), done, total});
  }
  return all;
}

}  // namespace mavswitch
