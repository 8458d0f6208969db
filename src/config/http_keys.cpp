// The [Http] section's keys: where the operator's window listens and who may use it.
#include "config/config_keys.hpp"

namespace mavswitch::daemon::keys {

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
  } else {
    w.fail("unknown key in [Http] (Address, Port, TokenFile, Certificate, MetricsPerLink, VehicleData)");
  }
}

}  // namespace mavswitch::daemon::keys
