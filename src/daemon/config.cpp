#include "daemon/config.hpp"

#include "daemon/key_file.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>

namespace mavswitch::daemon {
namespace {

namespace fs = std::filesystem;
using Kind = transport::EndpointSpec::Kind;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// Where a value came from, for error messages.
struct Where {
  std::string file;
  int line;
  std::string key;
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(file + ":" + std::to_string(line) + ": " + key + ": " + what);
  }
  std::string text() const { return file + ":" + std::to_string(line); }
};

bool get_bool(const Where& w, std::string_view v) {
  bool b;
  if (!parse_bool(v, &b)) w.fail("'" + std::string(v) + "' is not a boolean (true/false, 1/0)");
  return b;
}

uint64_t get_uint(const Where& w, std::string_view v, uint64_t max) {
  uint64_t n;
  if (!parse_uint(v, max, &n)) w.fail("'" + std::string(v) + "' is not a whole number from 0 to " + std::to_string(max));
  return n;
}

template <class F>
void for_each_item(const Where& w, std::string_view list, F f) {
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string_view item = trim(list.substr(pos, comma - pos));
    if (!item.empty()) f(item);
    else if (comma < list.size()) w.fail("empty item in list '" + std::string(list) + "'");
    pos = comma + 1;
  }
}

void add_msg_ids(const Where& w, std::string_view list, routing::MessageIdSet& set) {
  for_each_item(w, list, [&](std::string_view item) { set.add(static_cast<uint32_t>(get_uint(w, item, 0xFFFFFF))); });
}
void add_bytes(const Where& w, std::string_view list, routing::ByteSet& set) {
  for_each_item(w, list, [&](std::string_view item) { set.add(static_cast<uint8_t>(get_uint(w, item, 255))); });
}

using Setter = std::function<void(const Where&, std::string_view, EndpointConfig&)>;

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

// Keys every endpoint section takes: the 12 filters, Group, and ours.
const std::map<std::string, Setter>& common_endpoint_keys() {
  static const std::map<std::string, Setter> keys = {
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
      {"allowfrom", add_ranges},
      {"signingkeyfile", [](auto& w, auto v, auto& e) {
         std::string error;
         if (!read_key_file(std::string(v), &signing_of(e).key, &error)) w.fail(error);
         e.signing_key_set = true;
       }},
      {"signing", [](auto& w, auto v, auto& e) {
         const std::string m = lower(v);
         if (m != "verify" && m != "sign" && m != "both") w.fail("'" + std::string(v) + "' must be verify, sign or both");
         signing_of(e).verify = m != "sign";
         signing_of(e).sign = m != "verify";
       }},
      {"signinglinkid", [](auto& w, auto v, auto& e) { signing_of(e).link_id = static_cast<uint8_t>(get_uint(w, v, 255)); }},
      {"allowunsignedmsgids", [](auto& w, auto v, auto& e) { add_msg_ids(w, v, signing_of(e).unsigned_allowed); }},
      {"unknownmessages", [](auto& w, auto v, auto& e) {
         const std::string m = lower(v);
         if (m != "forward" && m != "drop") w.fail("'" + std::string(v) + "' must be forward or drop");
         e.policy.drop_unknown_ids = m == "drop";
       }},
      {"queuesize", [](auto& w, auto v, auto& e) {
         const uint64_t n = get_uint(w, v, 64ull << 20);
         if (n < protocol::kMaxFrameLen) w.fail("must hold at least one frame (" + std::to_string(protocol::kMaxFrameLen) + " bytes)");
         e.spec.stream_queue_bytes = n;
         e.spec.datagram_queue_frames = std::max<size_t>(1, n / 64);
       }},
  };
  return keys;
}

const std::map<std::string, Setter>& uart_keys() {
  static const std::map<std::string, Setter> keys = {
      {"device", [](auto&, auto v, auto& e) { e.spec.device = std::string(v); }},
      {"baud", [](auto& w, auto v, auto& e) {
         e.spec.bauds.clear();
         for_each_item(w, v, [&](std::string_view b) {
           const auto baud = get_uint(w, b, 20'000'000);
           if (baud == 0) w.fail("baud rate 0");
           e.spec.bauds.push_back(static_cast<uint32_t>(baud));
         });
         if (e.spec.bauds.empty()) w.fail("no baud rate");
       }},
      {"flowcontrol", [](auto& w, auto v, auto& e) { e.spec.flow_control = get_bool(w, v); }},
  };
  return keys;
}

void set_address(const Where& w, std::string_view v, EndpointConfig& e) {
  std::string a(v);
  if (a.size() >= 2 && a.front() == '[' && a.back() == ']') a = a.substr(1, a.size() - 2);
  if (a.empty()) w.fail("empty address");
  e.spec.address = a;
}

void set_port(const Where& w, std::string_view v, EndpointConfig& e) {
  e.spec.port = static_cast<uint16_t>(get_uint(w, v, 65535));
  e.port_set = true;
}

const std::map<std::string, Setter>& udp_keys() {
  static const std::map<std::string, Setter> keys = {
      {"address", set_address},
      {"port", set_port},
      {"mode", [](auto& w, auto v, auto& e) {
         const std::string m = lower(v);
         if (m == "normal" || m == "client") e.spec.kind = Kind::kUdpClient;
         else if (m == "server" || m == "eavesdropping") e.spec.kind = Kind::kUdpServer;
         else w.fail("'" + std::string(v) + "' must be normal or server");
       }},
      {"idletimeout", [](auto& w, auto v, auto& e) { e.spec.idle_timeout = static_cast<routing::Millis>(get_uint(w, v, 86400)) * 1000; }},
      {"maxpeers", [](auto& w, auto v, auto& e) { e.spec.max_peers = std::max<size_t>(1, get_uint(w, v, 100000)); }},
      {"coalesce", [](auto& w, auto v, auto& e) { e.spec.coalesce = get_bool(w, v); }},
  };
  return keys;
}

const std::map<std::string, Setter>& tcp_server_keys() {
  static const std::map<std::string, Setter> keys = {
      {"address", set_address},
      {"port", set_port},
      {"maxclients", [](auto& w, auto v, auto& e) { e.spec.max_peers = std::max<size_t>(1, get_uint(w, v, 100000)); }},
  };
  return keys;
}

const std::map<std::string, Setter>& tcp_keys() {
  static const std::map<std::string, Setter> keys = {
      {"address", set_address},
      {"port", set_port},
      {"retrytimeout", [](auto& w, auto v, auto& e) { e.spec.retry_timeout = static_cast<routing::Millis>(get_uint(w, v, 86400)) * 1000; }},
  };
  return keys;
}

void set_general(const Where& w, const std::string& key, std::string_view v, Config& c) {
  GeneralConfig& g = c.general;
  if (key == "tcpserverport") g.tcp_server_port = static_cast<uint16_t>(get_uint(w, v, 65535));
  else if (key == "reportstats") g.report_stats = get_bool(w, v);
  else if (key == "statsinterval") g.stats_interval_s = static_cast<int>(std::max<uint64_t>(1, get_uint(w, v, 86400)));
  else if (key == "debugloglevel") {
    if (!log::parse_level(v, &g.log_level)) w.fail("'" + std::string(v) + "' must be error, warning, info or debug");
  } else if (key == "deduplicationperiod") g.dedup_period_ms = static_cast<routing::Millis>(get_uint(w, v, 3600'000));
  else if (key == "routetimeout") g.route_timeout_ms = static_cast<routing::Millis>(get_uint(w, v, 86400)) * 1000;
  else if (key == "sniffersysid") g.sniffer_sysid = static_cast<uint8_t>(get_uint(w, v, 255));
  else if (key == "workers") g.workers = static_cast<unsigned>(get_uint(w, v, 1024));
  else if (key == "peerplacement") {
    const std::string m = lower(v);
    if (m == "adaptive") g.peer_placement = transport::EndpointSpec::Placement::kAdaptive;
    else if (m == "even") g.peer_placement = transport::EndpointSpec::Placement::kEven;
    else w.fail("'" + std::string(v) + "' must be adaptive or even");
  }
  else if (key == "dialect") g.dialect_xml = std::string(v);
  else if (key == "log") g.log_dir = std::string(v);
  else if (key == "logtelemetry") g.log_telemetry = get_bool(w, v);
  else if (key == "logmode") {
    const std::string m = lower(v);
    if (m == "always") g.log_mode = LogMode::kAlways;
    else if (m == "while-armed") g.log_mode = LogMode::kWhileArmed;
    else w.fail("'" + std::string(v) + "' must be always or while-armed");
  } else if (key == "logsystemid") g.log_system_id = static_cast<uint8_t>(get_uint(w, v, 255));
  else if (key == "minfreespace") g.min_free_space = get_uint(w, v, UINT64_MAX);
  else if (key == "maxlogfiles") g.max_log_files = static_cast<unsigned>(get_uint(w, v, 1'000'000));
  else if (key == "telemetrylogmaxsize") g.telemetry_log_max_size = get_uint(w, v, UINT64_MAX);
  else if (key == "signingstatefile") g.signing_state_file = std::string(v);
  else if (key == "mavlinkdialect") {
    const std::string m = lower(v);
    if (m != "auto" && m != "common" && m != "ardupilotmega") w.fail("'" + std::string(v) + "' must be auto, common or ardupilotmega");
    c.warnings.push_back(w.text() + ": MavlinkDialect only chooses mavlink-router's flight-stack log format, which "
                                    "mavswitch does not write; frames are validated with the built-in dialect "
                                    "(or Dialect=)");
  } else {
    w.fail("unknown key in [General]");
  }
}

EndpointConfig& endpoint_for(Config& c, Kind kind, const std::string& type, const std::string& name, const Where& w) {
  for (auto& e : c.endpoints) {
    if (e.section_type == type && lower(e.spec.name) == lower(name)) return e;
  }
  EndpointConfig e;
  e.spec.kind = kind;
  e.spec.name = name;
  e.section_type = type;
  e.source = w.text();
  c.endpoints.push_back(std::move(e));
  return c.endpoints.back();
}

}  // namespace

bool parse_bool(std::string_view text, bool* out) {
  const std::string v = lower(trim(text));
  if (v == "true" || v == "1" || v == "yes" || v == "on") *out = true;
  else if (v == "false" || v == "0" || v == "no" || v == "off") *out = false;
  else return false;
  return true;
}

bool parse_uint(std::string_view text, uint64_t max, uint64_t* out) {
  text = trim(text);
  uint64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc{} || r.ptr != text.data() + text.size() || v > max) return false;
  *out = v;
  return true;
}

void load_config_file(const fs::path& file, Config& config) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file.string() + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  load_config_text(text.str(), file.string(), config);
}

void load_config_text(std::string_view text, const std::string& file_name, Config& config) {
  const fs::path file = file_name;
  std::istringstream in{std::string(text)};
  enum class Section { kNone, kGeneral, kEndpoint } section = Section::kNone;
  EndpointConfig* endpoint = nullptr;
  const std::map<std::string, Setter>* kind_keys = nullptr;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string_view l = trim(line);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    const Where here{file.string(), number, ""};
    if (l[0] == '[') {
      if (l.back() != ']') Where{file.string(), number, std::string(l)}.fail("a section header ends with ']'");
      const std::string_view inner = trim(l.substr(1, l.size() - 2));
      const auto space = inner.find_first_of(" \t");
      const std::string type = lower(inner.substr(0, space));
      const std::string name = space == std::string_view::npos ? "" : std::string(trim(inner.substr(space)));
      const Where w{file.string(), number, "[" + std::string(inner) + "]"};
      if (type == "general") {
        section = Section::kGeneral;
        endpoint = nullptr;
        continue;
      }
      if (name.empty()) w.fail("this section needs a name, as [" + std::string(inner) + " my-name]");
      if (name.find_first_of(" \t") != std::string::npos) w.fail("a section name has no blanks");
      // Each endpoint section: the kind it makes (UDP's Mode may change it) and its own keys.
      struct SectionType {
        const char* name;
        Kind kind;
        const std::map<std::string, Setter>& (*keys)();
      };
      static constexpr SectionType kTypes[] = {{"uartendpoint", Kind::kSerial, uart_keys},
                                               {"udpendpoint", Kind::kUdpClient, udp_keys},
                                               {"tcpendpoint", Kind::kTcpClient, tcp_keys},
                                               {"tcpserverendpoint", Kind::kTcpServer, tcp_server_keys}};
      const auto* t = std::find_if(std::begin(kTypes), std::end(kTypes), [&](const SectionType& st) { return type == st.name; });
      if (t == std::end(kTypes)) w.fail("unknown section type (General, UartEndpoint, UdpEndpoint, TcpEndpoint, TcpServerEndpoint)");
      section = Section::kEndpoint;
      endpoint = &endpoint_for(config, t->kind, type, name, here);
      kind_keys = &t->keys();
      continue;
    }
    const auto eq = l.find('=');
    if (eq == std::string_view::npos) Where{file.string(), number, std::string(l)}.fail("expected Key = Value");
    const std::string key = lower(trim(l.substr(0, eq)));
    const std::string_view value = trim(l.substr(eq + 1));
    const Where w{file.string(), number, std::string(trim(l.substr(0, eq)))};
    if (key.empty()) w.fail("empty key");
    switch (section) {
      case Section::kNone: w.fail("key outside of any section");
      case Section::kGeneral: set_general(w, key, value, config); break;
      default: {
        auto it = kind_keys->find(key);
        if (it == kind_keys->end()) {
          it = common_endpoint_keys().find(key);
          if (it == common_endpoint_keys().end()) w.fail("unknown key in this section");
        }
        it->second(w, value, *endpoint);
      }
    }
  }
}

void load_config_dir(const fs::path& dir, Config& config) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw ConfigError(dir.string() + ": not a directory");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".conf") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) load_config_file(f, config);
}

void finish_config(Config& config) {
  uint16_t next_udp_port = 14550;
  for (auto& e : config.endpoints) {
    const auto& s = e.spec;
    const std::string where = e.spec.name + " (" + e.source + ")";
    if (s.kind == Kind::kSerial && s.device.empty()) throw ConfigError(where + ": Device is required");
    if (s.kind == Kind::kTcpServer && s.address.empty()) e.spec.address = "::";
    if (s.kind != Kind::kSerial && s.kind != Kind::kTcpServer && s.address.empty()) throw ConfigError(where + ": Address is required");
    if (s.kind == Kind::kUdpServer && !e.port_set) throw ConfigError(where + ": Port is required in server mode");
    if ((s.kind == Kind::kTcpClient || s.kind == Kind::kTcpServer) && !e.port_set) throw ConfigError(where + ": Port is required");
    if (!s.allow_from.empty() && s.kind != Kind::kUdpServer && s.kind != Kind::kTcpServer) {
      throw ConfigError(where + ": AllowFrom applies to listening endpoints (UDP server mode, TcpServerEndpoint)");
    }
    if (e.signing && !e.signing_key_set) throw ConfigError(where + ": signing keys need SigningKeyFile");
    if (s.kind == Kind::kUdpClient && !e.port_set) e.spec.port = next_udp_port++;
  }
  const GeneralConfig& g = config.general;
  if (!g.log_dir.empty() && !g.log_telemetry) {
    config.warnings.push_back("Log is set without LogTelemetry: mavswitch does not stream flight-stack logs "
                              "(ULog/dataflash); set LogTelemetry = true for .tlog telemetry logs");
  }
  if (g.log_telemetry && g.log_dir.empty()) config.warnings.push_back("LogTelemetry needs Log = <directory>: no telemetry log will be written");
}

}  // namespace mavswitch::daemon
