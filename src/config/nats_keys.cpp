// The [NatsEndpoint] section's keys: which cluster, as whom, over what, on which subjects, and
// the shaping and policy keys every link has.
#include <cctype>

#include "config/config_keys.hpp"

namespace mavswitch::daemon::keys {
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
        {"queuesize", [](const Where& w, std::string_view v,
                         EndpointConfig& e) { e.nats.queue_bytes = get_uint(w, v, 1 << 30, 1024); }},
        {"fleetstate",
         [](const Where& w, std::string_view v, EndpointConfig& e) { e.nats.fleet_state = get_bool(w, v); }},
        {"fleetstatereplicas",
         [](const Where& w, std::string_view v, EndpointConfig& e) {
           e.nats.fleet_replicas = static_cast<int>(get_uint(w, v, 5, 1));
         }},
        {"reconnectbuffer", [](const Where& w, std::string_view v,
                               EndpointConfig& e) { e.nats.reconnect_buffer = get_uint(w, v, 1u << 30, 1024); }},
    });
    with_policy_keys(k);
    return k;
  }();
  return keys;
}

}  // namespace mavswitch::daemon::keys
