#include "fabric/fabric_link.hpp"

#include <fmt/format.h>
#include <nats/nats.h>

#include <cassert>
#include <random>

#include "base/log.hpp"
#include "fabric/fabric_subjects.hpp"
#include "transport/event_loop.hpp"

namespace mavswitch::daemon {
namespace {
constexpr int64_t kNeverPublished = INT64_MIN;
constexpr int kPendingMessages = 16384;
constexpr int kPendingBytes = 4 * 1024 * 1024;

// The system of the frame a message starts with; -1 when it does not start with one.
int first_system(std::span<const uint8_t> m) {
  if (m.size() > 5 && m[0] == protocol::kMagicV2) return m[5];
  if (m.size() > 3 && m[0] == protocol::kMagicV1) return m[3];
  return -1;
}
}  // namespace

FabricLink::FabricLink(transport::Endpoint& endpoint, transport::LinkHost& host, const NatsSettings& settings,
                       int64_t route_timeout, std::function<void()> flush_connection)
    : Link(endpoint, host, "nats"),
      settings_(settings),
      // Routes that never age out (RouteTimeout = 0): a system once local stays local.
      local_for_(route_timeout > 0 ? route_timeout : INT64_MAX),
      flush_connection_(std::move(flush_connection)) {
  paced_sequences_ = true;
  published_at_.fill(kNeverPublished);
  std::random_device random;
  const uint64_t random_id = uint64_t{random()} << 32 | random();
  origin_ = fmt::format("{}.origin.{:016x}", settings_.prefix, random_id);
}

FabricLink::~FabricLink() { assert(connection_ == nullptr && "use(nullptr) first"); }

natsConnection* FabricLink::use(natsConnection* connection) {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "FabricLink::use");
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
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "FabricLink::drain");
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
        received_message(
            {reinterpret_cast<const uint8_t*>(natsMsg_GetData(msg)), static_cast<size_t>(natsMsg_GetDataLength(msg))},
            natsMsg_GetReply(msg));
      natsMsg_Destroy(msg);
    }
  }
  return messages;
}

void FabricLink::received_message(std::span<const uint8_t> message, const char* origin) {
  const int system = first_system(message);
  const bool own = origin != nullptr && origin_ == origin;  // its own, back from a node that stalled
  // A system behind this router, back by way of another.
  const bool local = system >= 0 && published_at_[size_t(system)] != kNeverPublished &&
                     host_.loop().now() - published_at_[size_t(system)] < local_for_;
  if (own || local) {
    counters_.bytes_in += message.size();
    ++counters_.looped_in;
    return;
  }
  received_datagram(message);
}

bool FabricLink::enqueue(std::span<const uint8_t> bytes) {
  // A whole frame routing checked already (or a pacer released): its header read again, its
  // CRC not.
  const protocol::FrameView frame = protocol::view_checked(host_.message_table(), bytes);
  // A frame from a system behind this router: what targets that system is asked for now.
  int64_t& published = published_at_[frame.sysid()];
  if (published == kNeverPublished && connection_ != nullptr)
    subscribe(interest_subject(settings_.prefix, frame.sysid()));
  published = host_.loop().now();
  if (connection_ == nullptr) {
    ++counters_.dropped_down;
    return true;
  }
  // A connection that cannot write as fast as frames come fills only its own buffer, up to
  // QueueSize (a full one is written and tried again: Link::send); while reconnecting libnats
  // bounds it (ReconnectBuffer) and refuses the rest.
  const int buffered = natsConnection_Buffered(connection_);
  if (buffered > 0 && static_cast<size_t>(buffered) + bytes.size() > settings_.queue_bytes &&
      natsConnection_Status(connection_) == NATS_CONN_STATUS_CONNECTED)
    return false;
  fabric_subject(subject_, settings_.prefix, frame);
  if (natsConnection_PublishRequest(connection_, subject_.c_str(), origin_.c_str(), bytes.data(),
                                    static_cast<int>(bytes.size())) != NATS_OK) {
    ++counters_.dropped_down;
    return true;
  }
  ++counters_.frames_out;
  counters_.bytes_out += bytes.size();
  return true;
}

void FabricLink::write_soon() {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "FabricLink::write_soon");
  // Not once down: closing its connection writes an unsubscribe or two, and this is going.
  if (!flush_pending && id != kNoId) host_.needs_flush(*this);
}

void FabricLink::flush() {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "FabricLink::flush");
  flush_connection_();
}

void FabricLink::connected() {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "FabricLink::connected");
  host_.link_resumed(*this);
}

size_t FabricLink::queued_bytes() const noexcept {
  return connection_ != nullptr ? static_cast<size_t>(std::max(0, natsConnection_Buffered(connection_))) : 0;
}

}  // namespace mavswitch::daemon
