#include "fabric/nats_endpoint.hpp"

#include <fmt/format.h>
#include <nats/nats.h>

#include <algorithm>
#include <vector>

#include "base/blocking_work.hpp"
#include "fabric/nats_poller.hpp"

namespace mavswitch::fabric {
namespace {

class NatsMaker final : public transport::EndpointMaker {
 public:
  NatsMaker(const config::NatsSettings& settings, std::shared_ptr<const routing::SigningPolicy> signing,
            int64_t route_timeout)
      : settings_(settings), signing_(std::move(signing)), route_timeout_(route_timeout) {}
  const char* kind() const noexcept override { return "nats"; }
  // Its endpoint describes itself (the servers without their credentials, the connection's state).
  std::string where(const transport::EndpointSpec&) const override { return {}; }
  std::unique_ptr<transport::Endpoint> make(transport::EndpointSpec spec, transport::LinkHost& host) const override {
    return std::make_unique<NatsEndpoint>(std::move(spec), host, settings_, signing_, route_timeout_);
  }

 private:
  const config::NatsSettings settings_;
  const std::shared_ptr<const routing::SigningPolicy> signing_;
  const int64_t route_timeout_;
};

}  // namespace

std::shared_ptr<const transport::EndpointMaker> nats_maker(const config::NatsSettings& settings,
                                                           std::shared_ptr<const routing::SigningPolicy> signing,
                                                           int64_t route_timeout) {
  return std::make_shared<NatsMaker>(settings, std::move(signing), route_timeout);
}

NatsEndpoint::NatsEndpoint(transport::EndpointSpec spec, transport::LinkHost& host,
                           const config::NatsSettings& settings, std::shared_ptr<const routing::SigningPolicy> signing,
                           int64_t route_timeout)
    : Endpoint(std::move(spec), host),
      settings_(settings),
      signing_(std::move(signing)),
      route_timeout_(route_timeout) {}

NatsEndpoint::~NatsEndpoint() {
  if (!session_) return;  // never started
  natsConnection* made = session_->stop();
  for (const auto timer : {retry_timer_, guard_timer_}) {
    if (timer != 0) host_.loop().cancel(timer);
  }
  std::vector<natsConnection*> going;
  if (link_) {
    if (natsConnection* c = link_->use(nullptr)) going.push_back(c);
  }
  if (made != nullptr) going.push_back(made);
  for (natsConnection* c : going) {
    // What is buffered goes now: left there, closing would wait for the server's answer to a
    // flush that only this thread could read.
    natsConnection_ProcessWriteEvent(c);
    drive_->forget(c);
    natsConnection_Destroy(c);
  }
  drive_->forget_all();
  session_->outlive_callbacks();
}

void NatsEndpoint::start() {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "NatsEndpoint::start");
  auto session = std::make_shared<NatsSession>(spec_.name, settings_, host_.loop());
  // Read and written by this loop, not by threads of libnats' own.
  drive_ = std::make_shared<NatsDrive>(
      host_.loop(), spec_.name, [this] { return link_ ? link_->drain() : 0; },
      [this] {
        if (link_) link_->write_soon();
      });
  session->set_options(
      drive_, [this] { closed(); }, [this] { arm_guard(); });  // throws for bad settings
  session_ = std::move(session);
  // The link first, so what the subscriptions bring has somewhere to go; the connection from a
  // job (a server that does not answer must not hold the worker).
  link_ = std::make_unique<FabricLink>(*this, host_, settings_, signing_, route_timeout_, [this] { drive_->flush(); });
  host_.link_up(*link_);
  connect_in(0);
}

int64_t NatsEndpoint::retry_delay() const {
  // A server that sent an oversized message is tried again later each time (4 s, 8 s, ... 512 s).
  // relaxed: a count read only to space out retries; it orders nothing.
  const int oversized = std::min(drive_->oversized_in_row.load(std::memory_order_relaxed), 8);
  return NatsSession::kRetryMs << oversized;
}

void NatsEndpoint::connect_in(int64_t delay_ms) {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "NatsEndpoint::connect_in");
  if (job_under_way_ || retry_timer_ != 0) return;  // job_done looks again
  retry_timer_ = host_.loop().after(delay_ms, [this] {
    retry_timer_ = 0;
    if (!job_under_way_) give_job(true);
  });
}

void NatsEndpoint::give_job(bool connect) {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "NatsEndpoint::give_job");
  job_under_way_ = true;
  blocking_work::run([session = session_, connect, this] {
    session->job(connect, [this](const NatsSession::Outcome& o) { job_done(o); });
  });
}

void NatsEndpoint::job_done(const NatsSession::Outcome& outcome) {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "NatsEndpoint::job_done");
  job_under_way_ = false;
  session_->take(outcome.made);
  if (outcome.made != nullptr) {
    // The old one (libnats gave it up) goes here, where it may still have been read.
    if (natsConnection* old = link_->use(outcome.made)) {
      drive_->forget(old);
      natsConnection_Destroy(old);
    }
    connection_ = outcome.made;
  }
  // None yet, or libnats gave it up already (a server that sends an oversized message at once is
  // cut before it is handed over): another, later.
  if (connection_ == nullptr || natsConnection_IsClosed(connection_)) {
    connect_in(retry_delay());
  } else if (!outcome.fleet_kept) {
    retry_timer_ = host_.loop().after(NatsSession::kRetryMs, [this] {
      retry_timer_ = 0;
      if (job_under_way_) return;
      give_job(connection_ == nullptr || natsConnection_IsClosed(connection_));
    });
  }
}

void NatsEndpoint::closed() {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "NatsEndpoint::closed");
  if (!job_under_way_ && (connection_ == nullptr || natsConnection_IsClosed(connection_))) connect_in(retry_delay());
}

void NatsEndpoint::arm_guard() {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "NatsEndpoint::arm_guard");
  if (guard_timer_ != 0) return;
  guard_timer_ = host_.loop().after(HandshakeGuard::kLook.count(), [this] {
    guard_timer_ = 0;
    if (session_->guard->look(false)) arm_guard();
  });
}

void NatsEndpoint::for_each_link(const std::function<void(const transport::Link&)>& f) const {
  if (link_) f(*link_);
}

std::string NatsEndpoint::describe() const {
  const std::string at = session_ ? session_->connected_to() : "";
  std::string text =
      fmt::format("nats {} {} prefix {}: {}, {} reconnects", spec_.name, session_ ? session_->url_list() : "",
                  settings_.prefix, at.empty() ? "not connected" : "connected to " + at,
                  // relaxed: a count for statistics; nothing else is published through it.
                  session_ ? session_->reconnects.load(std::memory_order_relaxed) : 0);
  if (!settings_.vehicle.empty()) text += ", vehicle " + settings_.vehicle;
  if (link_ && !settings_.vehicles.empty()) text += ", vehicles " + link_->numbering();
  return text;
}

}  // namespace mavswitch::fabric
