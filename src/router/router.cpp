#include "router/router.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <stdexcept>

#include "base/log.hpp"
#include "base/no_wait.hpp"
#include "dialect/builtin.hpp"
#include "protocol/signing.hpp"
#include "router/worker.hpp"

namespace mavswitch {
namespace {

// Runs f on the loop's thread and waits until it has run; what it throws is thrown here. A
// loop that stops before it took f up never will: it destroys the job unrun, the job's Dropped
// settles the call as stopped, and Router::Stopped is thrown, so that a thread outside the router
// (an HTTP request, a reload) is not left waiting at shutdown. No timeout, no polling. What f
// throws crosses as plain values and is thrown anew here: an exception object shared by two
// threads is freed by whichever lets go last, through reference counts the sanitizers cannot see.
void post_and_wait(transport::EventLoop& loop, const std::function<void()>& f) {
  no_wait::check("Router::run_on_loop");
  enum class Outcome { kPending, kDone, kStartError, kStopped, kFailed };
  struct Call {
    std::mutex mutex;
    std::condition_variable done;
    Outcome outcome = Outcome::kPending;  // under mutex
    std::string what;                     // under mutex
    size_t endpoint = 0;                  // under mutex: of a StartError

    void settle(Outcome o, std::string w = {}, size_t e = 0) {
      {
        std::lock_guard lock(mutex);
        outcome = o, what = std::move(w), endpoint = e;
      }
      done.notify_all();
    }
  };
  // Shared by every copy of the job and destroyed with the last, on the loop's thread (or the
  // poster's, when the loop had closed): a job destroyed unrun settles its call as stopped.
  struct Dropped {
    std::shared_ptr<Call> call;
    bool ran = false;
    ~Dropped() {
      if (!ran) call->settle(Outcome::kStopped);
    }
  };
  const auto call = std::make_shared<Call>();
  auto dropped = std::make_shared<Dropped>();
  dropped->call = call;
  loop.post([dropped = std::move(dropped), &f] {  // the job holds the only reference
    Call& c = *dropped->call;
    dropped->ran = true;
    try {
      f();
      c.settle(Outcome::kDone);
    } catch (const Router::StartError& e) {
      c.settle(Outcome::kStartError, e.what(), e.endpoint);
    } catch (const Router::Stopped&) {
      c.settle(Outcome::kStopped);
    } catch (const std::exception& e) {
      c.settle(Outcome::kFailed, e.what());
    } catch (...) {
      c.settle(Outcome::kFailed, "an exception that is not a std::exception");
    }
  });
  std::unique_lock lock(call->mutex);
  call->done.wait(lock, [&] { return call->outcome != Outcome::kPending; });
  switch (call->outcome) {
    case Outcome::kStartError: throw Router::StartError(call->endpoint, call->what);
    case Outcome::kStopped: throw Router::Stopped();
    case Outcome::kFailed: throw std::runtime_error(call->what);
    default: return;
  }
}

unsigned workers_wanted(const RouterOptions& options) {
  return options.workers != 0 ? options.workers : std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

Router::Router(RouterOptions options)
    : shared_(options.message_table ? *options.message_table : dialect::builtin::message_table(),
              workers_wanted(options)) {
  shared_.routing.set_route_timeout(options.route_timeout);
  shared_.routing.set_dedup_period(options.dedup_period);
  shared_.routing.set_failover(options.failover);
  shared_.routing.on_switch([this](const std::string& group, routing::LinkId from, routing::LinkId to) {
    log::warning("group {}: traffic to the vehicle moves from {} to {}", group, link_name(from), link_name(to));
  });
  shared_.routing.set_sniffer_sysid(options.sniffer_sysid);
  const unsigned n = workers_wanted(options);
  std::vector<Worker*> all;
  for (unsigned w = 0; w < n; ++w) {
    workers_.push_back(
        std::make_unique<Worker>(shared_, w, w == 0 ? shared_.routing.context(0) : shared_.routing.add_context()));
    all.push_back(workers_.back().get());
  }
  for (auto& w : workers_) w->connect(all);
  for (auto& w : workers_) w->connect_outbound();
  event_loop().every(1000, [this] { shared_.routing.expire(event_loop().now()); });
}

Router::~Router() {
  for (auto& w : workers_) w->stop_and_join();
  instances_.clear();
}

transport::EventLoop& Router::event_loop() { return workers_[0]->loop(); }

bool Router::from_home(const protocol::FrameView& frame) {
  const routing::LinkId source = workers_[0]->source();
  const routing::LinkId home = shared_.routing.routes().home_link(frame.sysid(), frame.compid());
  if (source == home || source == routing::kNoLink) return true;  // kNoLink: not from a link
  const routing::LinkPolicy* a = shared_.routing.find_policy(source);
  const routing::LinkPolicy* b = home != routing::kNoLink ? shared_.routing.find_policy(home) : nullptr;
  if (a != nullptr && b != nullptr && a->group >= 0 && a->group == b->group) return true;
  // relaxed: a count for statistics; nothing else is published through it.
  spoofed_answers_.fetch_add(1, std::memory_order_relaxed);
  const auto name = frame.info() != nullptr ? frame.info()->name : std::string_view("unknown id");
  spoof_lines_.line(log::Level::kWarning,
                    "{} from {}/{} came in on {}, but {}/{} lives on {}: not believed (counted as spoofed)", name,
                    frame.sysid(), frame.compid(), link_name(source), frame.sysid(), frame.compid(),
                    home == routing::kNoLink ? std::string("no link") : link_name(home));
  return false;
}

void Router::run() {
  for (size_t w = 1; w < workers_.size(); ++w) workers_[w]->start_thread();
  // running() promises every worker is in its loop: run_on_worker() relies on it.
  for (size_t w = 1; w < workers_.size(); ++w) workers_[w]->wait_until_running();
  loop_thread_ = std::this_thread::get_id();
  loop_thread_.notify_all();
  workers_[0]->run();
  // Worker 0 stops first, so whatever it waits for on the others still runs.
  for (size_t w = 1; w < workers_.size(); ++w) workers_[w]->stop_and_join();
  has_run_ = true;
  loop_thread_ = std::thread::id{};
}

void Router::stop() { event_loop().stop(); }

void Router::run_on_loop(const std::function<void()>& f) {
#ifdef MAVSWITCH_CHECK_OWNERS
  // Before run(), f would run here while run() may be starting on the thread that built us.
  if (!running() && !has_run_ && std::this_thread::get_id() != built_on_) {
    std::fprintf(stderr, "mavswitch: Router::run_on_loop called from another thread before run()\n");
    std::abort();
  }
#endif
  if (on_loop_thread() || !running()) {
    f();
    return;
  }
  post_and_wait(event_loop(), f);
}

// Only worker 0 and threads outside the router wait for a worker, so no two workers ever wait
// for each other.
void Router::run_on_worker(size_t worker, const std::function<void()>& f) {
  if (worker == 0) {
    run_on_loop(f);
    return;
  }
  Worker& w = *workers_[worker];
  if (!running() || w.thread_id() == std::thread::id{} || w.thread_id() == std::this_thread::get_id()) {
    f();
    return;
  }
  post_and_wait(w.loop(), f);
}

void Router::pin(routing::LinkId link, uint8_t sysid, uint8_t compid) {
  MAVSWITCH_ASSERT_OWNER(event_loop(), "Router::pin");
  shared_.routing.pin(link, sysid, compid, event_loop().now());
}

void Router::restore_signing_clock(uint64_t last) noexcept {
  uint64_t current = shared_.signing_last.load();
  while (current < last && !shared_.signing_last.compare_exchange_weak(current, last)) {
  }
}

uint64_t Shared::next_signing_timestamp() noexcept {
  const uint64_t now = protocol::signing_timestamp_now();
  // relaxed: only the value's growth matters; it publishes nothing.
  uint64_t current = signing_last.load(std::memory_order_relaxed);
  uint64_t next;
  do {
    next = std::max(now, current + 1);
  } while (!signing_last.compare_exchange_weak(current, next, std::memory_order_relaxed));
  return next;
}

void Router::take_rate_requests(RateRequests requests) {
  if (running()) throw std::logic_error("Router::take_rate_requests after run()");
  shared_.rate_requests = std::move(requests);
}

void Router::wish(routing::LinkId id, uint8_t sysid, uint8_t compid, uint32_t msgid, int64_t interval_us) {
  MAVSWITCH_ASSERT_OWNER(event_loop(), "Router::wish");
  // relaxed: set before the link is routable; Routing::add_link publishes it (release).
  const uint32_t owner = shared_.links.at(id).owner.load(std::memory_order_relaxed);
  if (owner >= workers_.size()) return;
  Worker* w = workers_[owner].get();
  if (owner == 0)
    w->wish(id, sysid, compid, msgid, interval_us);
  else
    w->loop().post([w, id, sysid, compid, msgid, interval_us] { w->wish(id, sysid, compid, msgid, interval_us); });
}

void Router::send_to(routing::LinkId id, std::span<const uint8_t> frame) {
  MAVSWITCH_ASSERT_OWNER(event_loop(), "Router::send_to");
  workers_[0]->send_alone(id, protocol::view_checked(shared_.table, frame));
}

std::string Router::endpoint_description(size_t i) {
  std::string text;
  run_on_loop([&] {
    for (const auto& inst : instances_) {
      if (inst.spec_index == i) {
        text = inst.endpoint->describe();
        return;
      }
    }
    text = fmt::format("{} {}", transport::kind_name(specs_[i]), specs_[i].name);
  });
  return text;
}

uint64_t Router::sum_over_instances(size_t i, uint64_t (transport::Endpoint::*count)() const noexcept) {
  uint64_t sum = 0;
  run_on_loop([&] {
    for (const auto& inst : instances_) {
      if (inst.spec_index == i) sum += ((*inst.endpoint).*count)();
    }
  });
  return sum;
}

uint64_t Router::endpoint_refused(size_t i) { return sum_over_instances(i, &transport::Endpoint::refused); }
uint64_t Router::endpoint_refused_no_fd(size_t i) { return sum_over_instances(i, &transport::Endpoint::refused_no_fd); }
uint64_t Router::endpoint_refused_full(size_t i) { return sum_over_instances(i, &transport::Endpoint::refused_full); }

void Router::for_each_link(size_t endpoint_index, const LinkVisitor& f) {
  run_on_loop([&] {
    for (const auto& inst : instances_) {
      if (inst.spec_index != endpoint_index) continue;
      const Worker& w = *workers_[inst.worker];
      run_on_worker(inst.worker, [&] {
        inst.endpoint->for_each_link([&](const transport::Link& l) {
          f({l, w.counters_of(l), w.sequences(l.id), w.radio(l.id), l.queue_storage(),
             l.queued_bytes() + l.paced_bytes(), inst.worker});
        });
      });
    }
  });
}

transport::Endpoint::Totals Router::endpoint_totals(size_t endpoint_index) {
  transport::Endpoint::Totals sum;
  run_on_loop([&] { sum_totals(endpoint_index, sum); });
  return sum;
}

void Router::sum_totals(size_t endpoint_index, transport::Endpoint::Totals& sum) {
  for (const auto& inst : instances_) {
    if (inst.spec_index != endpoint_index) continue;
    const Worker& w = *workers_[inst.worker];
    run_on_worker(inst.worker, [&] {
      const transport::Endpoint::Totals& gone = inst.endpoint->retired();
      sum.counters += gone.counters;
      sum.parser += gone.parser;
      sum.links_closed += gone.links_closed;
      sum.kernel_drops += inst.endpoint->kernel_drops();
      inst.endpoint->for_each_link([&](const transport::Link& l) {
        sum.counters += w.counters_of(l);
        sum.parser += l.parser_stats();
      });
    });
  }
}

// Two rounds: a frame read in the first may be handed to another worker, which writes it in
// the second.
void Router::settle() {
  if (!running()) return;
  for (int round = 0; round < 2; ++round) {
    std::vector<std::promise<void>> ended(workers_.size());
    for (size_t w = 0; w < workers_.size(); ++w) {
      Worker& worker = *workers_[w];
      if (worker.thread_id() == std::this_thread::get_id())
        throw std::logic_error("Router::settle on a worker's thread");
      worker.loop().post([&worker, &done = ended[w]] { worker.at_iteration_end([&done] { done.set_value(); }); });
    }
    for (auto& e : ended) e.get_future().wait();
  }
}

std::vector<size_t> Router::links_by_worker(size_t endpoint_index) {
  std::vector<size_t> counts(workers_.size(), 0);
  for_each_link(endpoint_index, [&](const LinkReport& r) { ++counts[r.worker]; });
  return counts;
}

uint64_t Router::sum_over_workers(uint64_t (Worker::*count)() const noexcept) const {
  uint64_t sum = 0;
  for (const auto& w : workers_) sum += ((*w).*count)();
  return sum;
}

std::vector<uint64_t> Router::worker_busy_us() const {
  std::vector<uint64_t> busy;
  for (const auto& w : workers_) busy.push_back(w->loop().busy_us());
  return busy;
}

uint64_t Router::cross_worker_drops() const { return sum_over_workers(&Worker::handover_drops); }
uint64_t Router::cross_worker_direct() const { return sum_over_workers(&Worker::direct_frames); }
uint64_t Router::input_pauses() const { return sum_over_workers(&Worker::input_pauses); }

}  // namespace mavswitch
