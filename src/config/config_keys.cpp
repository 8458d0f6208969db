#include "config/config_keys.hpp"

#include <algorithm>

#include "config/key_file.hpp"

namespace mavswitch::config::keys {

bool get_bool(const Where& w, std::string_view v) {
  bool b;
  if (!parse_bool(v, &b)) w.fail(quoted(v) + " is not a boolean (true/false, 1/0)");
  return b;
}

namespace {

using Kind = transport::EndpointSpec::Kind;

void add_msg_ids(const Where& w, std::string_view list, routing::MessageIdSet& set) {
  for_each_item(w, list, [&](std::string_view item) { set.add(static_cast<uint32_t>(get_uint(w, item, 0xFFFFFF))); });
}
void add_bytes(const Where& w, std::string_view list, routing::ByteSet& set) {
  for_each_item(w, list, [&](std::string_view item) { set.add(static_cast<uint8_t>(get_uint(w, item, 255))); });
}

routing::SigningPolicy& signing_of(EndpointConfig& e) {
  if (!e.signing) e.signing = std::make_shared<routing::SigningPolicy>();
  return *e.signing;
}

void add_ranges(const Where& w, std::string_view list, EndpointConfig& e) {
  for_each_item(w, list, [&](std::string_view item) {
    std::string error;
    auto range = transport::AddressRange::parse(item, &error);
    if (!range) w.fail(error);
    e.spec.allow_from.push_back(*range);
  });
}

void set_address(const Where& w, std::string_view v, EndpointConfig& e) {
  std::string a(v);
  if (a.size() >= 2 && a.front() == '[' && a.back() == ']') a = a.substr(1, a.size() - 2);
  if (a.empty()) w.fail("empty address");
  e.spec.address = a;
  e.address_at = w.text();
}

// MaxPeers of a UDP server, MaxClients of a TCP server: one limit, two names.
void set_max_peers(const Where& w, std::string_view v, EndpointConfig& e) {
  e.spec.max_peers = static_cast<size_t>(get_uint(w, v, 100000, 1));
}

void set_port(const Where& w, std::string_view v, EndpointConfig& e) {
  e.spec.port = static_cast<uint16_t>(get_uint(w, v, 65535));
  e.port_set = true;
  e.port_at = w.text();
}

}  // namespace

uint64_t get_uint(const Where& w, std::string_view v, uint64_t max, uint64_t min) {
  uint64_t n;
  if (!parse_uint(v, max, &n) || n < min) {
    w.fail(quoted(v) + " is not a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return n;
}

void for_each_item(const Where& w, std::string_view list, const std::function<void(std::string_view)>& f) {
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string_view item = trim(list.substr(pos, comma - pos));
    if (!item.empty())
      f(item);
    else if (comma < list.size())
      w.fail("empty item in list '" + std::string(list) + "'");
    pos = comma + 1;
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string quoted(std::string_view v) {
  constexpr size_t kMaxQuoted = 40;
  if (v.size() <= kMaxQuoted) return "'" + std::string(v) + "'";
  return "'" + std::string(v.substr(0, kMaxQuoted)) + "...' (" + std::to_string(v.size()) + " characters)";
}

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// Keys every endpoint section takes: the 12 filters, Group, and ours.
const std::map<std::string, Setter>& common_endpoint_keys() {
  static const std::map<std::string, Setter> keys = with_shaping_keys({
      {"allowmsgidout", [](auto& w, auto v, auto& e) { add_msg_ids(w, v, e.policy.out.allow_msg); }},
      {"filter", [](auto& w, auto v, auto& e) { add_msg_ids(w, v, e.policy.out.allow_msg); }},  // old name
      {"blockmsgidout", [](auto& w, auto v, auto& e) { add_msg_ids(w, v, e.policy.out.block_msg); }},
      {"allowsrccompout", [](auto& w, auto v, auto& e) { add_bytes(w, v, e.policy.out.allow_comp); }},
      {"blocksrccompout", [](auto& w, auto v, auto& e) { add_bytes(w, v, e.policy.out.block_comp); }},
      {"allowsrcsysout", [](auto& w, auto v, auto& e) { add_bytes(w, v, e.policy.out.allow_sys); }},
      {"blocksrcsysout", [](auto& w, auto v, auto& e) { add_bytes(w, v, e.policy.out.block_sys); }},
      {"allowmsgidin", [](auto& w, auto v, auto& e) { add_msg_ids(w, v, e.policy.in.allow_msg); }},
      {"blockmsgidin", [](auto& w, auto v, auto& e) { add_msg_ids(w, v, e.policy.in.block_msg); }},
      {"allowsrccompin", [](auto& w, auto v, auto& e) { add_bytes(w, v, e.policy.in.allow_comp); }},
      {"blocksrccompin", [](auto& w, auto v, auto& e) { add_bytes(w, v, e.policy.in.block_comp); }},
      {"allowsrcsysin", [](auto& w, auto v, auto& e) { add_bytes(w, v, e.policy.in.allow_sys); }},
      {"blocksrcsysin", [](auto& w, auto v, auto& e) { add_bytes(w, v, e.policy.in.block_sys); }},
      {"group", [](auto&, auto v, auto& e) { e.group = std::string(v); }},
      {"commands",
       [](auto& w, auto v, auto& e) {
         const std::string m = lower(v);
         if (m != "allow" && m != "deny") w.fail(quoted(v) + " must be allow or deny");
         e.policy.deny_commands = m == "deny";
       }},
      {"allowfrom", add_ranges},
      {"signingkeyfile",
       [](auto& w, auto v, auto& e) {
         std::string error;
         if (!read_key_file(std::string(v), &signing_of(e).key, &error)) w.fail(error);
         e.signing_key_set = true;
       }},
      {"signing",
       [](auto& w, auto v, auto& e) {
         const std::string m = lower(v);
         if (m != "verify" && m != "sign" && m != "both") w.fail(quoted(v) + " must be verify, sign or both");
         signing_of(e).verify = m != "sign";
         signing_of(e).sign = m != "verify";
       }},
      {"signinglinkid",
       [](auto& w, auto v, auto& e) { signing_of(e).link_id = static_cast<uint8_t>(get_uint(w, v, 255)); }},
      {"allowunsignedmsgids", [](auto& w, auto v, auto& e) { add_msg_ids(w, v, signing_of(e).unsigned_allowed); }},
      {"unknownmessages",
       [](auto& w, auto v, auto& e) {
         const std::string m = lower(v);
         if (m != "forward" && m != "drop") w.fail(quoted(v) + " must be forward or drop");
         e.policy.drop_unknown_ids = m == "drop";
       }},
      {"queuesize",
       [](auto& w, auto v, auto& e) {
         const uint64_t n = get_uint(w, v, 64ull << 20);
         if (n < protocol::kMaxFrameLen)
           w.fail("must hold at least one frame (" + std::to_string(protocol::kMaxFrameLen) + " bytes)");
         e.spec.stream_queue_bytes = static_cast<size_t>(n);  // at most 64 MiB: fits 32 bits
         e.spec.datagram_queue_frames = std::max<size_t>(1, static_cast<size_t>(n / 64));
       }},
  });
  return keys;
}

const std::map<std::string, Setter>& uart_keys() {
  static const std::map<std::string, Setter> keys = {
      {"device", [](auto&, auto v, auto& e) { e.spec.device = std::string(v); }},
      {"baud",
       [](auto& w, auto v, auto& e) {
         e.spec.bauds.clear();
         for_each_item(w, v, [&](std::string_view b) {
           // 50 is the slowest rate termios knows; 20 MBd past any USB serial adapter.
           const auto baud = get_uint(w, b, 20'000'000, 50);
           e.spec.bauds.push_back(static_cast<uint32_t>(baud));
         });
         if (e.spec.bauds.empty()) w.fail("no baud rate");
       }},
      {"flowcontrol", [](auto& w, auto v, auto& e) { e.spec.flow_control = get_bool(w, v); }},
  };
  return keys;
}

const std::map<std::string, Setter>& udp_keys() {
  static const std::map<std::string, Setter> keys = {
      {"address", set_address},
      {"port", set_port},
      {"mode",
       [](auto& w, auto v, auto& e) {
         const std::string m = lower(v);
         if (m == "normal" || m == "client")
           e.spec.kind = Kind::kUdpClient;
         else if (m == "server" || m == "eavesdropping")
           e.spec.kind = Kind::kUdpServer;
         else
           w.fail(quoted(v) + " must be normal or server");
         e.mode_set = true;
       }},
      {"idletimeout",
       [](auto& w, auto v, auto& e) {
         // 0 would keep every peer forever: a server's peers are forgotten after 1 s to a day.
         e.spec.idle_timeout = static_cast<routing::Millis>(get_uint(w, v, 86400, 1)) * 1000;
       }},
      {"maxpeers", set_max_peers},
      {"coalesce", [](auto& w, auto v, auto& e) { e.spec.coalesce = get_bool(w, v); }},
  };
  return keys;
}

void with_policy_keys(std::map<std::string, Setter>& keys) {
  for (const char* name :
       {"allowmsgidout", "blockmsgidout", "allowsrccompout", "blocksrccompout", "allowsrcsysout", "blocksrcsysout",
        "allowmsgidin", "blockmsgidin", "allowsrccompin", "blocksrccompin", "allowsrcsysin", "blocksrcsysin", "filter",
        "signingkeyfile", "signing", "signinglinkid", "allowunsignedmsgids", "unknownmessages", "commands"})
    keys.emplace(name, common_endpoint_keys().at(name));
}

const std::map<std::string, Setter>& websocket_keys() {
  static const std::map<std::string, Setter> keys = [] {
    std::map<std::string, Setter> k = with_shaping_keys({
        {"path",
         [](const Where& w, std::string_view v, EndpointConfig& e) {
           if (v.size() < 2 || v[0] != '/' || v.find_first_of(" ?#") != std::string_view::npos)
             w.fail(quoted(v) + " is not a path (as /mavlink)");
           e.path = std::string(v);
         }},
        {"maxclients", set_max_peers},
    });
    with_policy_keys(k);
    return k;
  }();
  return keys;
}

const std::map<std::string, Setter>& tcp_server_keys() {
  static const std::map<std::string, Setter> keys = {
      {"address", set_address},
      {"port", set_port},
      {"maxclients", set_max_peers},
  };
  return keys;
}

const std::map<std::string, Setter>& tcp_keys() {
  static const std::map<std::string, Setter> keys = {
      {"address", set_address},
      {"port", set_port},
      {"retrytimeout",
       [](auto& w, auto v, auto& e) {
         e.spec.retry_timeout = static_cast<routing::Millis>(get_uint(w, v, 86400)) * 1000;
       }},
  };
  return keys;
}

void set_general(const Where& w, const std::string& key, std::string_view v, Config& c) {
  GeneralConfig& g = c.general;
  constexpr std::string_view kServer = "tcpserver";  // TcpServerPort, TcpServerMaxClients, ...
  if (key.starts_with(kServer) && key.size() > kServer.size()) {
    const std::string server_key = key.substr(kServer.size());
    const auto& own = tcp_server_keys();
    const auto& common = common_endpoint_keys();
    auto it = own.find(server_key);
    if (it == own.end() && (it = common.find(server_key)) == common.end())
      w.fail("unknown key in [General] (TcpServer + a [TcpServerEndpoint] key)");
    if (server_key == "port") {  // 0 turns it off, as in mavlink-router
      g.tcp_server.spec.port = static_cast<uint16_t>(get_uint(w, v, 65535));
      g.tcp_server.port_at = g.tcp_server.source = w.text();
    } else {
      it->second(w, v, g.tcp_server);
    }
    g.tcp_server.keys += key + "=" + std::string(v) + "\n";
  } else if (key == "strict")
    g.strict = get_bool(w, v);
  else if (key == "reportstats")
    g.report_stats = get_bool(w, v);
  else if (key == "statsinterval")
    g.stats_interval_s = static_cast<int>(get_uint(w, v, 86400, 1));
  else if (key == "debugloglevel") {
    if (!log::parse_level(v, &g.log_level)) w.fail(quoted(v) + " must be error, warning, info, debug or trace");
  } else if (key == "deduplicationperiod")
    g.dedup_period_ms = static_cast<routing::Millis>(get_uint(w, v, 3600'000));
  else if (key == "failovertimeout")
    g.failover.timeout = static_cast<routing::Millis>(get_uint(w, v, 3600'000, 10));
  else if (key == "failbackdelay")
    g.failover.failback = static_cast<routing::Millis>(get_uint(w, v, 3600'000));
  else if (key == "groupdeduplicationwindow")
    g.failover.dedup_window = static_cast<routing::Millis>(get_uint(w, v, 60'000, 1));
  else if (key == "routetimeout")
    g.route_timeout_ms = static_cast<routing::Millis>(get_uint(w, v, 86400)) * 1000;
  else if (key == "sniffersysid")
    g.sniffer_sysid = static_cast<uint8_t>(get_uint(w, v, 255));
  else if (key == "workers")
    g.workers = static_cast<unsigned>(get_uint(w, v, 1024));
  else if (key == "dialect")
    g.dialect_xml = std::string(v);
  else if (key == "log")
    g.log_dir = std::string(v);
  else if (key == "logtelemetry")
    g.log_telemetry = get_bool(w, v);
  else if (key == "telemetrylogflightlogdata")
    g.telemetry_log_flight_log_data = get_bool(w, v);
  else if (key == "logmode") {
    const std::string m = lower(v);
    if (m == "always")
      g.log_mode = LogMode::kAlways;
    else if (m == "while-armed")
      g.log_mode = LogMode::kWhileArmed;
    else
      w.fail(quoted(v) + " must be always or while-armed");
  } else if (key == "logsystemid")
    g.log_system_id = static_cast<uint8_t>(get_uint(w, v, 255));
  else if (key == "minfreespace")
    g.min_free_space = get_uint(w, v, UINT64_MAX);
  else if (key == "maxlogfiles")
    g.max_log_files = static_cast<unsigned>(get_uint(w, v, 1'000'000));
  else if (key == "telemetrylogmaxsize") {
    g.telemetry_log_max_size = get_uint(w, v, UINT64_MAX);
    // Smaller would rotate every few frames: a file per frame is a mistake, not a setting.
    if (g.telemetry_log_max_size != 0 && g.telemetry_log_max_size < kMinTelemetryLogSize) {
      w.fail(quoted(v) + " is below the smallest log file, " + std::to_string(kMinTelemetryLogSize) +
             " bytes (0: never rotate)");
    }
  } else if (key == "signingstatefile")
    g.signing_state_file = std::string(v);
  else if (key == "mavlinkdialect") {
    const std::string m = lower(v);
    if (m == "auto")
      g.flight_log_format = FlightLogFormat::kAuto;
    else if (m == "common")
      g.flight_log_format = FlightLogFormat::kUlog;
    else if (m == "ardupilotmega")
      g.flight_log_format = FlightLogFormat::kDataflash;
    else
      w.fail(quoted(v) + " must be auto, common or ardupilotmega");
  } else if (key == "messagerates")
    g.message_rates = get_bool(w, v);
  else if (key == "maxstreamrate")
    g.max_stream_rate_hz = static_cast<double>(get_uint(w, v, 10'000));
  else if (key == "logwritersystemid")
    g.log_writer_system = static_cast<uint8_t>(get_uint(w, v, 255, 1));
  else if (key == "logwritercomponentid")
    g.log_writer_component = static_cast<uint8_t>(get_uint(w, v, 255, 1));
  else {
    w.fail("unknown key in [General]");
  }
}

}  // namespace mavswitch::config::keys
