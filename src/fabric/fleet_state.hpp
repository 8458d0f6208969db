// The fleet state's conventions, shared by the daemon's NATS endpoint (which keeps it) and
// `mavswitch fleet` (which reads it): a JetStream stream of the fabric's HEARTBEAT,
// GLOBAL_POSITION_INT and SYS_STATUS subjects that keeps one message per subject, the latest,
// so whoever connects late sees every vehicle at once. A named vehicle's subjects carry its name
// (fabric_subjects.hpp), so two vehicles that are both system 1 are kept apart.
#pragma once

#include <array>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace mavswitch::fabric {

// What a request to JetStream's API that nobody answers means, in the user's words (libnats says
// "No responders available for request", or "Timeout").
inline constexpr const char* kNoJetStream =
    "FleetState needs JetStream: start nats-server with -js (or jetstream {} in its configuration; docs/CONFIG.md "
    "has a three-node recipe). JetStream did not answer: the cluster has none, or is still electing its leader";
inline constexpr std::array<const char*, 3> kFleetStateMessages = {"HEARTBEAT", "GLOBAL_POSITION_INT", "SYS_STATUS"};

// "mavlink" -> "MAVLINK_FLEET": stream names take no dots.
inline std::string fleet_stream_name(const std::string& prefix) {
  std::string name;
  for (const char c : prefix) name += std::isalnum(static_cast<unsigned char>(c)) ? char(std::toupper(c)) : '_';
  return name + "_FLEET";
}

// The subjects one kind of state is kept under: every source's, one value each, of the fabric
// without vehicle names and of the named vehicles.
inline std::vector<std::string> fleet_state_subjects(const std::string& prefix, const char* message) {
  return {prefix + ".from.*.*." + message, prefix + ".*.from.*.*." + message};
}

// The vehicle a subject under `prefix` names ("v1" of PREFIX.v1.from.1.1.HEARTBEAT); empty for
// one that names none (PREFIX.from..., PREFIX.to..., PREFIX.origin...).
inline std::string_view subject_vehicle(std::string_view subject, std::string_view prefix) noexcept {
  if (subject.size() <= prefix.size() + 1 || !subject.starts_with(prefix) || subject[prefix.size()] != '.') return {};
  subject.remove_prefix(prefix.size() + 1);
  const std::string_view token = subject.substr(0, subject.find('.'));
  if (token == "from" || token == "to" || token == "origin" || token.size() == subject.size()) return {};
  return token;
}

}  // namespace mavswitch::fabric
