// mavswitch — the command line tool: inspect dialects, decode MAVLink streams and logs, and
// look at and change a running router through its HTTP API.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "tools/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"mavswitch: MAVLink tools (dialect tables, stream and tlog decoding, log directories)"};
  app.require_subcommand(1);

  std::string xml;
  auto* dialect = app.add_subcommand("dialect",
                                     "Print each message of a dialect: id name crc_extra min_len max_len "
                                     "target_system_offset target_component_offset");
  dialect->add_option("FILE.xml", xml, "MAVLink XML dialect")->required();

  mavswitch::tools::DumpOptions dump_options;
  auto* dump = app.add_subcommand("dump", "Decode a raw MAVLink stream or a .tlog, one line per frame");
  dump->add_option("--dialect", dump_options.dialect_xml,
                   "Decode with this XML dialect, loaded at run time (default: the built-in dialect)");
  dump->add_flag("--json", dump_options.json, "One JSON object per line");
  dump->add_flag("--tlog", dump_options.tlog, "Input is a telemetry log (default: when the name ends in .tlog)");
  dump->add_option("FILE", dump_options.input, "Input file, or - for standard input")->required();

  std::string logs_dir;
  bool logs_json = false;
  auto* logs = app.add_subcommand("logs",
                                  "List a log directory: each log's kind, size, and finished or still written; or a "
                                  "vehicle's onboard logs (onboard, download ID FILE)");
  logs->add_option("DIR", logs_dir, "The Log directory");
  logs->add_flag("--json", logs_json, "One JSON object per line");

  mavswitch::tools::StatusOptions status_options;
  std::string token_file;
  auto* status = app.add_subcommand("status", "A running router's links (rates, drops, loss) and the systems heard");
  status->add_option("--url", status_options.target.url, "The router's HTTP server (default http://127.0.0.1:8080)");
  status->add_flag("--json", status_options.json, "Links and systems as one JSON document");
  status->add_flag("--rates", status_options.rates,
                   "The message rates: per component and message, what it was asked and each link's wish");
  status->add_option("--interval", status_options.interval, "Seconds between the samples rates come from (0: totals)");
  status->add_option("--watch", status_options.watch, "Refresh every this many seconds, until interrupted")
      ->expected(0, 1)
      ->default_str("2");
  status->add_option("--token-file", token_file, "Bearer token (or MAVSWITCH_TOKEN_FILE)");
  status->add_option("--ca-file", status_options.target.ca_file,
                     "https: check the router's certificate against this file (default: the system's)");

  mavswitch::tools::EndpointsOptions endpoints_options;
  auto* endpoints = app.add_subcommand("endpoints", "List, add or remove a running router's endpoints");
  endpoints->add_option("ACTION", endpoints_options.action, "list | add TYPE NAME Key=Value... | remove NAME")
      ->required()
      ->check(CLI::IsMember({"list", "add", "remove"}));
  endpoints->add_option("ARGS", endpoints_options.args,
                        "For add: the section type, name and keys; for remove: the name");
  endpoints->add_option("--url", endpoints_options.target.url,
                        "The router's HTTP server (default http://127.0.0.1:8080)");
  endpoints->add_flag("--json", endpoints_options.json, "list: as JSON");
  endpoints->add_option("--token-file", token_file, "Bearer token, needed to add or remove (or MAVSWITCH_TOKEN_FILE)");
  endpoints->add_option("--ca-file", endpoints_options.target.ca_file,
                        "https: check the router's certificate against this file (default: the system's)");

  mavswitch::tools::FleetOptions fleet_options;
  auto* fleet = app.add_subcommand("fleet",
                                   "The fleet state a NATS cluster keeps: each vehicle's (by name) and "
                                   "system's latest HEARTBEAT, position and status");
  fleet->add_option("--nats", fleet_options.urls, "The cluster's servers (default nats://127.0.0.1:4222)")
      ->delimiter(',');
  fleet->add_option("--prefix", fleet_options.prefix, "The routers' subject Prefix (default mavlink)");
  fleet->add_option("--user", fleet_options.user, "NATS user");
  fleet->add_option("--password", fleet_options.password, "NATS password");
  fleet->add_option("--token", fleet_options.token, "NATS token");
  fleet->add_option("--creds", fleet_options.credentials_file, "NATS credentials file");
  fleet->add_option("--ca-file", fleet_options.ca_file, "TLS: check the servers' certificates against this file");
  fleet->add_flag("--json", fleet_options.json, "As one JSON document");

  // A vehicle's mission and parameters as files.
  mavswitch::tools::VehicleFileOptions vehicle_options;
  auto vehicle_keys = [&](CLI::App* cmd) {
    cmd->add_option("--url", vehicle_options.target.url, "The router's HTTP server (default http://127.0.0.1:8080)");
    cmd->add_option("--system", vehicle_options.system, "The vehicle's system id (default 1)")
        ->check(CLI::Range(1, 255));
    cmd->add_option("--component", vehicle_options.component, "Its component (default 1)")->check(CLI::Range(0, 255));
    cmd->add_option("--token-file", token_file, "Bearer token, needed to change the vehicle (or MAVSWITCH_TOKEN_FILE)");
    cmd->add_option("--ca-file", vehicle_options.target.ca_file,
                    "https: check the router's certificate against this file (default: the system's)");
  };
  auto* mission = app.add_subcommand(
      "mission", "A vehicle's mission, fence and rally points: get to a file, put from one, or clear");
  mission->add_option("ACTION", vehicle_options.action, "get FILE | put FILE | clear")
      ->required()
      ->check(CLI::IsMember({"get", "put", "clear"}));
  mission->add_option("FILE", vehicle_options.file,
                      "A QGroundControl .plan, or QGC WPL 110 text (.waypoints, .txt); - for standard input or output");
  mission->add_option("--type", vehicle_options.type, "Only this list: mission, fence or rally")
      ->check(CLI::IsMember({"mission", "fence", "rally"}));
  mission->add_option("--format", vehicle_options.format, "plan or wpl (default: by the file's name)")
      ->check(CLI::IsMember({"plan", "wpl"}));
  vehicle_keys(mission);
  auto* params =
      app.add_subcommand("params", "A vehicle's parameters: save to a file, or load one (each that differs is set)");
  params->add_option("ACTION", vehicle_options.action, "save FILE | load FILE")
      ->required()
      ->check(CLI::IsMember({"save", "load"}));
  params
      ->add_option("FILE", vehicle_options.file,
                   "Mission Planner's .param or QGroundControl's .params; - for standard input or output")
      ->required();
  params->add_option("--format", vehicle_options.format, "param or qgc (default: by the file's name)")
      ->check(CLI::IsMember({"param", "qgc"}));
  vehicle_keys(params);
  auto* files = app.add_subcommand("files", "A vehicle's files, by MAVFTP: list, get to a file, put from one, remove");
  files->add_option("ACTION", vehicle_options.action, "ls PATH | get PATH FILE | put FILE PATH | rm PATH")
      ->required()
      ->check(CLI::IsMember({"ls", "get", "put", "rm"}));
  std::vector<std::string> file_args;
  files->add_option("ARGS", file_args, "The vehicle's PATH (@SYS/..., or from its root) and, for get and put, the FILE")
      ->required();
  vehicle_keys(files);
  auto* onboard = logs->add_subcommand("onboard", "A vehicle's onboard logs (LOG_ENTRY): id, size, time");
  vehicle_keys(onboard);
  auto* download = logs->add_subcommand("download", "A vehicle's onboard log to a file, by MAVLink's log protocol");
  std::string log_id;
  download->add_option("ID", log_id, "The log's id (mavswitch logs onboard lists them)")
      ->required()
      ->check(CLI::Range(1, 65535));
  download->add_option("FILE", vehicle_options.file, "Where to write it (default: log-ID.bin; - for standard output)");
  vehicle_keys(download);

  CLI11_PARSE(app, argc, argv);
  if (onboard->parsed() || download->parsed()) {
    vehicle_options.action = onboard->parsed() ? "onboard" : "download";
    vehicle_options.remote = log_id;
    if (download->parsed() && vehicle_options.file.empty()) vehicle_options.file = "log-" + log_id + ".bin";
  }
  if (files->parsed()) {
    const bool two = vehicle_options.action == "get" || vehicle_options.action == "put";
    if (file_args.size() != (two ? 2u : 1u)) {
      std::fprintf(stderr, "mavswitch: files %s takes %s\n", vehicle_options.action.c_str(),
                   two ? "two arguments" : "one PATH");
      return 2;
    }
    vehicle_options.remote = vehicle_options.action == "put" ? file_args[1] : file_args[0];
    if (two) vehicle_options.file = vehicle_options.action == "put" ? file_args[0] : file_args[1];
  }
  if (logs->parsed() && !onboard->parsed() && !download->parsed() && logs_dir.empty()) {
    std::fprintf(stderr, "mavswitch: logs takes a DIR, or onboard, or download ID\n");
    return 2;
  }
  if (mission->parsed() || params->parsed() || files->parsed() || onboard->parsed() || download->parsed()) {
    std::string token, error;
    if (!mavswitch::tools::read_token(token_file, &token, &error)) {
      std::fprintf(stderr, "mavswitch: %s\n", error.c_str());
      return 2;
    }
    vehicle_options.target.token = token;
    if (mission->parsed() && vehicle_options.action != "clear" && vehicle_options.file.empty()) {
      std::fprintf(stderr, "mavswitch: mission %s needs a FILE\n", vehicle_options.action.c_str());
      return 2;
    }
    return mission->parsed()  ? mavswitch::tools::run_mission(vehicle_options)
           : params->parsed() ? mavswitch::tools::run_params(vehicle_options)
           : files->parsed()  ? mavswitch::tools::run_files(vehicle_options)
                              : mavswitch::tools::run_onboard_logs(vehicle_options);
  }
  if (fleet->parsed()) return mavswitch::tools::run_fleet(fleet_options);
  if (status->parsed() || endpoints->parsed()) {
    std::string token, error;
    if (!mavswitch::tools::read_token(token_file, &token, &error)) {
      std::fprintf(stderr, "mavswitch: %s\n", error.c_str());
      return 2;
    }
    if (status->parsed()) {
      if (status->count("--watch") > 0 && status_options.watch <= 0) status_options.watch = 2;
      status_options.target.token = token;
      return mavswitch::tools::run_status(status_options);
    }
    endpoints_options.target.token = token;
    return mavswitch::tools::run_endpoints(endpoints_options);
  }
  if (dialect->parsed()) return mavswitch::tools::run_dialect(xml);
  if (logs->parsed()) return mavswitch::tools::run_logs(logs_dir, logs_json);
  return mavswitch::tools::run_dump(dump_options);
}
