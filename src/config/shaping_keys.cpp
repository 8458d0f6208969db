// The keys that shape what a link carries: RateLimitOut / RateLimitIn (per message), MaxRate
// and MaxDelay (a budget with priorities), Priority (in a redundant group).
#include <charconv>
#include <cmath>

#include "config/config_keys.hpp"
#include "dialect/builtin.hpp"

namespace mavswitch::config::keys {
namespace {

double get_number(const Where& w, std::string_view v, std::string_view what) {
  double x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc{} || end != v.data() + v.size() || !std::isfinite(x) || x <= 0)
    w.fail(quoted(v) + " is not " + std::string(what));
  return x;
}

// A message by name (of the built-in dialect) or by id.
uint32_t message_id(const Where& w, std::string_view name) {
  if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0])))
    return static_cast<uint32_t>(get_uint(w, name, 0xFFFFFF));
  for (const auto& info : dialect::builtin::message_table().all()) {
    if (info.name == name) return info.id;
  }
  w.fail(quoted(name) + " is not a message of the " + std::string(dialect::builtin::name()) +
         " dialect (give a name from it, or a message id)");
}

// "ATTITUDE:10, GLOBAL_POSITION_INT:5, *:2": frames a second, per (source, message).
void set_rate_limits(const Where& w, std::string_view list, transport::RateLimits& limits) {
  limits = {};
  for_each_item(w, list, [&](std::string_view item) {
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) w.fail(quoted(item) + " is not MESSAGE:RATE (ATTITUDE:10, *:2)");
    const std::string_view name = trim(item.substr(0, colon));
    const double rate = get_number(w, trim(item.substr(colon + 1)), "a rate above 0 (messages a second)");
    if (name == "*")
      limits.others = rate;
    else
      limits.add(message_id(w, name), rate);
  });
}

// "57600baud", "57600bps", "64kbps", "5000B/s", "2kB/s"; 0 or off: none (not even a serial
// port's baud rate).
int64_t get_rate(const Where& w, std::string_view v) {
  const std::string l = lower(v);
  if (l == "0" || l == "off" || l == "none") return 0;
  struct Unit {
    std::string_view suffix;
    double bytes;
  };
  // Bits per second count 8 bits a byte; baud 10 (a start and a stop bit around each byte).
  static constexpr Unit kUnits[] = {{"kB/s", 1000},  {"KB/s", 1000},     {"MB/s", 1e6},    {"B/s", 1},
                                    {"kbps", 125.0}, {"Mbps", 125000.0}, {"bps", 1 / 8.0}, {"baud", 1 / 10.0}};
  for (const Unit& u : kUnits) {
    if (v.size() > u.suffix.size() && v.ends_with(u.suffix)) {
      const double bytes = get_number(w, trim(v.substr(0, v.size() - u.suffix.size())), "a rate above 0") * u.bytes;
      if (bytes < 10 || bytes > 1e10) w.fail(quoted(v) + " is outside 10 B/s .. 10 GB/s");
      return static_cast<int64_t>(bytes);
    }
  }
  w.fail(quoted(v) + " needs a unit: baud, bps, kbps, Mbps, B/s, kB/s or MB/s (or off)");
}

}  // namespace

std::map<std::string, Setter> with_shaping_keys(std::map<std::string, Setter> keys) {
  keys.emplace("ratelimitout", [](auto& w, auto v, auto& e) { set_rate_limits(w, v, e.spec.rate_out); });
  keys.emplace("ratelimitin", [](auto& w, auto v, auto& e) { set_rate_limits(w, v, e.spec.rate_in); });
  keys.emplace("maxrate", [](auto& w, auto v, auto& e) { e.spec.max_rate = get_rate(w, v); });
  keys.emplace("maxdelay", [](auto& w, auto v, auto& e) {
    e.spec.max_delay = static_cast<transport::Millis>(get_uint(w, v, 60'000, 10));
  });
  // Off: this endpoint's requests for message rates go to the autopilot as they are (rates/).
  keys.emplace("messagerates", [](auto& w, auto v, auto& e) { e.spec.message_rates = get_bool(w, v); });
  keys.emplace("priority",
               [](auto& w, auto v, auto& e) { e.policy.priority = static_cast<int>(get_uint(w, v, 1000)); });
  return keys;
}

}  // namespace mavswitch::config::keys
