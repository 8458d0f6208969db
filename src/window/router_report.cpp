#include "window/router_report.hpp"

#include <nlohmann/json.hpp>

#include "base/fault.hpp"
#include "dialect/vehicle_names.hpp"
#include "fabric/vehicle_map.hpp"
#include "transport/clock.hpp"

namespace mavswitch::window {
namespace {

using Json = nlohmann::json;

Json counters_json(const transport::LinkCounters& c, const protocol::ParserStats& p, uint64_t sequence_lost) {
  Json drops = Json::object();
  for (const auto& [cause, n] : drops_of(c)) drops[cause] = n;
  return {{"rx_frames", c.frames_in},
          {"rx_bytes", c.bytes_in},
          {"tx_frames", c.frames_out},
          {"tx_bytes", c.bytes_out},
          {"dropped", drops},
          {"crc_errors", p.crc_failures},
          {"skipped_bytes", p.bytes_skipped},
          {"sequence_lost", sequence_lost},
          {"lost_on_fabric", c.fabric_lost}};
}

// RADIO_STATUS in its own words; "remote" is the radio at the other end of the air.
Json radio_json(const RadioReport& r, int64_t age_ms) {
  const msg::RadioStatus& m = r.status;
  return {{"rssi", m.rssi},
          {"remote_rssi", m.remrssi},
          {"noise", m.noise},
          {"remote_noise", m.remnoise},
          {"rx_errors", m.rxerrors},
          {"fixed", m.fixed},
          {"tx_buffer_percent", m.txbuf},
          {"reports", r.reports},
          {"heard_ms_ago", age_ms}};
}

}  // namespace

std::vector<std::pair<const char*, uint64_t>> drops_of(const transport::LinkCounters& c) {
  return {{"queue_full", c.dropped_queue_full},
          {"link_down", c.dropped_down},
          {"rate_limited_in", c.rate_limited_in},
          {"rate_limited_out", c.rate_limited_out},
          {"rate_thinned", c.rate_thinned},
          {"superseded", c.superseded},
          {"paced_control", c.paced_drops[0]},
          {"paced_status", c.paced_drops[1]},
          {"paced_telemetry", c.paced_drops[2]},
          {"looped", c.looped_in},
          {"unmapped", c.unmapped},
          {"stale", c.stale}};
}

std::vector<std::pair<const char*, uint64_t>> drops_of(const routing::RoutingStats& r) {
  return {{"filtered_in", r.filtered_in},
          {"filtered_out", r.filtered_out},
          {"unknown_target", r.unknown_target},
          {"duplicate", r.duplicates},
          {"unknown_id", r.unknown_ids_dropped},
          {"signing", r.signing_rejected},
          {"setup_signing", r.setup_signing_dropped},
          {"command_denied", r.commands_denied}};
}

RouterSnapshot snapshot_on_router(Router& router) {
  MAVSWITCH_ASSERT_OWNER(router.event_loop(), "snapshot_on_router");
  RouterSnapshot s;
  s.at_ms = transport::now_ms();
  for (size_t i = 0; i < router.endpoint_count(); ++i) {
    if (router.endpoint_closed(i)) continue;
    EndpointSnapshot e;
    e.index = i;
    e.spec = router.endpoint_spec(i);
    e.name = router.endpoint_spec(i).name;
    e.kind = transport::kind_name(router.endpoint_spec(i));
    e.description = router.endpoint_description(i);
    e.totals = router.endpoint_totals(i);
    router.for_each_link(i, [&](const Router::LinkReport& r) {
      LinkSnapshot l{router.link_name(r.link.id),
                     r.link.peer(),
                     r.worker,
                     r.counters,
                     r.link.parser_stats(),
                     r.sequences != nullptr ? r.sequences->lost() : 0,
                     r.queue_storage,
                     r.queued,
                     r.radio != nullptr ? std::optional<RadioReport>(*r.radio) : std::nullopt,
                     r.radio != nullptr ? transport::now_ms() - r.radio->heard_ms : 0};
      e.sequence_lost += l.sequence_lost;
      e.links.push_back(std::move(l));
    });
    s.endpoints.push_back(std::move(e));
  }
  s.routing = router.routing().stats();
  s.routes = router.routing().routes().known_count();
  s.workers = router.worker_count();
  s.worker_busy_us = router.worker_busy_us();
  s.cross_worker_drops = router.cross_worker_drops();
  s.spoofed_answers = router.spoofed_answers();
  s.faults = fault::count();
  return s;
}

std::string links_json(const RouterSnapshot& s, bool pretty) {
  Json links = Json::array();
  for (const auto& e : s.endpoints) {
    for (const auto& l : e.links) {
      Json j = {{"name", l.name},
                {"endpoint", e.name},
                {"kind", e.kind},
                {"peer", l.peer},
                {"worker", l.worker},
                {"queued_bytes", l.queued},
                {"queue_storage_bytes", l.queue_storage}};
      j.update(counters_json(l.counters, l.parser, l.sequence_lost));
      if (l.radio) j["radio"] = radio_json(*l.radio, l.radio_age_ms);
      links.push_back(std::move(j));
    }
  }
  return pretty ? json_text(Json{{"links", links}}, 2) : json_text(links);
}

std::string endpoints_json(const RouterSnapshot& s) {
  Json list = Json::array();
  for (const EndpointSnapshot& e : s.endpoints) {
    const transport::EndpointSpec& spec = e.spec;
    Json j = {{"name", spec.name}, {"kind", e.kind}, {"description", e.description}};
    // Where a socket is; a made endpoint's description says where it is (a path, a cluster).
    if (!spec.device.empty()) {
      j["device"] = spec.device;
      j["baud"] = spec.bauds;
    } else if (spec.maker == nullptr) {
      j["address"] = spec.address;
      j["port"] = spec.port;
    }
    j["links"] = e.links.size();
    list.push_back(std::move(j));
  }
  return json_text(Json{{"endpoints", list}}, 2);
}

std::string systems_json(Router& router, const std::map<uint16_t, VehicleWatch::Heartbeat>& heartbeats,
                         const std::map<uint16_t, std::string>& own, bool pretty) {
  Json list = Json::array();
  const auto& routes = router.routing().routes();
  const routing::Millis now = transport::now_ms();  // the clock routing stamps with
  const std::map<uint8_t, std::string> names = fabric::fleet_names();
  for (unsigned sys = 0; sys < 256; ++sys) {
    for (unsigned comp = 0; comp < 256; ++comp) {
      if (!routes.knows(uint8_t(sys), uint8_t(comp))) continue;
      Json links = Json::array();
      routes.for_each_component_link(uint8_t(sys), uint8_t(comp),
                                     [&](routing::LinkId id) { links.push_back(router.link_name(id)); });
      Json s = {{"system", sys}, {"component", comp}, {"links", links}};
      if (const auto it = own.find(static_cast<uint16_t>(sys << 8 | comp)); it != own.end()) s["name"] = it->second;
      if (const auto it = names.find(uint8_t(sys)); it != names.end() && !it->second.empty()) s["vehicle"] = it->second;
      const routing::Millis heard = routes.last_heard(uint8_t(sys), uint8_t(comp));
      if (heard != 0) s["heard_ms_ago"] = std::max<routing::Millis>(0, now - heard);
      if (const auto it = heartbeats.find(static_cast<uint16_t>(sys << 8 | comp)); it != heartbeats.end()) {
        const VehicleWatch::Heartbeat& hb = it->second;
        s["type"] = dialect::vehicle_type_name(hb.type);
        s["autopilot"] = dialect::autopilot_name(hb.autopilot);
        s["mode"] = dialect::mode_name(hb.autopilot, hb.type, hb.base_mode, hb.custom_mode);
        s["armed"] = dialect::armed(hb.base_mode);
        if (hb.armed_at != 0) s["armed_ms"] = std::max<routing::Millis>(0, hb.at - hb.armed_at);  // time in flight
        s["system_status"] = hb.system_status;
      }
      list.push_back(std::move(s));
    }
  }
  return pretty ? json_text(Json{{"systems", list}}, 2) : json_text(list);
}

std::string stats_json(const RouterSnapshot& s) {
  const routing::RoutingStats& r = s.routing;
  Json routing_drops = Json::object();
  for (const auto& [cause, n] : drops_of(r)) routing_drops[cause] = n;
  Json endpoints = Json::array();
  for (const auto& e : s.endpoints) {
    Json j = {{"name", e.name},
              {"kind", e.kind},
              {"description", e.description},
              {"links", e.links.size()},
              {"links_closed", e.totals.links_closed},
              {"kernel_drops", e.totals.kernel_drops}};
    j.update(counters_json(e.totals.counters, e.totals.parser, e.sequence_lost));
    endpoints.push_back(std::move(j));
  }
  return json_text(Json{{"routing",
                         {{"frames", r.frames},
                          {"broadcast", r.broadcast},
                          {"targeted", r.targeted},
                          {"deliveries", r.deliveries},
                          {"dropped", routing_drops}}},
                        {"routes", s.routes},
                        {"workers", s.workers},
                        {"spoofed_answers", s.spoofed_answers},
                        {"faults", s.faults},
                        {"endpoints", endpoints}},
                   2);
}

namespace {

Json interval_json(int64_t us) {
  if (us == rates::MessageRates::kDefault) return "default";
  if (us == rates::MessageRates::kOff) return "off";
  return us;
}

const char* mav_result_name(uint8_t r) {
  static constexpr const char* kNames[] = {"ACCEPTED", "TEMPORARILY_REJECTED", "DENIED",   "UNSUPPORTED",
                                           "FAILED",   "IN_PROGRESS",          "CANCELLED"};
  return r < std::size(kNames) ? kNames[r] : "UNKNOWN";
}

}  // namespace

std::string rates_json(Router& router, const std::vector<rates::MessageRates::Rate>& rates, bool enabled) {
  Json list = Json::array();
  for (const auto& r : rates) {
    const protocol::MessageInfo* info = router.routing_table().find(r.message);
    Json wishes = Json::array();
    for (const auto& [link, us] : r.wishes) {
      Json w = {{"link", link}, {"interval_us", us}, {"interval", interval_json(us)}};
      if (us > 0) w["hz"] = 1e6 / static_cast<double>(us);
      wishes.push_back(std::move(w));
    }
    Json j = {{"system", r.system},
              {"component", r.component},
              {"message", info != nullptr ? std::string(info->name) : std::to_string(r.message)},
              {"message_id", r.message},
              {"asked_us", r.asked_us},
              {"asked", interval_json(r.asked_us)},
              {"answered", r.answered},
              {"wishes", std::move(wishes)}};
    if (r.asked_us > 0) j["asked_hz"] = 1e6 / static_cast<double>(r.asked_us);
    if (r.answered) j["result"] = mav_result_name(r.result);
    list.push_back(std::move(j));
  }
  return json_text(Json{{"enabled", enabled}, {"rates", std::move(list)}}, 2);
}

}  // namespace mavswitch::window
