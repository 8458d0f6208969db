// The subcommands of `mavswitch`. Each returns the process exit status.
#pragma once

#include <string>
#include <vector>

#include "tools/api_client.hpp"

namespace mavswitch::tools {

int run_dialect(const std::string& xml_path);

struct DumpOptions {
  std::string input;        // a file, or "-" for standard input
  std::string dialect_xml;  // empty: the built-in (generated) dialect
  bool json = false;
  bool tlog = false;  // forced; otherwise detected from a .tlog extension
};
int run_dump(const DumpOptions& options);

// The logs in a directory (telemetry and flight logs): file, kind, size, finished or not.
int run_logs(const std::string& dir, bool json);

// A running router, through its HTTP API: its links with their rates, and the systems heard.
struct StatusOptions {
  ApiTarget target;
  bool json = false;
  double interval = 1;  // seconds between the two samples rates are taken from; 0: totals
  double watch = 0;     // seconds between refreshes; 0: once
  bool rates = false;   // the message rates: what each component was asked, each link's wish
};
int run_status(const StatusOptions& options);

struct EndpointsOptions {
  ApiTarget target;
  std::string action;  // list, add, remove
  std::vector<std::string> args;
  bool json = false;
};
int run_endpoints(const EndpointsOptions& options);

// A vehicle's mission and parameters as files, through a running router's HTTP API.
struct VehicleFileOptions {
  ApiTarget target;
  int system = 1, component = 1;
  std::string action;  // mission: get, put, clear; params: save, load; files: ls, get, put, rm
  std::string file;    // "-": standard input or output
  std::string type;    // mission: mission, fence, rally (empty: all a .plan holds)
  std::string format;  // mission: plan, wpl; params: param, qgc (empty: by the file's extension)
  std::string remote;  // files: the path on the vehicle
};
int run_mission(const VehicleFileOptions& options);
int run_params(const VehicleFileOptions& options);
int run_files(const VehicleFileOptions& options);
int run_onboard_logs(const VehicleFileOptions& options);  // onboard (the list), download (`remote`: the id)  // ls
                                                          // REMOTE, get REMOTE FILE, put FILE REMOTE, rm REMOTE

// The fleet state a NATS cluster keeps (routers with FleetState): each system's latest
// HEARTBEAT, position and status.
struct FleetOptions {
  std::vector<std::string> urls{"nats://127.0.0.1:4222"};
  std::string prefix = "mavlink";
  std::string user, password, token, credentials_file, ca_file;
  bool json = false;
};
int run_fleet(const FleetOptions& options);

}  // namespace mavswitch::tools
