// The keys of mavswitchd's configuration sections, one setter each: what config.cpp calls for
// every "Key = Value" line it reads. Internal to the daemon.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace mavswitch::config::keys {

std::string lower(std::string_view s);
std::string_view trim(std::string_view s);
// A value as an error message quotes it: at most a few dozen characters of it.
std::string quoted(std::string_view v);
constexpr uint64_t kMinTelemetryLogSize = 64 * 1024;

// Where a value came from, for error messages.
struct Where {
  std::string file;
  int line;
  std::string key;
  // The key (or section header) as written, cut short when it is long: an error line must not
  // echo a 10 MB line.
  [[noreturn]] void fail(const std::string& what) const {
    constexpr size_t kMaxEchoed = 64;
    const std::string shown = key.size() <= kMaxEchoed
                                  ? key
                                  : key.substr(0, kMaxEchoed) + "... (" + std::to_string(key.size()) + " characters)";
    throw ConfigError(text() + ": " + shown + ": " + what);
  }
  // FILE:LINE, or the source alone for what has no lines (a JSON body).
  std::string text() const { return line == 0 ? file : file + ":" + std::to_string(line); }
};

using Setter = std::function<void(const Where&, std::string_view, EndpointConfig&)>;

uint64_t get_uint(const Where& w, std::string_view v, uint64_t max, uint64_t min = 0);
// Calls f for each item of a comma-separated list; an empty item between commas is an error.
void for_each_item(const Where& w, std::string_view list, const std::function<void(std::string_view)>& f);
// The keys that shape what a link carries (shaping_keys.cpp), added to `keys`.
std::map<std::string, Setter> with_shaping_keys(std::map<std::string, Setter> keys);

// By section type, keys lower-cased; every endpoint section also takes the common ones.
const std::map<std::string, Setter>& common_endpoint_keys();
const std::map<std::string, Setter>& uart_keys();
const std::map<std::string, Setter>& udp_keys();
const std::map<std::string, Setter>& tcp_server_keys();
const std::map<std::string, Setter>& tcp_keys();
// Of the common keys, the filters and signing: what a link the router does not read itself
// (a WebSocket client, the NATS fabric) takes.
void with_policy_keys(std::map<std::string, Setter>& keys);
// [WebSocketEndpoint]: Path, MaxClients, the shaping keys and the policy keys.
const std::map<std::string, Setter>& websocket_keys();
// [NatsEndpoint] (nats_keys.cpp): the cluster, credentials, TLS, subjects, and the policy keys.
const std::map<std::string, Setter>& nats_keys();
// One endpoint section type: the kind it makes, its keys, and what is particular to it. The
// types made above transport (kMade) keep all of that here, so nothing else tests for them.
struct SectionType {
  const char* name;  // lower case: "udpendpoint"
  transport::EndpointSpec::Kind kind;
  const std::map<std::string, Setter>& (*keys)();
  bool common_keys;  // takes common_endpoint_keys() besides its own (the socket kinds)
  // On the section's first header: a name it cannot take fails at `w`; defaults that follow from
  // the name. May be null.
  void (*named)(const Where& w, const std::string& name, EndpointConfig& e);
  // Once every file is read: what it must hold (throws ConfigError naming `where`). May be null.
  void (*check)(const std::string& where, const EndpointConfig& e);
};
// Every section type an endpoint can be written in; null when `name` is none of them.
const SectionType* section_type(std::string_view name);
// [NatsEndpoint]'s (nats_keys.cpp).
extern const SectionType kNatsSection;
// [General]: `key` lower-cased.
void set_general(const Where& w, const std::string& key, std::string_view v, Config& c);
bool get_bool(const Where& w, std::string_view v);
// [Http] (http_keys.cpp).
void set_http(const Where& w, const std::string& key, std::string_view v, HttpConfig& c);

// Why `name` is not a vehicle name of the fleet fabric (letters, digits, '-', '_'; '*' too in a
// pattern; not a word of the fabric's subjects; at most 64 characters), or "" when it is one.
std::string vehicle_name_error(std::string_view name, bool pattern);

}  // namespace mavswitch::config::keys
