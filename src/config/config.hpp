// What mavswitchd runs: general settings and the endpoints, as read from mavlink-router style
// INI files and the command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/log.hpp"
#include "routing/routing.hpp"
#include "transport/endpoint.hpp"

namespace mavswitch::config {

// "file:line: key: what is wrong".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class LogMode { kAlways, kWhileArmed };
enum class FlightLogFormat { kAuto, kUlog, kDataflash };  // MavlinkDialect: auto, common, ardupilotmega

// [NatsEndpoint NAME]: the fleet fabric's connection (fabric/nats_endpoint).
struct NatsSettings {
  std::vector<std::string> urls;     // Url: the cluster's servers; any of them will do
  std::string user, password;        // User, Password
  std::string token;                 // Token
  std::string credentials_file;      // CredentialsFile: a .creds file (user JWT and NKey seed)
  std::string nkey, nkey_seed_file;  // NKey (the public key) and NKeySeedFile (its seed)
  std::string ca_file;               // CaFile: TLS, the servers' certificates checked against it
  std::string certificate_file;      // CertificateFile, KeyFile: TLS client certificate
  std::string key_file;
  std::string prefix = "mavlink";                // Prefix: of every subject
  std::vector<std::string> subscribe{"from.>"};  // Subscribe: beyond what targets this router's systems
  size_t queue_bytes = 256 * 1024;               // QueueSize (bytes): waiting to be written
  size_t reconnect_buffer = 1 << 20;             // ReconnectBuffer (bytes): kept while no server is
  bool fleet_state = false;                      // FleetState: keep the latest state in JetStream
  int fleet_replicas = 1;                        // FleetStateReplicas: copies the cluster keeps
  std::string vehicle;                           // Vehicle: the vehicle this router serves; empty: none
  // Vehicles: the fleet's vehicles this router takes, in order: a name or a pattern ('*': any
  // run of name characters), and the system id it appears under (0: the first free one).
  struct VehicleChoice {
    std::string name;
    uint8_t system = 0;
  };
  std::vector<VehicleChoice> vehicles;
  // VehicleTimeout (s): a vehicle silent this long lets go of its name (another router may
  // announce it) and, when ids run short, a pattern's vehicle of its system id.
  int64_t vehicle_timeout_ms = 5000;
};

struct EndpointConfig {
  transport::EndpointSpec spec;
  routing::LinkPolicy policy;
  std::string group;
  std::shared_ptr<routing::SigningPolicy> signing;  // built from the Signing* keys
  bool signing_key_set = false;
  std::string section_type;  // "uartendpoint", "udpendpoint", "tcpendpoint"; empty from the command line
  std::string source;        // "file:line" where it was defined, or "command line"
  bool port_set = false;
  bool mode_set = false;   // [UdpEndpoint]: Mode was given
  std::string address_at;  // "file:line" of its Address key; empty: not from a file
  std::string port_at;     // "file:line" of its Port key
  std::string keys;        // every "key=value" it was given, in order: a reload compares them
  NatsSettings nats;       // [NatsEndpoint]
  std::string path;        // [WebSocketEndpoint]: its path on the HTTP server
};

// [Http]: the operator's window (daemon/http/): status page, /metrics, the JSON API.
struct HttpConfig {
  std::string address = "127.0.0.1";
  uint16_t port = 8080;           // 0: no HTTP server
  std::string token_file;         // TokenFile: the bearer token; mode 600 or stricter
  std::string certificate;        // Certificate: PEM with the key; set: HTTPS only
  bool metrics_per_link = false;  // MetricsPerLink: series per link as well as per endpoint
  bool vehicle_data = true;       // VehicleData: mavlink2rest's API (every frame kept in its tree)
  // ServerName: the names a request's Host may give besides loopback names and literal
  // addresses (lower case); any other Host is answered 421, so a DNS-rebound page gets nothing.
  std::vector<std::string> server_names;
  // MapTiles: a tile server's URL with {z}, {x} and {y} (https://tile.openstreetmap.org/{z}/{x}/{y}.png)
  // drawn under the page's mission plan; empty: the plan on its grid alone.
  std::string map_tiles;
  std::string source = "[Http]";  // where the port was set, for errors
};

// The [General] TCP server: an endpoint like a [TcpServerEndpoint] (its keys, prefixed TcpServer).
EndpointConfig default_tcp_server();

struct GeneralConfig {
  EndpointConfig tcp_server = default_tcp_server();  // Port 0: none
  bool strict = false;  // an endpoint that cannot be opened at start is fatal, not an error line
  bool report_stats = false;
  int stats_interval_s = 10;
  log::Level log_level = log::Level::kInfo;
  bool syslog = false;  // -y: log to syslog
  routing::Millis dedup_period_ms = 0;
  routing::FailoverTiming failover;  // FailoverTimeout, FailbackDelay, GroupDeduplicationWindow
  routing::Millis route_timeout_ms = 10'000;
  uint8_t sniffer_sysid = 0;
  unsigned workers = 1;     // I/O threads; 0: one per core
  std::string dialect_xml;  // empty: the built-in dialect

  std::string log_dir;  // Log
  bool log_telemetry = false;
  bool telemetry_log_flight_log_data = false;  // TelemetryLogFlightLogData
  LogMode log_mode = LogMode::kAlways;
  std::optional<uint8_t> log_system_id;
  FlightLogFormat flight_log_format = FlightLogFormat::kAuto;  // MavlinkDialect
  // MessageRates: each link gets the message rates it asks for, the autopilot the fastest
  // (rates/); false: requests pass to the autopilot as they are.
  bool message_rates = true;
  double max_stream_rate_hz = 100;  // MaxStreamRate: no wish asks an autopilot for more (0: no bound)
  uint8_t log_writer_system = 254;  // the flight log writer's own identity on the routing fabric
  uint8_t log_writer_component = 191;
  uint64_t min_free_space = 0;
  unsigned max_log_files = 0;
  uint64_t telemetry_log_max_size = 64ull << 20;  // rotate past this many bytes; 0: never
  std::string signing_state_file = "/var/lib/mavswitch/signing.state";
};

struct Config {
  GeneralConfig general;
  HttpConfig http;
  // Every endpoint the router's workers serve, [WebSocketEndpoint NAME] (a path on the HTTP
  // server, its clients served by the window's thread; spec.max_peers: MaxClients) and
  // [NatsEndpoint NAME] included: both kMade, their makers set by the window's EndpointControl.
  std::vector<EndpointConfig> endpoints;
  std::vector<std::string> warnings;  // keys accepted but not (yet) acting: said loudly at start
};

// Reads one INI file into config. Sections with the same type and name as an earlier one
// (from this file or an earlier one) update it, so a conf directory can override.
void load_config_file(const std::filesystem::path& file, Config& config);
// The same for text already in memory; `name` stands for the file in errors.
void load_config_text(std::string_view text, const std::string& name, Config& config);
// One section given as parts (a JSON body's): the same checks and keys as a file's section;
// `source` stands for the file in errors.
struct ConfigSection {
  std::string type;  // UdpEndpoint, ...
  std::string name;
  std::vector<std::pair<std::string, std::string>> keys;  // as given, in order
};
void load_config_section(const ConfigSection& section, const std::string& source, Config& config);
// Why `text` cannot be a name, key or value ("is not UTF-8", ...), or empty when it can: one line
// of printable UTF-8 of at most max_bytes.
std::string text_problem(std::string_view text, size_t max_bytes);
// Reads every *.conf file in dir, in name order.
void load_config_dir(const std::filesystem::path& dir, Config& config);

// Fills defaults that depend on the whole configuration (UDP client ports from 14550 up).
void finish_config(Config& config);

// Value parsers shared with the command line; each throws ConfigError-free std::invalid_argument.
bool parse_bool(std::string_view text, bool* out);
bool parse_uint(std::string_view text, uint64_t max, uint64_t* out);

}  // namespace mavswitch::config
