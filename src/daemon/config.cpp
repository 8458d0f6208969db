// Reading mavlink-router style INI files: sections, lines, and where each value came from.
// What each key means is in config_keys.cpp.
#include "daemon/config.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "base/file_read.hpp"
#include "daemon/config_keys.hpp"
#include "transport/socket_address.hpp"

namespace mavswitch::daemon {
namespace {

using namespace keys;
namespace fs = std::filesystem;
using Kind = transport::EndpointSpec::Kind;

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

// A section of a link the router does not read itself: [WebSocketEndpoint], [NatsEndpoint].
EndpointConfig& foreign_for(std::vector<EndpointConfig>& list, const std::string& type, const std::string& name,
                            const Where& w) {
  for (auto& e : list) {
    if (lower(e.spec.name) == lower(name)) return e;
  }
  EndpointConfig e;
  e.spec.name = name;
  e.spec.max_peers = 8;
  e.websocket_path = "/mavlink/" + name;
  e.section_type = type;
  e.source = w.text();
  list.push_back(std::move(e));
  return list.back();
}

// What every endpoint must hold once all files are read; `e` names where it was defined.
void check_endpoint(EndpointConfig& e, uint16_t& next_udp_port) {
  const auto& s = e.spec;
  const std::string where = e.spec.name + " (" + e.source + ")";
  if (s.kind == Kind::kSerial && s.device.empty()) throw ConfigError(where + ": Device is required");
  if (e.section_type == "udpendpoint" && !e.mode_set) {  // as mavlink-router: no default to guess
    throw ConfigError(e.source + ": Mode: required (Normal, a client, or Server) in [UdpEndpoint " + s.name + "]");
  }
  if (s.kind != Kind::kSerial && s.kind != Kind::kTcpServer && s.address.empty())
    throw ConfigError(where + ": Address is required");
  if (s.kind == Kind::kUdpServer && !e.port_set) throw ConfigError(where + ": Port is required in server mode");
  const bool needs_port = s.kind == Kind::kUdpServer || s.kind == Kind::kUdpClient || s.kind == Kind::kTcpClient;
  if (needs_port && e.port_set && s.port == 0) {
    throw ConfigError((e.port_at.empty() ? e.source : e.port_at) + ": Port: 0 is not a port (1 to 65535)");
  }
  // A server binds its address: a name or a malformed number is a mistake in the file, said
  // where it was written.
  if (transport::listens(s) && !s.address.empty() && !transport::SocketAddress::numeric(s.address, s.port)) {
    throw ConfigError((e.address_at.empty() ? e.source : e.address_at) + ": Address: '" + s.address +
                      "' is not a numeric address; a server listens on one of this machine's (0.0.0.0 or :: "
                      "for all of them)");
  }
  if ((s.kind == Kind::kTcpClient || s.kind == Kind::kTcpServer) && !e.port_set)
    throw ConfigError(where + ": Port is required");
  if (!s.allow_from.empty() && s.kind != Kind::kUdpServer && s.kind != Kind::kTcpServer) {
    throw ConfigError(where + ": AllowFrom applies to listening endpoints (UDP server mode, TcpServerEndpoint)");
  }
  if (e.signing && !e.signing_key_set) throw ConfigError(where + ": signing keys need SigningKeyFile");
  if (s.kind == Kind::kUdpClient && !e.port_set) e.spec.port = next_udp_port++;
}

}  // namespace

EndpointConfig default_tcp_server() {
  EndpointConfig e;
  e.spec.kind = Kind::kTcpServer;
  e.spec.name = "default";
  e.spec.port = 5760;
  e.port_set = true;
  e.source = "TCP server (TcpServerPort, -t)";
  return e;
}

bool parse_bool(std::string_view text, bool* out) {
  const std::string v = lower(trim(text));
  if (v == "true" || v == "1" || v == "yes" || v == "on")
    *out = true;
  else if (v == "false" || v == "0" || v == "no" || v == "off")
    *out = false;
  else
    return false;
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

// A mavlink-router configuration is a few KiB; this is far past any real one.
constexpr size_t kMaxConfigFile = 16u << 20;

void load_config_file(const fs::path& file, Config& config) {
  std::string error;
  const auto text = read_regular_file(file.string(), kMaxConfigFile, &error);
  if (!text) throw ConfigError(error);
  load_config_text(*text, file.string(), config);
}

void load_config_text(std::string_view text, const std::string& file_name, Config& config) {
  const fs::path file = file_name;
  std::istringstream in{std::string(text)};
  enum class Section { kNone, kGeneral, kHttp, kEndpoint } section = Section::kNone;
  EndpointConfig* endpoint = nullptr;
  const std::map<std::string, Setter>* kind_keys = nullptr;
  std::map<std::string, int> keys_seen;  // in the section being read: key -> its line
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string_view l = trim(line);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    const Where here{file.string(), number, ""};
    if (l.find('\0') != std::string_view::npos) {
      throw ConfigError(here.text() + ": a NUL byte in the line (a value would be cut at it)");
    }
    if (l[0] == '[') {
      keys_seen.clear();
      if (l.back() != ']') Where{file.string(), number, quoted(l)}.fail("a section header ends with ']'");
      const std::string_view inner = trim(l.substr(1, l.size() - 2));
      const auto space = inner.find_first_of(" \t");
      const std::string type = lower(inner.substr(0, space));
      const std::string name = space == std::string_view::npos ? "" : std::string(trim(inner.substr(space)));
      const Where w{file.string(), number, "[" + std::string(inner) + "]"};
      if (type == "general") {
        if (!name.empty()) w.fail("[General] takes no name");
        section = Section::kGeneral;
        endpoint = nullptr;
        continue;
      }
      if (type == "http") {
        if (!name.empty()) w.fail("[Http] takes no name");
        section = Section::kHttp;
        endpoint = nullptr;
        continue;
      }
      if (name.empty()) w.fail("this section needs a name, as [" + std::string(inner) + " my-name]");
      if (name.find_first_of(" \t") != std::string::npos) w.fail("a section name has no blanks");
      if (type == "websocketendpoint") {  // a path on the HTTP server, not a socket of its own
        if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
            std::string::npos)
          w.fail("a WebSocket endpoint's name is letters, digits, '-' and '_' (it is in its path)");
        section = Section::kEndpoint;
        endpoint = &foreign_for(config.websockets, type, name, here);
        kind_keys = &websocket_keys();
        continue;
      }
      if (type == "natsendpoint") {  // a connection to a NATS cluster, on libnats' threads
        section = Section::kEndpoint;
        endpoint = &foreign_for(config.fabrics, type, name, here);
        kind_keys = &nats_keys();
        continue;
      }
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
      const auto* t =
          std::find_if(std::begin(kTypes), std::end(kTypes), [&](const SectionType& st) { return type == st.name; });
      if (t == std::end(kTypes))
        w.fail(
            "unknown section type (General, Http, UartEndpoint, UdpEndpoint, TcpEndpoint, TcpServerEndpoint, "
            "WebSocketEndpoint, NatsEndpoint)");
      section = Section::kEndpoint;
      endpoint = &endpoint_for(config, t->kind, type, name, here);
      kind_keys = &t->keys();
      continue;
    }
    const auto eq = l.find('=');
    if (eq == std::string_view::npos) Where{file.string(), number, quoted(l)}.fail("expected Key = Value");
    const std::string key = lower(trim(l.substr(0, eq)));
    const std::string_view value = trim(l.substr(eq + 1));
    const Where w{file.string(), number, std::string(trim(l.substr(0, eq)))};
    if (key.empty()) w.fail("empty key");
    // Twice in one section is a mistake (which one was meant?); a later file or section of the
    // same name may change it, as a conf directory does.
    if (const auto [at, first] = keys_seen.try_emplace(key, number); !first) {
      w.fail("given twice in this section (first on line " + std::to_string(at->second) + ")");
    }
    switch (section) {
      case Section::kNone: w.fail("key outside of any section");
      case Section::kGeneral: set_general(w, key, value, config); break;
      case Section::kHttp: set_http(w, key, value, config.http); break;
      default: {
        auto it = kind_keys->find(key);
        if (it == kind_keys->end() && (kind_keys == &websocket_keys() || kind_keys == &nats_keys()))
          w.fail("unknown key in this section");
        if (it == kind_keys->end()) {
          it = common_endpoint_keys().find(key);
          if (it == common_endpoint_keys().end()) w.fail("unknown key in this section");
        }
        it->second(w, value, *endpoint);
        endpoint->keys += key + "=" + std::string(value) + "\n";
      }
    }
  }
}

void load_config_dir(const fs::path& dir, Config& config) {
  std::error_code ec;
  // As mavlink-router: a conf directory that is not there is nothing to read (its default often
  // is not), said as a warning; something else in its place is a mistake.
  if (!fs::exists(dir, ec)) {
    config.warnings.push_back(dir.string() + ": no such configuration directory; reading none");
    return;
  }
  if (!fs::is_directory(dir, ec)) throw ConfigError(dir.string() + ": not a directory");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".conf") continue;
    if (entry.is_regular_file(ec))
      files.push_back(entry.path());
    else
      config.warnings.push_back(entry.path().string() + ": not a regular file: skipped");
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) load_config_file(f, config);
}

void finish_config(Config& config) {
  uint16_t next_udp_port = 14550;
  if (config.general.tcp_server.spec.port != 0) check_endpoint(config.general.tcp_server, next_udp_port);
  for (auto& e : config.endpoints) check_endpoint(e, next_udp_port);
  for (const auto& e : config.fabrics) {
    if (e.nats.urls.empty()) throw ConfigError(e.spec.name + " (" + e.source + "): Url is required");
  }
  const GeneralConfig& g = config.general;
  config.http.websocket_clients = 0;
  for (const auto& w : config.websockets) config.http.websocket_clients += w.spec.max_peers;
  if (g.log_telemetry && g.log_dir.empty())
    config.warnings.push_back("LogTelemetry needs Log = <directory>: no telemetry log will be written");
}

}  // namespace mavswitch::daemon
