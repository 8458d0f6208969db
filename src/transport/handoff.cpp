#include "transport/handoff.hpp"

#include <algorithm>

#include "base/log.hpp"
#include "transport/endpoint_kinds.hpp"
#include "transport/event_loop.hpp"
#include "transport/link.hpp"

namespace mavswitch::transport {

// The worker's side of one peer.
class HandoffLink final : public Link {
 public:
  HandoffLink(Endpoint& endpoint, LinkHost& host, std::shared_ptr<Handoff> handoff,
              std::function<void(HandoffLink&)> gone)
      : Link(endpoint, host, handoff->peer()), handoff_(std::move(handoff)), gone_(std::move(gone)) {}

  Handoff& handoff() const noexcept { return *handoff_; }

  // What the peer sent, all of it.
  void read() {
    MAVSWITCH_ASSERT_OWNER(host_.loop(), "HandoffLink::read");
    handoff_->input_.take(reading_);
    counters_.dropped_queue_full += reading_.dropped;
    received(reading_.bytes, true);
  }
  void peer_gone() {
    MAVSWITCH_ASSERT_OWNER(host_.loop(), "HandoffLink::peer_gone");
    received_end();
    gone_(*this);
  }

  // The batch goes to the serving thread once per loop iteration.
  void flush() override {
    MAVSWITCH_ASSERT_OWNER(host_.loop(), "HandoffLink::flush");
    if (staged_.empty()) return;
    handoff_->output_.put([&](FrameBatch& waiting) {
      if (waiting.empty())
        std::swap(waiting, staged_);  // the storage the serving thread gave back serves the next batch
      else
        waiting.append(staged_);
      // relaxed: sizes for back-pressure and statistics; the frames themselves pass under the lock.
      handoff_->queued_frames_.store(waiting.sizes.size(), std::memory_order_relaxed);
      handoff_->queued_bytes_.store(waiting.bytes.size(), std::memory_order_relaxed);
      return true;
    });
    staged_.clear();
  }
  size_t queued_bytes() const noexcept override {
    // relaxed: sizes for back-pressure and statistics; the frames themselves pass under the mutex.
    return staged_.bytes.size() + handoff_->queued_bytes_.load(std::memory_order_relaxed);
  }
  size_t queue_storage() const noexcept override { return staged_.bytes.capacity(); }

 private:
  bool enqueue(std::span<const uint8_t> frame) override {
    // relaxed: sizes for back-pressure and statistics; the frames themselves pass under the mutex.
    if (staged_.sizes.size() + handoff_->queued_frames_.load(std::memory_order_relaxed) >= handoff_->max_queued_frames_)
      return false;
    staged_.add(frame);
    ++counters_.frames_out;
    counters_.bytes_out += frame.size();
    return true;
  }

  const std::shared_ptr<Handoff> handoff_;
  const std::function<void(HandoffLink&)> gone_;
  FrameBatch staged_;   // queued this iteration, not handed over yet
  InputBytes reading_;  // the input being read
};

// The links of one entrance, on one worker.
class HandoffEndpoint final : public Endpoint {
 public:
  HandoffEndpoint(EndpointSpec spec, LinkHost& host, std::shared_ptr<HandoffEntrance> entrance)
      : Endpoint(std::move(spec), host), entrance_(std::move(entrance)) {}
  ~HandoffEndpoint() override {
    if (!started_) return;
    {
      std::lock_guard lock(entrance_->mutex_);
      entrance_->loop_ = nullptr;
    }
    entrance_->endpoint_ = nullptr;
    for (auto& link : links_) {
      link->handoff().hang_up();
      entrance_->gone();
    }
  }

  void start() override {
    MAVSWITCH_ASSERT_OWNER(host_.loop(), "HandoffEndpoint::start");
    if (entrance_ == nullptr) throw std::runtime_error(describe() + ": nothing serves it");
    started_ = true;
    std::lock_guard lock(entrance_->mutex_);
    entrance_->loop_ = &host_.loop();
    entrance_->endpoint_ = this;
  }

  void for_each_link(const std::function<void(const Link&)>& f) const override {
    for (const auto& l : links_) f(*l);
  }
  uint64_t refused_full() const noexcept override { return entrance_ ? entrance_->refused() : 0; }

  void adopt(const std::shared_ptr<Handoff>& handoff) {
    MAVSWITCH_ASSERT_OWNER(host_.loop(), "HandoffEndpoint::adopt");
    auto link = std::make_unique<HandoffLink>(*this, host_, handoff, [this](HandoffLink& l) { gone(l); });
    handoff->link_ = link.get();
    client_lines_.line(log::Level::kInfo, "{}: client {} connected", describe(), link->peer());
    host_.link_up(*link);
    links_.push_back(std::move(link));
  }

 private:
  void gone(HandoffLink& link) {
    const auto it = std::find_if(links_.begin(), links_.end(), [&](const auto& l) { return l.get() == &link; });
    if (it == links_.end()) return;
    client_lines_.line(log::Level::kInfo, "{}: client {} gone", describe(), link.peer());
    host_.link_down(link);
    link.handoff().link_ = nullptr;
    // Destroyed on a later turn of the loop: we are inside its own call now.
    host_.loop().post([dead = std::shared_ptr<HandoffLink>(std::move(*it))] {});
    links_.erase(it);
    entrance_->gone();
  }

  const std::shared_ptr<HandoffEntrance> entrance_;
  bool started_ = false;  // attached to the entrance
  std::vector<std::unique_ptr<HandoffLink>> links_;
  log::Throttle client_lines_;  // clients come and go as they please: a connect loop floods nothing
};

Handoff::Handoff(std::string peer, size_t max_queued_frames, std::function<void()> wake)
    : peer_(std::move(peer)),
      max_queued_frames_(max_queued_frames),
      wake_(std::move(wake)),
      input_([this] {
        std::lock_guard lock(mutex_);
        post([self = shared_from_this()] {
          if (self->link_ != nullptr) self->link_->read();
        });
      }),
      output_(wake_) {}

// Under the lock, so that the worker's loop is not posted to after the link went down there.
void Handoff::post(std::function<void()> task) {
  if (loop_ != nullptr) loop_->post(std::move(task));
}

void Handoff::put(std::span<const uint8_t> bytes) {
  if (closed()) return;
  input_.put([&](InputBytes& in) {
    if (in.bytes.size() + bytes.size() > kMaxInput)
      ++in.dropped;
    else
      in.bytes.insert(in.bytes.end(), bytes.begin(), bytes.end());
    return true;
  });
}

void Handoff::take(FrameBatch& out) {
  output_.take(out, [&](const FrameBatch&) {
    // relaxed: sizes for back-pressure and statistics; the frames themselves pass under the lock.
    queued_frames_.store(0, std::memory_order_relaxed);
    queued_bytes_.store(0, std::memory_order_relaxed);
  });
}

void Handoff::close() {
  input_.close();
  std::lock_guard lock(mutex_);
  if (closed()) return;
  closed_.store(true, std::memory_order_release);
  post([self = shared_from_this()] {
    if (self->link_ != nullptr) self->link_->peer_gone();
  });
  loop_ = nullptr;
}

void Handoff::hang_up() {
  link_ = nullptr;
  {
    std::lock_guard lock(mutex_);
    closed_.store(true, std::memory_order_release);
    loop_ = nullptr;
  }
  input_.close();
  output_.close();
  // relaxed: sizes for back-pressure and statistics; nothing produces any more.
  queued_frames_.store(0, std::memory_order_relaxed);
  queued_bytes_.store(0, std::memory_order_relaxed);
  wake_();  // the serving thread sees closed() and closes its peer
}

bool HandoffEntrance::has_room() {
  std::lock_guard lock(mutex_);
  // relaxed: read and written under the mutex; outside it only as a count.
  if (loop_ != nullptr && links_.load(std::memory_order_relaxed) < max_links_) return true;
  refused_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

std::shared_ptr<Handoff> HandoffEntrance::open(std::string peer, std::function<void()> wake) {
  std::lock_guard lock(mutex_);
  // relaxed: read and written under the mutex; outside it only as a count.
  if (loop_ == nullptr || links_.load(std::memory_order_relaxed) >= max_links_) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  links_.fetch_add(1, std::memory_order_relaxed);
  auto handoff = std::make_shared<Handoff>(std::move(peer), max_queued_frames_, std::move(wake));
  handoff->loop_ = loop_;
  // Posted before anything the peer sends is: the link is up when its first bytes are read.
  loop_->post([self = shared_from_this(), handoff] {
    if (self->endpoint_ == nullptr || handoff->closed()) {
      self->gone();
      if (!handoff->closed()) handoff->hang_up();
      return;
    }
    self->endpoint_->adopt(handoff);
  });
  return handoff;
}

std::unique_ptr<Endpoint> make_handoff_endpoint(EndpointSpec spec, LinkHost& host,
                                                std::shared_ptr<HandoffEntrance> entrance) {
  return std::make_unique<HandoffEndpoint>(std::move(spec), host, std::move(entrance));
}

}  // namespace mavswitch::transport
