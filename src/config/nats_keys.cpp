// The [NatsEndpoint] section's keys: which cluster, as whom, over what, on which subjects, and
// the shaping and policy keys every link has.
#include <cctype>

#include "config/config_keys.hpp"

namespace mavswitch::config::keys {
namespace {

// A subject or a part of one: tokens of letters, digits, '-' and '_' between dots; `wildcards`
// lets '*' and a last '>' stand for tokens.
bool is_subject(std::string_view s, bool wildcards) {
  if (s.empty() || s.front() == '.' || s.back() == '.' || s.find("..") != std::string_view::npos) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool whole_token = (i == 0 || s[i - 1] == '.') && (i + 1 == s.size() || s[i + 1] == '.');
    if (wildcards && whole_token && (c == '*' || (c == '>' && i + 1 == s.size()))) continue;
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace

// A vehicle's name is one subject token; `from`, `to` and `origin` are the fabric's own.
std::string vehicle_name_error(std::string_view name, bool pattern) {
  if (name.empty()) return "a vehicle name is empty";
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && !(pattern && c == '*'))
      return "'" + std::string(name) + "' is not a vehicle name (letters, digits, '-', '_'" +
             (pattern ? std::string(", '*' in a pattern)") : std::string(")"));
  }
  if (name == "from" || name == "to" || name == "origin")
    return "'" + std::string(name) + "' is a word of the fabric's subjects, not a vehicle name";
  if (name.size() > 64) return "a vehicle name is at most 64 characters";
  return {};
}

namespace {

void add_vehicle_choice(const Where& w, std::string_view item, NatsSettings& nats) {
  const size_t colon = item.find(':');
  const std::string_view name = item.substr(0, colon);
  const bool pattern = name.find('*') != std::string_view::npos;
  if (const std::string error = vehicle_name_error(name, true); !error.empty()) w.fail(error);
  NatsSettings::VehicleChoice choice{std::string(name), 0};
  if (colon != std::string_view::npos) {
    if (pattern)
      w.fail("'" + std::string(item) + "': a pattern takes the first free system ids, not one (" + std::string(name) +
             " without ':')");
    choice.system = static_cast<uint8_t>(get_uint(w, item.substr(colon + 1), 255, 1));
  }
  for (const auto& other : nats.vehicles) {
    if (other.name == choice.name) w.fail("vehicle '" + choice.name + "' is listed twice");
    if (choice.system != 0 && other.system == choice.system)
      w.fail("system id " + std::to_string(choice.system) + " is given to both " + other.name + " and " + choice.name);
  }
  nats.vehicles.push_back(std::move(choice));
}

Setter text(std::string NatsSettings::*field) {
  return [field](const Where& w, std::string_view v, EndpointConfig& e) {
    if (v.empty()) w.fail("needs a value");
    e.nats.*field = std::string(v);
  };
}

}  // namespace

const std::map<std::string, Setter>& nats_keys() {
  static const std::map<std::string, Setter> keys = [] {
    // The fabric is a link like any other: it is shaped by the same keys (a vehicle on a metered
    // link: RateLimitOut, MaxRate).
    std::map<std::string, Setter> k = with_shaping_keys({
        {"url",
         [](const Where& w, std::string_view v, EndpointConfig& e) {
           e.nats.urls.clear();
           for_each_item(w, v, [&](std::string_view url) {
             if (!url.starts_with("nats://") && !url.starts_with("tls://"))
               w.fail("'" + std::string(url) + "' is not a NATS server URL (nats://HOST:PORT or tls://HOST:PORT)");
             e.nats.urls.emplace_back(url);
           });
         }},
        {"user", text(&NatsSettings::user)},
        {"password", text(&NatsSettings::password)},
        {"token", text(&NatsSettings::token)},
        {"credentialsfile", text(&NatsSettings::credentials_file)},
        {"nkey", text(&NatsSettings::nkey)},
        {"nkeyseedfile", text(&NatsSettings::nkey_seed_file)},
        {"cafile", text(&NatsSettings::ca_file)},
        {"certificatefile", text(&NatsSettings::certificate_file)},
        {"keyfile", text(&NatsSettings::key_file)},
        {"prefix",
         [](const Where& w, std::string_view v, EndpointConfig& e) {
           if (!is_subject(v, false)) w.fail("'" + std::string(v) + "' is not a subject prefix (as fleet.mavlink)");
           e.nats.prefix = std::string(v);
         }},
        {"subscribe",
         [](const Where& w, std::string_view v, EndpointConfig& e) {
           e.nats.subscribe.clear();
           if (v == "none") return;
           for_each_item(w, v, [&](std::string_view s) {
             if (!is_subject(s, true))
               w.fail("'" + std::string(s) + "' is not a subject after the prefix (as from.> or from.255.>)");
             e.nats.subscribe.emplace_back(s);
           });
         }},
        {"queuesize",
         [](const Where& w, std::string_view v, EndpointConfig& e) {
           e.nats.queue_bytes = static_cast<size_t>(get_uint(w, v, 1 << 30, 1024));
         }},
        {"fleetstate",
         [](const Where& w, std::string_view v, EndpointConfig& e) { e.nats.fleet_state = get_bool(w, v); }},
        {"fleetstatereplicas",
         [](const Where& w, std::string_view v, EndpointConfig& e) {
           e.nats.fleet_replicas = static_cast<int>(get_uint(w, v, 5, 1));
         }},
        {"vehicle",
         [](const Where& w, std::string_view v, EndpointConfig& e) {
           if (const std::string error = vehicle_name_error(v, false); !error.empty()) w.fail(error);
           e.nats.vehicle = std::string(v);
         }},
        {"vehicles",
         [](const Where& w, std::string_view v, EndpointConfig& e) {
           e.nats.vehicles.clear();
           for_each_item(w, v, [&](std::string_view item) { add_vehicle_choice(w, item, e.nats); });
         }},
        {"vehicletimeout",
         [](const Where& w, std::string_view v, EndpointConfig& e) {
           e.nats.vehicle_timeout_ms = static_cast<int64_t>(get_uint(w, v, 86'400, 1)) * 1000;
         }},
        {"reconnectbuffer",
         [](const Where& w, std::string_view v, EndpointConfig& e) {
           e.nats.reconnect_buffer = static_cast<size_t>(get_uint(w, v, 1u << 30, 1024));
         }},
    });
    with_policy_keys(k);
    return k;
  }();
  return keys;
}

namespace {

void check_nats(const std::string& where, const EndpointConfig& e) {
  if (e.nats.urls.empty()) throw ConfigError(where + ": Url is required");
  if (!e.nats.vehicle.empty() && !e.nats.vehicles.empty()) {
    throw ConfigError(where + ": Vehicle and Vehicles together: a router serves one vehicle (Vehicle) or takes " +
                      "vehicles of the fleet (Vehicles), not both");
  }
}

}  // namespace

// A connection to a NATS cluster, made by fabric/ (nats_maker).
const SectionType kNatsSection{"natsendpoint", transport::EndpointSpec::Kind::kMade, nats_keys, false, nullptr,
                               check_nats};

}  // namespace mavswitch::config::keys
