#include "window/endpoint_control.hpp"

#include <fmt/format.h>

#include <set>

#include "base/blocking_work.hpp"
#include "base/log.hpp"
#include "config/config_keys.hpp"
#include "config/endpoint_policy.hpp"
#include "fabric/nats_endpoint.hpp"

namespace mavswitch::window {

EndpointControl::EndpointControl(Router& router, std::function<config::Config()> read_config)
    : router_(router), read_config_(std::move(read_config)) {
  makers_["natsendpoint"] = [this](config::EndpointConfig& e) {
    e.spec.maker = fabric::nats_maker(e.nats, e.signing, router_.routing().route_timeout());
  };
  serve_websockets(false);
}

void EndpointControl::serve_websockets(bool served) {
  makers_["websocketendpoint"] = [this, served](config::EndpointConfig& e) {
    if (!served) throw std::runtime_error("[WebSocketEndpoint] needs the HTTP server ([Http] Port is 0): not served");
    doors_.enter(e.spec, e.path);
  };
}

bool EndpointControl::started_with(size_t index, config::EndpointConfig& e) {
  std::lock_guard lock(mutex_);
  try {
    prepare(e);
  } catch (const std::runtime_error& err) {
    log::error("{}: {}: {}; routing on without it", e.source, e.spec.name, err.what());
    return false;
  }
  open_[config::keys::lower(e.spec.name)] = {index, e.keys};
  return true;
}

void EndpointControl::prepare(config::EndpointConfig& e) {
  if (e.spec.kind != transport::EndpointSpec::Kind::kMade) return;  // transport makes it alone
  const auto maker = makers_.find(e.section_type);
  if (maker == makers_.end()) throw std::runtime_error("[" + e.section_type + "] endpoints are not made here");
  maker->second(e);
}

EndpointControl::Result EndpointControl::add(std::string_view section_text) {
  return add_read([&](config::Config& c) { config::load_config_text(section_text, "request", c); });
}

EndpointControl::Result EndpointControl::add(const config::ConfigSection& section) {
  return add_read([&](config::Config& c) { config::load_config_section(section, "request", c); });
}

EndpointControl::Result EndpointControl::add_read(const std::function<void(config::Config&)>& read) {
  MAVSWITCH_ASSERT_BLOCKING_WORK("EndpointControl::add");
  config::Config parsed;
  try {
    read(parsed);
    if (parsed.endpoints.size() != 1) return {400, "give one endpoint section, as [UdpEndpoint name] and its keys"};
    config::finish_config(parsed);
  } catch (const config::ConfigError& e) {
    return {400, e.what()};
  }
  config::EndpointConfig& e = parsed.endpoints[0];
  std::lock_guard lock(mutex_);
  if (open_.count(config::keys::lower(e.spec.name)))
    return {409, "an endpoint named '" + e.spec.name + "' is open: remove it first"};
  return open(std::move(e));
}

EndpointControl::Result EndpointControl::remove(const std::string& name) {
  MAVSWITCH_ASSERT_BLOCKING_WORK("EndpointControl::remove");
  std::lock_guard lock(mutex_);
  return close(name);
}

EndpointControl::Result EndpointControl::open(config::EndpointConfig e) {
  try {
    const routing::LinkPolicy policy = policy_of(router_, e, false);
    try {
      prepare(e);
    } catch (const std::runtime_error& err) {  // nothing makes it here, or its path is served already
      return {409, e.spec.name + ": " + err.what()};
    }
    const size_t index = router_.open_endpoint(e.spec, policy);
    open_[config::keys::lower(e.spec.name)] = {index, e.keys};
    log::info("{}: opened", router_.endpoint_description(index));
    return {201, router_.endpoint_description(index)};
  } catch (const config::ConfigError& err) {
    return {400, err.what()};
  } catch (const Router::StartError& err) {
    doors_.leave(e.spec.name);  // a WebSocket endpoint's path serves nothing now
    return {409, err.what()};
  } catch (const std::runtime_error& err) {
    doors_.leave(e.spec.name);
    return {409, e.spec.name + ": " + err.what()};
  }
}

EndpointControl::Result EndpointControl::close(const std::string& name) {
  const auto it = open_.find(config::keys::lower(name));
  if (it == open_.end()) return {404, "no open endpoint named '" + name + "'"};
  const std::string what = router_.endpoint_description(it->second.index);
  doors_.leave(name);  // no new client; the endpoint hangs up on those it has as it closes
  router_.close_endpoint(it->second.index);
  open_.erase(it);
  log::info("{}: closed", what);
  return {200, what};
}

EndpointControl::Result EndpointControl::reload() {
  MAVSWITCH_ASSERT_BLOCKING_WORK("EndpointControl::reload");
  config::Config config;
  try {
    config = read_config_();
  } catch (const config::ConfigError& e) {
    log::error("reload: {}; nothing changed", e.what());
    return {400, std::string(e.what()) + "; nothing changed"};
  }
  std::lock_guard lock(mutex_);
  std::map<std::string, config::EndpointConfig*> wanted;
  if (config.general.tcp_server.spec.port != 0)
    wanted[config::keys::lower(config.general.tcp_server.spec.name)] = &config.general.tcp_server;
  for (auto& e : config.endpoints) wanted[config::keys::lower(e.spec.name)] = &e;
  std::vector<std::string> gone, changed, added, failed;
  for (const auto& [name, o] : open_) {
    const auto w = wanted.find(name);
    if (w == wanted.end())
      gone.push_back(name);
    else if (w->second->keys != o.keys)
      changed.push_back(name);
  }
  for (const auto& [name, e] : wanted) {
    if (!open_.count(name)) added.push_back(name);
  }
  // Keys named in the configuration are read again: an endpoint whose key file changed (and
  // nothing else) takes the new key where it runs, its links and their state kept.
  size_t rekeyed = 0;
  for (const auto& [name, o] : open_) {
    const auto w = wanted.find(name);
    if (w == wanted.end() || w->second->keys != o.keys || !w->second->signing) continue;
    const auto& gate = router_.endpoint_policy(o.index).signing;
    if (gate == nullptr || gate->key() == w->second->signing->key) continue;
    gate->set_key(w->second->signing->key);
    log::info("reload: {}: a new signing key, for its links as they run", w->second->spec.name);
    ++rekeyed;
  }
  for (const auto& name : gone) close(name);
  for (const auto& name : changed) close(name);
  for (const auto& list : {changed, added}) {
    for (const auto& name : list) {
      const Result r = open(*wanted[name]);
      if (r.status >= 300) {
        log::error("reload: {}", r.message);
        failed.push_back(r.message);
      }
    }
  }
  const std::string summary =
      fmt::format("reload: {} added, {} removed, {} changed, {} new signing keys{}", added.size(), gone.size(),
                  changed.size(), rekeyed, failed.empty() ? "" : fmt::format(", {} failed", failed.size()));
  log::info("{}", summary);
  return {failed.empty() ? 200 : 409, summary + (failed.empty() ? "" : ": " + failed.front())};
}

}  // namespace mavswitch::window
