// The fleet state's conventions, shared by the daemon's NATS endpoint (which keeps it) and
// `mavswitch fleet` (which reads it): a JetStream stream of the fabric's HEARTBEAT,
// GLOBAL_POSITION_INT and SYS_STATUS subjects that keeps one message per subject, the latest,
// so whoever connects late sees every vehicle at once.
#pragma once

#include <array>
#include <cctype>
#include <string>

namespace mavswitch::fabric {

// What a request to JetStream's API that nobody answers means, in the user's words (libnats says
// "No responders available for request", or "Timeout").
inline constexpr const char* kNoJetStream =
    "JetStream did not answer: the cluster has no JetStream (start each nats-server with -js, or jetstream {} in "
    "its configuration; docs/CONFIG.md has a three-node recipe), or is still electing its leader";
inline constexpr std::array<const char*, 3> kFleetStateMessages = {"HEARTBEAT", "GLOBAL_POSITION_INT", "SYS_STATUS"};

// "mavlink" -> "MAVLINK_FLEET": stream names take no dots.
inline std::string fleet_stream_name(const std::string& prefix) {
  std::string name;
  for (const char c : prefix) name += std::isalnum(static_cast<unsigned char>(c)) ? char(std::toupper(c)) : '_';
  return name + "_FLEET";
}

// The subject one kind of state is kept under: every source's, one value each.
inline std::string fleet_state_subject(const std::string& prefix, const char* message) {
  return prefix + ".from.*.*." + message;
}

}  // namespace mavswitch::fabric
