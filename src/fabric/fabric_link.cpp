#include "fabric/fabric_link.hpp"

#include <nats/nats.h>

#include <fmt/format.h>

#include <cassert>
#include <random>

#include "base/log.hpp"
#include "fabric/fabric_subjects.hpp"

namespace mavswitch::daemon {
namespace {
constexpr routing::Millis kNeverPublished = INT64_MIN;
constexpr int kPendingMessages = 16384;
constexpr int kPendingBytes = 4 * 1024 * 1024;
}  // namespace

FabricLink::FabricLink(Router& router, const NatsSettings& settings)
    : router_(router), settings_(settings), parser_(router.routing_table()) {
  published_at_.fill(kNeverPublished);
  std::random_device random;
  const uint64_t id = uint64_t{random()} << 32 | random();
  origin_ = fmt::format("{}.origin.{:016x}", settings_.prefix, id);
}

FabricLink::~FabricLink() {
  assert(id_ == routing::kNoLink && connection_ == nullptr && "detach() and use(nullptr) first");
}

void FabricLink::attach(std::shared_ptr<const routing::LinkPolicy> policy) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "FabricLink::attach");
  id_ = router_.attach_local(*this, std::move(policy));
}

void FabricLink::detach() {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "FabricLink::detach");
  if (id_ != routing::kNoLink) router_.detach_local(id_);
  id_ = routing::kNoLink;
}

natsConnection* FabricLink::use(natsConnection* connection) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "FabricLink::use");
  for (const Subscription& s : subscriptions_) natsSubscription_Destroy(s.handle);
  subscriptions_.clear();
  natsConnection* old = connection_;
  connection_ = connection;
  if (connection_ != nullptr) {
    for (const auto& s : settings_.subscribe) subscribe(settings_.prefix + "." + s);
    for (unsigned sys = 0; sys < published_at_.size(); ++sys) {
      if (published_at_[sys] != kNeverPublished)
        subscribe(interest_subject(settings_.prefix, static_cast<uint8_t>(sys)));
    }
  }
  return old;
}

void FabricLink::subscribe(const std::string& subject) {
  Subscription added{nullptr, subject, {}};
  for (size_t i = 0; i < subscriptions_.size(); ++i) {
    if (subscriptions_[i].pattern == subject) return;
    if (subjects_intersect(subscriptions_[i].pattern, subject)) added.earlier_intersecting.push_back(i);
  }
  // Synchronous subscriptions: libnats queues what a read brings, drain() takes it on this
  // thread. An asynchronous one would hand each message to a thread of libnats' own.
  const natsStatus s = natsConnection_SubscribeSync(&added.handle, connection_, subject.c_str());
  if (s != NATS_OK) {  // the next connection tries again
    log::error("nats: cannot subscribe to {}: {}", subject, natsStatus_GetText(s));
    return;
  }
  // libnats' own bound on what waits in a subscription (drained after every read, so a few
  // messages wait at most).
  natsSubscription_SetPendingLimits(added.handle, kPendingMessages, kPendingBytes);
  subscriptions_.push_back(std::move(added));
}

bool FabricLink::delivered_earlier(const Subscription& sub, const char* subject) const {
  for (const size_t i : sub.earlier_intersecting) {
    if (subjects_intersect(subscriptions_[i].pattern, subject)) return true;
  }
  return false;
}

size_t FabricLink::drain() {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "FabricLink::drain");
  size_t messages = 0;
  for (const Subscription& sub : subscriptions_) {
    // Only what is there: asking an empty subscription costs libnats an error string.
    int pending = 0;
    if (natsSubscription_GetPending(sub.handle, &pending, nullptr) != NATS_OK) continue;
    for (; pending > 0; --pending) {
      natsMsg* msg = nullptr;
      if (natsSubscription_NextMsg(&msg, sub.handle, 0) != NATS_OK) break;
      ++messages;
      if (!delivered_earlier(sub, natsMsg_GetSubject(msg)))
        received(
            {reinterpret_cast<const uint8_t*>(natsMsg_GetData(msg)), static_cast<size_t>(natsMsg_GetDataLength(msg))},
            natsMsg_GetReply(msg));
      natsMsg_Destroy(msg);
    }
  }
  return messages;
}

void FabricLink::received(std::span<const uint8_t> message, const char* origin) {
  counters_.bytes_in += message.size();
  if (id_ == routing::kNoLink) return;
  if (origin != nullptr && origin_ == origin) {  // its own, back from a node that stalled
    ++counters_.looped_in;
    return;
  }
  const routing::Millis now = router_.event_loop().now();
  // Routes that never age out (RouteTimeout = 0): a system once local stays local.
  const routing::Millis timeout = router_.routing().route_timeout();
  const routing::Millis local_for = timeout > 0 ? timeout : INT64_MAX;
  parser_.feed(message, [&](const protocol::FrameView& f) {
    if (published_at_[f.sysid()] != kNeverPublished && now - published_at_[f.sysid()] < local_for) {
      ++counters_.looped_in;  // a system behind this router, back by way of another
      return;
    }
    ++counters_.frames_in;
    sequences_.record_timed(f.sysid(), f.compid(), f.seq(), now);
    router_.route_local(id_, f);
  });
}

void FabricLink::deliver(const protocol::FrameView& frame, std::span<const uint8_t> bytes) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "FabricLink::deliver");
  // A frame from a system behind this router: what targets that system is asked for now.
  routing::Millis& published = published_at_[frame.sysid()];
  if (published == kNeverPublished && connection_ != nullptr)
    subscribe(interest_subject(settings_.prefix, frame.sysid()));
  published = router_.event_loop().now();
  if (connection_ == nullptr) {
    ++counters_.dropped_down;
    return;
  }
  // A connection that cannot write as fast as frames come fills only its own buffer, up to
  // QueueSize; while reconnecting libnats bounds it (ReconnectBuffer) and refuses the rest.
  const int buffered = natsConnection_Buffered(connection_);
  if (buffered > 0 && static_cast<size_t>(buffered) + bytes.size() > settings_.queue_bytes &&
      natsConnection_Status(connection_) == NATS_CONN_STATUS_CONNECTED) {
    ++counters_.dropped_queue_full;
    return;
  }
  fabric_subject(subject_, settings_.prefix, frame);
  if (natsConnection_PublishRequest(connection_, subject_.c_str(), origin_.c_str(), bytes.data(),
                                    static_cast<int>(bytes.size())) != NATS_OK) {
    ++counters_.dropped_down;
    return;
  }
  ++counters_.frames_out;
  counters_.bytes_out += bytes.size();
}

void FabricLink::connected() {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "FabricLink::connected");
  sequences_.outage_ended();
}

FabricLink::Report FabricLink::report() const {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "FabricLink::report");
  Report r{counters_, parser_.stats(), sequences_.lost(), 0};
  if (connection_ != nullptr) r.queued_bytes = static_cast<size_t>(std::max(0, natsConnection_Buffered(connection_)));
  return r;
}

}  // namespace mavswitch::daemon
