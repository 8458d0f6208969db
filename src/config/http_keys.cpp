// The [Http] section's keys: where the operator's window listens and who may use it.
#include "config/config_keys.hpp"

#include <cctype>

namespace mavswitch::config::keys {

void set_http(const Where& w, const std::string& key, std::string_view v, HttpConfig& c) {
  if (key == "address") {
    if (v.empty()) w.fail("an address to listen on (127.0.0.1, 0.0.0.0, ::1)");
    c.address = std::string(v);
  } else if (key == "port") {
    c.port = static_cast<uint16_t>(get_uint(w, v, 65535));
    c.source = w.text();
  } else if (key == "tokenfile") {
    c.token_file = std::string(v);
  } else if (key == "certificate") {
    c.certificate = std::string(v);
  } else if (key == "metricsperlink") {
    c.metrics_per_link = get_bool(w, v);
  } else if (key == "vehicledata") {
    c.vehicle_data = get_bool(w, v);
  } else if (key == "servername") {
    for_each_item(w, v, [&](std::string_view item) {
      std::string name;
      for (const char ch : item) name += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const bool host_chars = !name.empty() && name.size() <= 253 &&
                              name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-") == std::string::npos;
      if (!host_chars) w.fail(quoted(item) + ": a host name (letters, digits, '.', '-'), as browsers send it in Host");
      c.server_names.push_back(std::move(name));
    });
  } else if (key == "maptiles") {
    const bool web = v.starts_with("https://") || v.starts_with("http://");
    const bool placed = v.find("{z}") != v.npos && v.find("{x}") != v.npos && v.find("{y}") != v.npos;
    const bool plain = v.find_first_of("\"' ;<>") == v.npos;
    if (!web || !placed || !plain)
      w.fail(quoted(v) + ": a tile server's http(s) URL with {z}, {x} and {y} in it, no quotes, spaces or ';'");
    c.map_tiles = std::string(v);
  } else {
    w.fail(
        "unknown key in [Http] (Address, Port, TokenFile, Certificate, MetricsPerLink, VehicleData, ServerName, "
        "MapTiles)");
  }
}

}  // namespace mavswitch::config::keys
