// `mavswitch status` and `mavswitch endpoints`: a running router's links, systems and
// endpoints through its HTTP API, as tables for people or JSON for scripts.
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "tools/commands.hpp"

namespace mavswitch::tools {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// The answer's body as JSON, or an error said on stderr (a null value).
Json get(const ApiTarget& target, const std::string& path) {
  const ApiReply r = api_call(target, "GET", path);
  if (r.status == 0) {
    fmt::print(stderr, "mavswitch: {}\n", r.error);
    return nullptr;
  }
  if (r.status != 200) {
    fmt::print(stderr, "mavswitch: {} {}: {}\n", path, r.status, r.body);
    return nullptr;
  }
  Json j = Json::parse(r.body, nullptr, false);
  if (j.is_discarded()) fmt::print(stderr, "mavswitch: {}: not JSON\n", path);
  return j.is_discarded() ? Json(nullptr) : j;
}

uint64_t dropped(const Json& link) {
  uint64_t sum = 0;
  for (const auto& [cause, n] : link["dropped"].items()) sum += n.get<uint64_t>();
  return sum;
}

std::string human(double v) {
  if (v >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  if (v >= 1e4) return fmt::format("{:.1f}k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

// Rates between two samples of /api/v1/links (by link name); totals when there is no earlier one.
void print_links(const Json& now, const Json* before, double seconds) {
  std::map<std::string, Json> earlier;
  if (before != nullptr) {
    for (const auto& l : (*before)["links"]) earlier[l["name"].get<std::string>()] = l;
  }
  const bool rates = before != nullptr && seconds > 0;
  fmt::print("{:<36} {:>9} {:>9} {:>10} {:>10} {:>8} {:>6} {:>8} {:>8}\n", "LINK", rates ? "RX f/s" : "RX f",
             rates ? "TX f/s" : "TX f", rates ? "RX B/s" : "RX B", rates ? "TX B/s" : "TX B", "DROPPED", "CRC",
             "SEQ LOST", "QUEUED");
  for (const auto& l : now["links"]) {
    const std::string name = l["name"].get<std::string>();
    auto rate = [&](const char* key) {
      const double v = l[key].get<double>();
      const auto e = earlier.find(name);
      if (!rates) return v;
      return e == earlier.end() ? 0.0 : (v - e->second[key].get<double>()) / seconds;
    };
    fmt::print("{:<36} {:>9} {:>9} {:>10} {:>10} {:>8} {:>6} {:>8} {:>8}\n", name.substr(0, 36),
               human(rate("rx_frames")), human(rate("tx_frames")), human(rate("rx_bytes")), human(rate("tx_bytes")),
               dropped(l), l["crc_errors"].get<uint64_t>(), l["sequence_lost"].get<uint64_t>(),
               human(l["queued_bytes"].get<double>()));
  }
}

void print_systems(const Json& systems) {
  fmt::print("\n{:<16} {:>6} {:>4}  {:<16} {:<10} {:<16} {:<8} {:>7}  {}\n", "VEHICLE", "SYSTEM", "COMP", "TYPE",
             "AUTOPILOT", "MODE", "ARMED", "HEARD", "ON");
  for (const auto& s : systems["systems"]) {
    std::string links;
    for (const auto& l : s["links"]) links += (links.empty() ? "" : ", ") + l.get<std::string>();
    auto text = [&](const char* key) { return s.contains(key) ? s[key].get<std::string>() : std::string("-"); };
    const std::string armed = !s.contains("armed") ? "-" : s["armed"].get<bool>() ? "ARMED" : "disarmed";
    const std::string heard =
        s.contains("heard_ms_ago") ? fmt::format("{:.1f}s", s["heard_ms_ago"].get<double>() / 1000) : "-";
    fmt::print("{:<16} {:>6} {:>4}  {:<16} {:<10} {:<16} {:<8} {:>7}  {}\n", text("vehicle"), s["system"].get<int>(),
               s["component"].get<int>(), text("type"), text("autopilot"), text("mode"), armed, heard, links);
  }
}

// Per component and message: the interval it was asked (its answer) and each link's wish.
int print_rates(const StatusOptions& o) {
  const Json rates = get(o.target, "/api/v1/rates");
  if (rates.is_null()) return 1;
  if (o.json) {
    fmt::print("{}\n", rates.dump(2));
    return 0;
  }
  if (!rates.value("enabled", false)) {
    fmt::print("message rates are off (MessageRates = false): requests pass to the autopilots as they are\n");
    return 0;
  }
  auto interval = [](const Json& v) {
    return v.is_string() ? v.get<std::string>() : fmt::format("{:g} Hz", 1e6 / v.get<double>());
  };
  fmt::print("{:>6} {:>4}  {:<24} {:<12} {:<10}  {}\n", "SYSTEM", "COMP", "MESSAGE", "ASKED", "ANSWER", "WISHES");
  for (const auto& r : rates["rates"]) {
    std::string wishes;
    for (const auto& w : r["wishes"])
      wishes += (wishes.empty() ? "" : ", ") + w["link"].get<std::string>() + " " + interval(w["interval"]);
    fmt::print("{:>6} {:>4}  {:<24} {:<12} {:<10}  {}\n", r["system"].get<int>(), r["component"].get<int>(),
               r["message"].get<std::string>(), interval(r["asked"]), r.value("result", std::string("waiting")),
               wishes.empty() ? "-" : wishes);
  }
  return 0;
}

}  // namespace

int run_status(const StatusOptions& o) {
  if (o.rates) return print_rates(o);
  if (o.json) {
    const Json links = get(o.target, "/api/v1/links"), systems = get(o.target, "/api/v1/systems");
    if (links.is_null() || systems.is_null()) return 1;
    fmt::print("{}\n", Json{{"links", links["links"]}, {"systems", systems["systems"]}}.dump(2));
    return 0;
  }
  Json before = get(o.target, "/api/v1/links");
  if (before.is_null()) return 1;
  auto taken = Clock::now();
  const double period = o.watch > 0 ? o.watch : o.interval;
  for (bool first = true; first || o.watch > 0; first = false) {
    if (period > 0) std::this_thread::sleep_for(std::chrono::duration<double>(period));
    const Json now = get(o.target, "/api/v1/links"), systems = get(o.target, "/api/v1/systems");
    if (now.is_null() || systems.is_null()) return 1;
    const auto at = Clock::now();
    if (o.watch > 0) fmt::print("\033[H\033[2J");  // a fresh screen each time
    print_links(now, period > 0 ? &before : nullptr, std::chrono::duration<double>(at - taken).count());
    print_systems(systems);
    std::fflush(stdout);
    before = now;
    taken = at;
  }
  return 0;
}

int run_endpoints(const EndpointsOptions& o) {
  if (o.action == "list") {
    const Json j = get(o.target, "/api/v1/endpoints");
    if (j.is_null()) return 1;
    if (o.json) {
      fmt::print("{}\n", j.dump(2));
      return 0;
    }
    fmt::print("{:<20} {:<12} {:>6}  {}\n", "NAME", "KIND", "LINKS", "WHERE");
    for (const auto& e : j["endpoints"])
      fmt::print("{:<20} {:<12} {:>6}  {}\n", e["name"].get<std::string>(), e["kind"].get<std::string>(),
                 e["links"].get<int>(), e["description"].get<std::string>());
    return 0;
  }
  ApiReply r;
  if (o.action == "add") {  // TYPE NAME Key=Value...
    if (o.args.size() < 2) {
      fmt::print(stderr, "mavswitch: endpoints add TYPE NAME Key=Value... (as a config section)\n");
      return 2;
    }
    std::string section = "[" + o.args[0] + " " + o.args[1] + "]\n";
    for (size_t i = 2; i < o.args.size(); ++i) section += o.args[i] + "\n";
    r = api_call(o.target, "POST", "/api/v1/endpoints", section);
  } else {
    if (o.args.size() != 1) {
      fmt::print(stderr, "mavswitch: endpoints remove NAME\n");
      return 2;
    }
    r = api_call(o.target, "DELETE", "/api/v1/endpoints/" + o.args[0]);
  }
  if (r.status == 0) {
    fmt::print(stderr, "mavswitch: {}\n", r.error);
    return 1;
  }
  const Json j = Json::parse(r.body, nullptr, false);
  const std::string said = j.is_object() && j.contains("result")  ? j["result"].get<std::string>()
                           : j.is_object() && j.contains("error") ? j["error"].get<std::string>()
                                                                  : r.body;
  fmt::print(r.status < 300 ? stdout : stderr, "{}{}\n", r.status < 300 ? "" : "mavswitch: ", said);
  return r.status < 300 ? 0 : 1;
}

}  // namespace mavswitch::tools
