#include "fabric/fabric_link.hpp"

#include <fmt/format.h>
#include <nats/nats.h>

#include <cassert>
#include <charconv>
#include <chrono>
#include <optional>
#include <random>

#include "base/log.hpp"
#include "fabric/fabric_subjects.hpp"
#include "fabric/fleet_state.hpp"
#include "fabric/origins.hpp"
#include "protocol/parser.hpp"
#include "transport/event_loop.hpp"

namespace mavswitch::fabric {
namespace {
constexpr int kPendingMessages = 16384;
constexpr int kPendingBytes = 4 * 1024 * 1024;

// The system of the frame a message starts with; -1 when it does not start with one.
int first_system(std::span<const uint8_t> m) {
  if (m.size() > 5 && m[0] == protocol::kMagicV2) return m[5];
  if (m.size() > 3 && m[0] == protocol::kMagicV1) return m[3];
  return -1;
}

}  // namespace

FabricLink::FabricLink(transport::Endpoint& endpoint, transport::LinkHost& host, const config::NatsSettings& settings,
                       std::shared_ptr<const routing::SigningPolicy> signing, int64_t route_timeout,
                       std::function<void()> flush_connection)
    : Link(endpoint, host, "nats"),
      settings_(settings),
      signing_(std::move(signing)),
      root_(settings.vehicle.empty() ? settings.prefix : settings.prefix + "." + settings.vehicle),
      // Routes that never age out (RouteTimeout = 0): a system once local stays local.
      local_for_(route_timeout > 0 ? route_timeout : INT64_MAX),
      flush_connection_(std::move(flush_connection)) {
  path_ = Path::kFabric;
  published_at_.fill(kNeverPublished);
  std::random_device random;
  const uint64_t random_id = uint64_t{random()} << 32 | random();
  // When it began (wall clock ms) and a random id: of two routers sending as one vehicle, the
  // later one yields (rival_heard), whichever hears the other first.
  const auto began =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  origin_ = fmt::format("{}.origin.{:x}-{:016x}", settings_.prefix, began, random_id);
  if (!settings_.vehicle.empty()) own_from_ = root_ + ".from.";
  own_named_ = settings_.vehicle.empty();  // nothing to name
  if (!settings_.vehicles.empty()) {
    vehicles_ = std::make_unique<VehicleMap>(settings_.prefix, settings_.vehicles);
    numbering_ = vehicles_->summary();
  }
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
    // Who else sends as this router's vehicle: their heartbeats on its own name's subjects.
    if (!own_from_.empty()) subscribe(own_from_ + "*.*.HEARTBEAT");
    if (vehicles_) {
      for (const auto& v : vehicles_->vehicles()) subscribe(v.root + ".from.>");
      // A pattern's vehicles are found by their heartbeats (NATS' wildcards are whole tokens).
      if (vehicles_->has_patterns()) subscribe(settings_.prefix + ".*.from.*.*.HEARTBEAT");
    }
    for (unsigned sys = 0; sys < published_at_.size(); ++sys) {
      if (published(static_cast<uint8_t>(sys))) subscribe_interest(static_cast<uint8_t>(sys));
    }
  }
  return old;
}

void FabricLink::subscribe_interest(uint8_t system) {
  subscribe(interest_subject(root_, system));
  if (vehicles_) {
    for (const auto& v : vehicles_->vehicles()) subscribe(interest_subject(v.root, system));
  }
}

void FabricLink::subscribe_vehicle(const VehicleMap::Vehicle& v) {
  subscribe(v.root + ".from.>");
  for (unsigned sys = 0; sys < published_at_.size(); ++sys) {
    if (published(static_cast<uint8_t>(sys))) subscribe(interest_subject(v.root, static_cast<uint8_t>(sys)));
  }
}

void FabricLink::taken(const VehicleMap::Vehicle& v) {
  {
    const std::lock_guard lock(numbering_mutex_);
    numbering_ = vehicles_->summary();
  }
  if (connection_ != nullptr) subscribe_vehicle(v);  // else the next connection's use() does
}

std::string FabricLink::numbering() const {
  const std::lock_guard lock(numbering_mutex_);
  return numbering_;
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
  // By index: what a message brings may subscribe to more (a vehicle taken, a system heard),
  // which moves the vector; those are drained in this pass too.
  for (size_t i = 0; i < subscriptions_.size(); ++i) {
    natsSubscription* const handle = subscriptions_[i].handle;
    // Only what is there: asking an empty subscription costs libnats an error string.
    int pending = 0;
    if (natsSubscription_GetPending(handle, &pending, nullptr) != NATS_OK) continue;
    for (; pending > 0; --pending) {
      natsMsg* msg = nullptr;
      if (natsSubscription_NextMsg(&msg, handle, 0) != NATS_OK) break;
      ++messages;
      const char* subject = natsMsg_GetSubject(msg);
      if (!delivered_earlier(subscriptions_[i], subject))
        received_message(
            {reinterpret_cast<const uint8_t*>(natsMsg_GetData(msg)), static_cast<size_t>(natsMsg_GetDataLength(msg))},
            subject, natsMsg_GetReply(msg), subscriptions_[i].pattern.ends_with(".from.>"));
      natsMsg_Destroy(msg);
    }
  }
  return messages;
}

void FabricLink::received_message(std::span<const uint8_t> message, const char* subject, const char* reply,
                                  bool complete) {
  const OriginParts parts = origin_parts(reply != nullptr ? reply : "");
  const std::string_view origin = parts.id;
  if (origin == origin_) {  // its own, back from a node that stalled
    counters_.bytes_in += message.size();
    ++counters_.looped_in;
    return;
  }
  if (parts.count != 0 && !in_order(origin, parts.count, complete)) {
    counters_.bytes_in += message.size();
    ++counters_.stale;
    return;
  }
  if (!own_from_.empty() && std::string_view(subject).starts_with(own_from_)) {
    counters_.bytes_in += message.size();  // another router's frames in this router's name: never routed
    ++counters_.unmapped;
    rival_heard(origin);
    return;
  }
  if (yielding()) {  // what comes for the vehicle another router holds: not this one's to take
    counters_.bytes_in += message.size();
    ++counters_.unmapped;
    return;
  }
  if (vehicles_) {
    if (const std::string_view name = fabric::subject_vehicle(subject, settings_.prefix); !name.empty()) {
      const size_t size = message.size();
      message = from_vehicle(message, name, origin);
      if (message.empty()) {
        counters_.bytes_in += size;
        ++counters_.unmapped;
        return;
      }
    } else if (const int unnamed = first_system(message); unnamed >= 0) {
      heard_unnamed_[size_t(unnamed)] = true;
    }
  }
  // A system behind this router, back by way of another.
  const int system = first_system(message);
  if (system >= 0 && published(uint8_t(system)) && host_.loop().now() - published_at_[size_t(system)] < local_for_) {
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
  int64_t& published_at = published_at_[frame.sysid()];
  if (published_at == kNeverPublished && connection_ != nullptr) subscribe_interest(frame.sysid());
  published_at = host_.loop().now();
  // The vehicle this router serves: its autopilot's system is named for everyone here.
  constexpr size_t kAutopilot = 5;  // HEARTBEAT's autopilot byte; 8: MAV_AUTOPILOT_INVALID
  if (!own_named_ && frame.msgid() == 0 && frame.payload_byte(kAutopilot) != 8) [[unlikely]] {
    name_system(frame.sysid(), settings_.vehicle);
    own_named_ = true;
  }
  if (connection_ == nullptr) {
    ++counters_.dropped_down;
    return true;
  }
  if (yielding()) {
    ++counters_.unmapped;
    return true;
  }
  // A connection that cannot write as fast as frames come fills only its own buffer, up to
  // QueueSize (a full one is written and tried again: Link::send); while reconnecting libnats
  // bounds it (ReconnectBuffer) and refuses the rest.
  const int buffered = natsConnection_Buffered(connection_);
  if (buffered > 0 && static_cast<size_t>(buffered) + bytes.size() > settings_.queue_bytes &&
      natsConnection_Status(connection_) == NATS_CONN_STATUS_CONNECTED)
    return false;
  if (vehicles_ && frame.info() != nullptr) {
    if (VehicleMap::Vehicle* v = vehicles_->by_system(frame.payload_byte(frame.info()->target_system_offset)))
      return publish_to_vehicle(frame, *v);
  }
  fabric_subject(subject_, root_, frame);
  // Its from-subjects' messages are counted (origin.N): a ground router that takes them all
  // counts what never came and drops what comes after a newer one.
  return publish(subject_.c_str(), bytes, std::string_view(subject_).substr(root_.size()).starts_with(".from."));
}

bool FabricLink::in_order(std::string_view origin, uint64_t count, bool complete) {
  auto it = counts_.find(origin);
  if (it == counts_.end()) {
    if (counts_.size() >= kMaxOrigins) return true;  // not tracked
    it = counts_.emplace(std::string(origin), Count{}).first;
  }
  Count& c = it->second;
  if (c.last != 0 && count <= c.last) return false;
  if (c.complete && c.last != 0 && count > c.last + 1) counters_.fabric_lost += count - c.last - 1;
  c.last = count;
  c.complete = c.complete || complete;
  return true;
}

bool FabricLink::publish(const char* subject, std::span<const uint8_t> bytes, bool counted) {
  const char* reply = origin_.c_str();
  if (counted) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, ++published_from_).ptr;
    reply_.assign(origin_).append(1, '.').append(digits, end);
    reply = reply_.c_str();
  }
  if (natsConnection_PublishRequest(connection_, subject, reply, bytes.data(), static_cast<int>(bytes.size())) !=
      NATS_OK) {
    published_from_ -= counted;  // never sent: counted here (link_down), not lost on the way
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

size_t FabricLink::queued_bytes() const noexcept {
  return connection_ != nullptr ? static_cast<size_t>(std::max(0, natsConnection_Buffered(connection_))) : 0;
}

}  // namespace mavswitch::fabric
