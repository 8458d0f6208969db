#include "daemon/fabric_link.hpp"

#include <nats/nats.h>

#include <cassert>

#include "base/log.hpp"
#include "daemon/fabric_subjects.hpp"

namespace mavswitch::daemon {

FabricLink::FabricLink(Router& router, const NatsSettings& settings)
    : router_(router), settings_(settings), parser_(router.routing_table()) {}

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
    for (unsigned sys = 0; sys < interest_.size(); ++sys) {
      if (interest_.test(sys)) subscribe(interest_subject(settings_.prefix, static_cast<uint8_t>(sys)));
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
  subscriptions_.push_back(std::move(added));
}

bool FabricLink::delivered_earlier(const Subscription& sub, const char* subject) const {
  for (const size_t i : sub.earlier_intersecting) {
    if (subjects_intersect(subscriptions_[i].pattern, subject)) return true;
  }
  return false;
}

void FabricLink::drain() {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "FabricLink::drain");
  for (const Subscription& sub : subscriptions_) {
    // Only what is there: asking an empty subscription costs libnats an error string.
    int pending = 0;
    if (natsSubscription_GetPending(sub.handle, &pending, nullptr) != NATS_OK) continue;
    for (; pending > 0; --pending) {
      natsMsg* msg = nullptr;
      if (natsSubscription_NextMsg(&msg, sub.handle, 0) != NATS_OK) break;
      if (!delivered_earlier(sub, natsMsg_GetSubject(msg)))
        received(
            {reinterpret_cast<const uint8_t*>(natsMsg_GetData(msg)), static_cast<size_t>(natsMsg_GetDataLength(msg))});
      natsMsg_Destroy(msg);
    }
  }
}

void FabricLink::received(std::span<const uint8_t> message) {
  counters_.bytes_in += message.size();
  if (id_ == routing::kNoLink) return;
  parser_.feed(message, [&](const protocol::FrameView& f) {
    ++counters_.frames_in;
    sequences_.record(f.sysid(), f.compid(), f.seq());
    router_.route_local(id_, f);
  });
}

void FabricLink::deliver(const protocol::FrameView& frame, std::span<const uint8_t> bytes) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "FabricLink::deliver");
  // A frame from a system behind this router: what targets that system is asked for now.
  if (!interest_.test(frame.sysid())) {
    interest_.set(frame.sysid());
    if (connection_ != nullptr) subscribe(interest_subject(settings_.prefix, frame.sysid()));
  }
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
  if (natsConnection_Publish(connection_, subject_.c_str(), bytes.data(), static_cast<int>(bytes.size())) != NATS_OK) {
    ++counters_.dropped_down;
    return;
  }
  ++counters_.frames_out;
  counters_.bytes_out += bytes.size();
}

FabricLink::Report FabricLink::report() const {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "FabricLink::report");
  Report r{counters_, parser_.stats(), sequences_.lost(), 0};
  if (connection_ != nullptr) r.queued_bytes = static_cast<size_t>(std::max(0, natsConnection_Buffered(connection_)));
  return r;
}

}  // namespace mavswitch::daemon
