// `mavswitch fleet`: the fleet's state as a NATS cluster keeps it (routers with FleetState): each
// vehicle's (by name, where its router gives one) and each system's latest HEARTBEAT, position
// and status, read at once from JetStream however late one asks. Frames are decoded with the
// built-in dialect.
#include <fmt/format.h>
#include <nats/nats.h>

#include <chrono>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "dialect/builtin.hpp"
#include "dialect/vehicle_names.hpp"
#include "fabric/fleet_state.hpp"
#include "mavswitch/msg/global_position_int.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/sys_status.hpp"
#include "protocol/parser.hpp"
#include "tools/commands.hpp"

namespace mavswitch::tools {
namespace {

using Json = nlohmann::json;
constexpr int64_t kWaitMs = 2000;  // for the cluster's answers

// A source: its vehicle's name (empty: none), system and component.
using Source = std::tuple<std::string, uint8_t, uint8_t>;

struct SystemState {
  int64_t heard_ns = 0;  // when the newest of its messages was stored
  std::optional<msg::Heartbeat> heartbeat;
  std::optional<msg::GlobalPositionInt> position;
  std::optional<msg::SysStatus> status;
};

std::string error_text(natsStatus s) {
  const char* why = nats_GetLastError(nullptr);
  std::string text = why != nullptr && *why != '\0' ? why : natsStatus_GetText(s);
  if (text.starts_with('(') && text.find("): ") != std::string::npos) text.erase(0, text.find("): ") + 3);
  return text;
}

// Every stored value of one kind of state: a consumer that starts with the last message of each
// subject, read until nothing is pending.
bool read_state(jsCtx* js, const FleetOptions& o, const std::string& subject, std::map<Source, SystemState>* systems,
                std::string* error) {
  const std::string stream = fabric::fleet_stream_name(o.prefix);
  jsSubOptions options;
  jsSubOptions_Init(&options);
  options.Stream = stream.c_str();
  options.Config.DeliverPolicy = js_DeliverLastPerSubject;
  options.Config.AckPolicy = js_AckNone;
  natsSubscription* sub = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_SubscribeSync(&sub, js, subject.c_str(), nullptr, &options, &code);
  if (s != NATS_OK) {
    *error = fmt::format("the fleet state ({} in stream {}): {}", subject, stream,
                         s == NATS_NO_RESPONDERS || s == NATS_TIMEOUT ? fabric::kNoJetStream : error_text(s));
    return false;
  }
  // Nothing stored under the subject: said at once, rather than by a wait for a message.
  jsConsumerInfo* info = nullptr;
  bool empty = false;
  if (natsSubscription_GetConsumerInfo(&info, sub, nullptr, nullptr) == NATS_OK) {
    empty = info->NumPending == 0 && info->Delivered.Consumer == 0;
    jsConsumerInfo_Destroy(info);
  }
  protocol::FrameParser parser(dialect::builtin::message_table());
  while (!empty) {
    natsMsg* m = nullptr;
    if (natsSubscription_NextMsg(&m, sub, kWaitMs) != NATS_OK) break;  // none stored, or the rest lost
    jsMsgMetaData* meta = nullptr;
    uint64_t pending = 0;
    int64_t stored = 0;
    if (natsMsg_GetMetaData(&meta, m) == NATS_OK) {
      pending = meta->NumPending;
      stored = meta->Timestamp;
      jsMsgMetaData_Destroy(meta);
    }
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(natsMsg_GetData(m)),
                                         static_cast<size_t>(natsMsg_GetDataLength(m)));
    const std::string vehicle(fabric::subject_vehicle(natsMsg_GetSubject(m), o.prefix));
    parser.feed(bytes, [&](const protocol::FrameView& f) {
      SystemState& st = (*systems)[{vehicle, f.sysid(), f.compid()}];
      st.heard_ns = std::max(st.heard_ns, stored);
      if (f.msgid() == msg::Heartbeat::kId) st.heartbeat = msg::Heartbeat::decode(f.payload());
      if (f.msgid() == msg::GlobalPositionInt::kId) st.position = msg::GlobalPositionInt::decode(f.payload());
      if (f.msgid() == msg::SysStatus::kId) st.status = msg::SysStatus::decode(f.payload());
    });
    natsMsg_Destroy(m);
    if (pending == 0) break;
  }
  natsSubscription_Destroy(sub);
  return true;
}

Json json_of(const Source& source, const SystemState& st, int64_t now_ns) {
  const auto& [vehicle, system, component] = source;
  Json j = {{"system", system}, {"component", component}, {"heard_ms_ago", (now_ns - st.heard_ns) / 1'000'000}};
  if (!vehicle.empty()) j["vehicle"] = vehicle;
  if (st.heartbeat) {
    const auto& hb = *st.heartbeat;
    j["type"] = dialect::vehicle_type_name(hb.type);
    j["autopilot"] = dialect::autopilot_name(hb.autopilot);
    j["mode"] = dialect::mode_name(hb.autopilot, hb.type, hb.base_mode, hb.custom_mode);
    j["armed"] = dialect::armed(hb.base_mode);
  }
  if (st.position) {
    j["lat"] = st.position->lat / 1e7;
    j["lon"] = st.position->lon / 1e7;
    j["alt_m"] = st.position->alt / 1e3;
  }
  if (st.status && st.status->battery_remaining >= 0) j["battery_percent"] = st.status->battery_remaining;
  return j;
}

}  // namespace

int run_fleet(const FleetOptions& o) {
  natsOptions* options = nullptr;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  std::vector<const char*> urls;
  for (const auto& u : o.urls) urls.push_back(u.c_str());
  natsStatus s = natsOptions_Create(&options);
  if (s == NATS_OK) s = natsOptions_SetServers(options, urls.data(), static_cast<int>(urls.size()));
  if (s == NATS_OK && !o.user.empty()) s = natsOptions_SetUserInfo(options, o.user.c_str(), o.password.c_str());
  if (s == NATS_OK && !o.token.empty()) s = natsOptions_SetToken(options, o.token.c_str());
  if (s == NATS_OK && !o.credentials_file.empty())
    s = natsOptions_SetUserCredentialsFromFiles(options, o.credentials_file.c_str(), nullptr);
  if (s == NATS_OK && !o.ca_file.empty()) s = natsOptions_LoadCATrustedCertificates(options, o.ca_file.c_str());
  if (s == NATS_OK) s = natsConnection_Connect(&nc, options);
  if (s == NATS_OK) s = natsConnection_JetStream(&js, nc, nullptr);
  int status = 0;
  std::map<Source, SystemState> systems;
  std::string error;
  if (s != NATS_OK) {
    fmt::print(stderr, "mavswitch: cannot reach the cluster at {}: {}\n", fmt::join(o.urls, ","), error_text(s));
    status = 1;
  } else {
    for (const char* m : fabric::kFleetStateMessages) {
      for (const auto& subject : fabric::fleet_state_subjects(o.prefix, m)) {
        if (status == 0 && !read_state(js, o, subject, &systems, &error)) {
          fmt::print(stderr, "mavswitch: {}\n", error);
          status = 1;
        }
      }
    }
  }
  if (status == 0) {
    const int64_t now_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    Json list = Json::array();
    for (const auto& [source, st] : systems) list.push_back(json_of(source, st, now_ns));
    if (o.json) {
      fmt::print("{}\n", Json{{"systems", list}}.dump(2));
    } else {
      fmt::print("{:<16} {:>4} {:>4}  {:<16} {:<10} {:<14} {:<8} {:>9}  {:>11} {:>12} {:>8} {:>5}\n", "VEHICLE", "SYS",
                 "COMP", "TYPE", "AUTOPILOT", "MODE", "ARMED", "HEARD", "LAT", "LON", "ALT m", "BATT");
      for (const auto& j : list) {
        auto text = [&](const char* k) { return j.contains(k) ? j[k].get<std::string>() : std::string("-"); };
        auto number = [&](const char* k, const char* format) {
          return j.contains(k) ? fmt::format(fmt::runtime(format), j[k].get<double>()) : std::string("-");
        };
        fmt::print("{:<16} {:>4} {:>4}  {:<16} {:<10} {:<14} {:<8} {:>8.1f}s  {:>11} {:>12} {:>8} {:>5}\n",
                   text("vehicle"), j["system"].get<int>(), j["component"].get<int>(), text("type"), text("autopilot"),
                   text("mode"), j.contains("armed") ? (j["armed"].get<bool>() ? "ARMED" : "disarmed") : "-",
                   j["heard_ms_ago"].get<double>() / 1000, number("lat", "{:.7f}"), number("lon", "{:.7f}"),
                   number("alt_m", "{:.1f}"), number("battery_percent", "{:.0f}%"));
      }
      if (list.empty()) fmt::print("no systems in the fleet state yet\n");
    }
  }
  if (js != nullptr) jsCtx_Destroy(js);
  if (nc != nullptr) natsConnection_Destroy(nc);
  if (options != nullptr) natsOptions_Destroy(options);
  return status;
}

}  // namespace mavswitch::tools
