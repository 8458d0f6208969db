// FabricLink's part in fleet identity (fabric/README.md): a named vehicle's frames renumbered on
// their way in and out, and a vehicle name this router yields while another router holds it.
#include <nats/nats.h>

#include "base/log.hpp"
#include "fabric/fabric_link.hpp"
#include "fabric/fabric_subjects.hpp"
#include "fabric/origins.hpp"
#include "protocol/frame_edit.hpp"
#include "protocol/parser.hpp"
#include "protocol/signing.hpp"
#include "transport/event_loop.hpp"

namespace mavswitch::fabric {
namespace {
constexpr uint8_t kMavTypeGcs = 6;       // HEARTBEAT.type of a ground station
constexpr int kHeartbeatTypeOffset = 4;  // HEARTBEAT: custom_mode (4 bytes), then type
size_t sysid_offset(std::span<const uint8_t> frame) { return frame[0] == protocol::kMagicV2 ? 5 : 3; }
}  // namespace

std::span<const uint8_t> FabricLink::from_vehicle(std::span<const uint8_t> message, std::string_view name,
                                                  std::string_view origin) {
  bool numbered = false;
  const int64_t now = host_.loop().now();
  // An id is in use here when a system behind this router has it, or one the fabric brought
  // without a vehicle name.
  VehicleMap::Vehicle* v = vehicles_->find(
      name, [this](uint8_t s) { return published(s) || heard_unnamed_[s]; }, &numbered, now,
      settings_.vehicle_timeout_ms);
  if (v == nullptr || v->refused) return {};
  if (numbered) taken(*v);
  if (!vehicles_->hold(*v, origin, now, settings_.vehicle_timeout_ms)) return {};  // another router holds the name
  // Its header read, its length checked; its CRC is the parser's, after renumbering (which keeps
  // a wrong checksum wrong).
  const size_t length = protocol::frame_length(message.data(), message.size());
  if (length == 0 || length > message.size()) return {};
  const protocol::FrameView frame = protocol::view_checked(host_.message_table(), message.first(length));
  // The vehicle is the system of its first HEARTBEAT that is not a ground station's: a laptop
  // beside it, or its other systems, are not renumbered onto it.
  if (v->own < 0 && frame.msgid() == 0 && frame.payload_byte(kHeartbeatTypeOffset) != kMavTypeGcs) {
    v->own = frame.sysid();
    heard_lines_.line_at(now, log::Level::kInfo, "nats: vehicle {} (system {} there) heard: system {} here", v->name,
                         v->own, v->system);
  }
  if (frame.sysid() != v->own) return {};
  if (frame.is_signed()) {
    if (signing_ == nullptr) {
      log::error(
          "nats: vehicle {} signs its frames and this [NatsEndpoint] has no SigningKeyFile to sign them again "
          "once renumbered: vehicle {} is not taken (give the endpoint the fleet's key)",
          v->name, v->name);
      v->refused = true;
      return {};
    }
    if (!protocol::signature_valid(signing_->key, frame)) {  // never vouched for
      if (!v->bad_key_said) {
        log::error("nats: vehicle {} signs with another key than this [NatsEndpoint]'s: its frames are dropped",
                   v->name);
        v->bad_key_said = true;
      }
      return {};
    }
  }
  const std::span<uint8_t> edited(edited_.data(), frame.size());
  std::copy(frame.bytes().begin(), frame.bytes().end(), edited.begin());
  protocol::set_frame_byte(edited, sysid_offset(edited), v->system);
  return frame.is_signed() ? sign_again(edited) : edited;
}

std::span<const uint8_t> FabricLink::sign_again(std::span<uint8_t> edited) {
  const protocol::FrameView frame = protocol::view_checked(host_.message_table(), edited);
  const size_t n = protocol::sign_frame(frame, signing_->key, protocol::signature_link_id(frame),
                                        protocol::signature_timestamp(frame), signed_);
  return {signed_.data(), n};
}

bool FabricLink::publish_to_vehicle(const protocol::FrameView& frame, VehicleMap::Vehicle& v) {
  if (v.own < 0 || v.refused || (frame.is_signed() && signing_ == nullptr)) {
    ++counters_.unmapped;
    return true;
  }
  const std::span<uint8_t> edited(edited_.data(), frame.size());
  std::copy(frame.bytes().begin(), frame.bytes().end(), edited.begin());
  protocol::set_frame_byte(edited, frame.header_len() + size_t(frame.info()->target_system_offset),
                           static_cast<uint8_t>(v.own));
  const std::span<const uint8_t> bytes = frame.is_signed() ? sign_again(edited) : edited;
  fabric_subject(subject_, v.root, protocol::view_checked(host_.message_table(), bytes));
  return publish(subject_.c_str(), bytes);
}

void FabricLink::rival_heard(std::string_view origin) {
  if (origin.empty()) return;  // no reply subject: not a router's (its frames are dropped all the same)
  const int64_t now = host_.loop().now();
  const bool new_rival = rival_ != origin || now - rival_heard_at_ >= settings_.vehicle_timeout_ms;
  rival_heard_at_ = now;
  if (!new_rival) return;
  rival_ = std::string(origin);
  // The later one yields, by the time each began (its origin says; a tie by the random id). A
  // rival whose origin does not say (not a mavswitchd) is not yielded to: the ground sorts it out.
  yielding_ = began_before(rival_, origin_);
  rival_lines_.line(log::Level::kError, "nats: router {} also sends as vehicle {} (this router is {}): {}", rival_,
                    settings_.vehicle, origin_,
                    yielding_ ? "it was there first; this router neither publishes nor takes commands for the vehicle "
                                "until it is silent"
                              : "this router holds the name and goes on; ground routers refuse the other's frames");
}

bool FabricLink::yielding() {
  if (!yielding_) return false;
  if (host_.loop().now() - rival_heard_at_ < settings_.vehicle_timeout_ms) return true;
  yielding_ = false;
  log::warning("nats: router {} silent {} s: this router sends as vehicle {} again", rival_,
               settings_.vehicle_timeout_ms / 1000, settings_.vehicle);
  return false;
}

}  // namespace mavswitch::fabric
