#include "daemon/cli.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>

#include "transport/socket_address.hpp"

namespace mavswitch::daemon {
namespace {

namespace fs = std::filesystem;
using Kind = transport::EndpointSpec::Kind;

config::EndpointConfig cli_endpoint(Kind kind, std::string name) {
  config::EndpointConfig e;
  e.spec.kind = kind;
  e.spec.name = std::move(name);
  e.source = "command line";
  e.port_set = true;
  return e;
}

// A command-line endpoint is named for what it is, so that the log, the page and /metrics say
// "udp-client:127.0.0.1:14550" rather than a position.
std::string cli_name(std::string_view kind, std::string_view what) { return fmt::format("{}:{}", kind, what); }

bool wildcard(const std::string& host) { return host.empty() || host == "0.0.0.0" || host == "::"; }

// "device[:baud]" (a path) or "host:port" (a UDP server).
config::EndpointConfig positional_endpoint(const std::string& arg) {
  if (arg.rfind("/", 0) == 0 || arg.rfind("./", 0) == 0) {
    const auto colon = arg.rfind(':');
    const std::string device = arg.substr(0, colon);
    config::EndpointConfig e = cli_endpoint(Kind::kSerial, cli_name("serial", fs::path(device).filename().string()));
    e.spec.device = device;
    if (colon != std::string::npos) {
      e.spec.bauds.clear();
      std::string list = arg.substr(colon + 1);
      size_t pos = 0;
      while (pos <= list.size()) {
        const size_t comma = std::min(list.find(',', pos), list.size());
        uint64_t baud;
        if (!config::parse_uint(list.substr(pos, comma - pos), 20'000'000, &baud) || baud == 0) {
          throw CLI::ValidationError(arg, "bad baud rate in " + arg);
        }
        e.spec.bauds.push_back(static_cast<uint32_t>(baud));
        pos = comma + 1;
      }
    }
    return e;
  }
  std::string error;
  const auto hp = transport::parse_host_port(arg, std::nullopt, &error);
  if (!hp) throw CLI::ValidationError(arg, error + " (expected /dev/device[:baud] or host:port)");
  config::EndpointConfig e =
      cli_endpoint(Kind::kUdpServer, cli_name("udp-server", wildcard(hp->host) ? std::to_string(hp->port) : arg));
  e.spec.address = hp->host;
  e.spec.port = hp->port;
  return e;
}

const char* first_existing(std::initializer_list<const char*> paths) {
  for (const char* p : paths) {
    std::error_code ec;
    if (fs::exists(p, ec)) return p;
  }
  return nullptr;
}

// Ours first, then mavlink-routerd's, so its service files work unchanged.
const char* first_env(std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (const char* v = std::getenv(n); v != nullptr && *v != '\0') return v;
  }
  return nullptr;
}

// --help and --version print and succeed; a mistake is one line and exit 2, as a config error is.
int usage_error(const CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  fmt::print(stderr, "mavswitchd: {} (see --help)\n", e.what());
  return 2;
}

}  // namespace

std::optional<CommandLine> parse_command_line(int argc, char** argv, int* exit_code) {
  CLI::App app{"mavswitchd: a MAVLink router (serial, UDP, TCP). Reads mavlink-router configuration files."};
  std::vector<std::string> positional, udp_clients, tcp_clients;
  std::optional<uint16_t> tcp_port;
  std::string http;
  std::string conf_file, conf_dir, log_dir, log_level, dialect;
  bool report = false, telemetry = false, verbose = false, to_syslog = false, version = false, no_coalesce = false,
       no_gso = false, strict = false;
  std::optional<unsigned> sniffer;
  std::optional<size_t> max_peers;
  std::optional<unsigned> workers;

  app.add_option("endpoints", positional, "Serial device (/dev/ttyX[:baud[,baud...]]) or UDP server (host:port)");
  // One value per flag, as mavlink-routerd takes them (repeat the flag for more): what follows
  // is a positional endpoint, not a second client.
  app.add_option("-e,--endpoint", udp_clients, "UDP client: host[:port], port from 14550 up by default (repeatable)")
      ->allow_extra_args(false);
  app.add_option("-p,--tcp-endpoint", tcp_clients, "TCP client: host:port, reconnects while it is down (repeatable)")
      ->allow_extra_args(false);
  app.add_option("-t,--tcp-port", tcp_port, "TCP server port (default 5760, 0 turns it off)");
  app.add_option("--http", http, "HTTP server: ADDRESS:PORT (default 127.0.0.1:8080), or 0 to turn it off");
  app.add_option("-c,--conf-file", conf_file,
                 "Configuration file (default /etc/mavswitch/main.conf, then /etc/mavlink-router/main.conf)");
  app.add_option("-d,--conf-dir", conf_dir,
                 "Directory of .conf files, read in name order (default .../config.d beside the file)");
  app.add_flag("-r,--report_msg_statistics", report, "Print traffic statistics periodically");
  app.add_option("-l,--log", log_dir, "Directory for logs");
  app.add_flag("-T,--telemetry-log", telemetry, "Write telemetry logs (.tlog) into the -l directory");
  app.add_option("-g,--debug-log-level", log_level, "error, warning, info, debug or trace (every routing decision)");
  app.add_flag("-y,--syslog", to_syslog, "Log to syslog instead of stderr");
  app.add_flag("-v,--verbose", verbose, "Same as --debug-log-level=debug");
  app.add_option("-s,--sniffer-sysid", sniffer, "System id that receives every message")->check(CLI::Range(1, 255));
  app.add_option("--dialect", dialect, "MAVLink XML dialect to validate and route with (default: built in)");
  app.add_option("--max-peers", max_peers,
                 "UDP server peers / TCP server clients per endpoint (MaxPeers, MaxClients; default 1024)")
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  app.add_option("-j,--workers", workers, "I/O threads (Workers; default 1, 0: one per core)")
      ->check(CLI::Range(0u, 1024u));
  app.add_flag("--no-coalesce", no_coalesce, "UDP: one frame per datagram on every endpoint (Coalesce = false)");
  // For the benchmarks, which measure what segmentation offload buys: not in --help.
  app.add_flag("--no-gso", no_gso, "UDP without coalescing: no segmentation offload")->group("");
  app.add_flag("--strict", strict,
               "An endpoint that cannot be opened at start (a port in use) stops the daemon (Strict = true)");
  app.add_flag("-V,--version", version, "Print the version");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exit_code = usage_error(app, e);
    return std::nullopt;
  }
  // An empty -c or -d is a mistake (an unset variable in a unit file), not "no file": starting on
  // the defaults would listen on 0.0.0.0:5760 unasked.
  for (const char* flag : {"-c", "-d"}) {
    if (app.count(flag) > 0 && (flag[1] == 'c' ? conf_file : conf_dir).empty()) {
      fmt::print(stderr, "mavswitchd: {}: an empty path (see --help)\n", flag);
      *exit_code = 2;
      return std::nullopt;
    }
  }
  CommandLine cl;
  cl.show_version = version;
  config::Config& c = cl.config;
  try {
    const char* env_file = first_env({"MAVSWITCH_CONF_FILE", "MAVLINK_ROUTERD_CONF_FILE"});
    const char* env_dir = first_env({"MAVSWITCH_CONF_DIR", "MAVLINK_ROUTERD_CONF_DIR"});
    std::string file = !conf_file.empty() ? conf_file : env_file ? env_file : "";
    std::string dir = !conf_dir.empty() ? conf_dir : env_dir ? env_dir : "";
    if (file.empty() && dir.empty()) {  // the default locations, ours first, then mavlink-router's
      if (const char* f = first_existing({"/etc/mavswitch/main.conf", "/etc/mavlink-router/main.conf"})) file = f;
      if (const char* d = first_existing({"/etc/mavswitch/config.d", "/etc/mavlink-router/config.d"})) dir = d;
    }
    if (!file.empty()) config::load_config_file(file, c);
    if (!dir.empty()) config::load_config_dir(dir, c);

    for (const auto& p : positional) c.endpoints.push_back(positional_endpoint(p));
    for (const auto& u : udp_clients) {
      std::string error;
      const auto hp = transport::parse_host_port(u, std::nullopt, &error);
      const auto host_only = hp ? hp : transport::parse_host_port(u, uint16_t{0}, &error);
      if (!host_only) throw CLI::ValidationError("-e", error);
      config::EndpointConfig e = cli_endpoint(Kind::kUdpClient, cli_name("udp-client", u));
      e.spec.address = host_only->host;
      e.spec.port = host_only->port;
      e.port_set = hp.has_value();
      c.endpoints.push_back(std::move(e));
    }
    for (const auto& t : tcp_clients) {
      std::string error;
      const auto hp = transport::parse_host_port(t, std::nullopt, &error);
      if (!hp) throw CLI::ValidationError("-p", error);
      config::EndpointConfig e = cli_endpoint(Kind::kTcpClient, cli_name("tcp-client", t));
      e.spec.address = hp->host;
      e.spec.port = hp->port;
      c.endpoints.push_back(std::move(e));
    }
    if (tcp_port) {
      c.general.tcp_server.spec.port = *tcp_port;
      c.general.tcp_server.port_at.clear();
      c.general.tcp_server.source = "TCP server (-t)";
    }
    if (http == "0" || http == "off") {
      c.http.port = 0;
    } else if (!http.empty()) {
      std::string error;
      const auto hp = transport::parse_host_port(http, std::nullopt, &error);
      if (!hp) throw CLI::ValidationError("--http", error);
      c.http.address = hp->host;
      c.http.port = hp->port;
      c.http.source = "--http";
    }
    if (report) c.general.report_stats = true;
    if (!log_dir.empty()) c.general.log_dir = log_dir;
    if (telemetry) c.general.log_telemetry = true;
    if (!log_level.empty() && !log::parse_level(log_level, &c.general.log_level)) {
      throw CLI::ValidationError("-g", "'" + log_level + "' must be error, warning, info, debug or trace");
    }
    if (verbose) c.general.log_level = log::Level::kDebug;
    if (to_syslog) c.general.syslog = true;
    if (sniffer) c.general.sniffer_sysid = static_cast<uint8_t>(*sniffer);
    if (!dialect.empty()) c.general.dialect_xml = dialect;
    if (workers) c.general.workers = *workers;
    for (auto& e : c.endpoints) {
      if (no_coalesce) e.spec.coalesce = false;
      if (no_gso) e.spec.gso = false;
      if (max_peers) e.spec.max_peers = *max_peers;
    }
    if (max_peers) c.general.tcp_server.spec.max_peers = *max_peers;
    if (strict) c.general.strict = true;
    config::finish_config(c);
  } catch (const CLI::ParseError& e) {
    *exit_code = usage_error(app, e);
    return std::nullopt;
  } catch (const config::ConfigError& e) {
    fmt::print(stderr, "mavswitchd: {}\n", e.what());
    *exit_code = 2;
    return std::nullopt;
  }
  return cl;
}

}  // namespace mavswitch::daemon
