// mavswitchd: the MAVLink router daemon. A thin main() over mavswitch::Router.
#include <fmt/format.h>

#include <sys/resource.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/log.hpp"
#include "base/log_files.hpp"
#include "build_identity.hpp"
#include "config/config.hpp"
#include "config/endpoint_policy.hpp"
#include "daemon/cli.hpp"
#include "daemon/signals.hpp"
#include "daemon/signing_state.hpp"
#include "daemon/stats_report.hpp"
#include "dialect/builtin.hpp"
#include "dialect/loader.hpp"
#include "fabric/vehicle_map.hpp"
#include "logs/flight_log.hpp"
#include "logs/telemetry_log.hpp"
#include "rates/message_rates.hpp"
#include "router/router.hpp"
#include "vehicle/vehicle_data.hpp"
#include "window/operator_window.hpp"
#include "window/vehicle_watch.hpp"

using namespace mavswitch;

namespace {

// A listener anyone can reach, with nothing checking who speaks, lets anyone command the vehicle.
void warn_if_open(const transport::EndpointSpec& spec, const routing::LinkPolicy& policy) {
  const bool listening = transport::listens(spec);
  const bool loopback = spec.address.rfind("127.", 0) == 0 || spec.address == "::1" || spec.address == "localhost";
  bool everyone = spec.allow_from.empty();
  for (const auto& r : spec.allow_from) everyone |= r.is_everything();
  const bool verified = policy.signing && policy.signing->policy().verify;
  if (listening && !loopback && everyone && !verified) {
    log::warning(
        "{} {} port {} accepts MAVLink from any address, unsigned: anyone who can reach it can command "
        "the vehicle. Restrict it (AllowFrom = ...) or require signing (SigningKeyFile = ...)",
        transport::kind_name(spec), spec.name, spec.port);
  }
}

// A fleet server holds a descriptor per TCP client: the soft limit (often 1024) goes up to the
// hard one, which the service manager sets (LimitNOFILE in the unit).
void raise_descriptor_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) getrlimit(RLIMIT_NOFILE, &rl);
  }
  log::info("file descriptors: up to {}", static_cast<uint64_t>(rl.rlim_cur));
}

std::string stats_text(Router& router, const logs::TelemetryLog* tlog, const logs::FlightLog* flight_log) {
  std::string text = daemon::format_stats(router);
  if (flight_log != nullptr) {
    const logs::FlightLogStats f = flight_log->stats();
    text += fmt::format(
        "  flight log: {} files, {} B written; {} packets, {} lost, {} again, {} NACKs sent, {} dropouts written, "
        "{} restarts ({} held back), {} write errors, {} from others dropped\n",
        f.files, f.bytes_written, f.packets, f.packets_lost, f.retransmissions, f.nacks, f.dropouts, f.restarts,
        f.restarts_held, f.write_errors, f.foreign);
  }
  if (tlog != nullptr) {
    const logs::TelemetryLogStats& t = tlog->stats();
    text += fmt::format(
        "  telemetry log: {} frames / {} B written, {} frames not written, {} flight log frames left out, paused {} "
        "times{}\n",
        t.frames_written, t.bytes_written, t.frames_lost, t.left_out, t.pauses, t.paused ? " (paused now)" : "");
  }
  return text;
}

void print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// The log writers for /metrics: bytes written and what could not be.
std::string log_metrics(const logs::TelemetryLog* tlog, const logs::FlightLog* flight_log) {
  if (tlog == nullptr && flight_log == nullptr) return "";
  std::string text =
      "# HELP mavswitch_log_written_bytes_total Bytes the log writers wrote.\n"
      "# TYPE mavswitch_log_written_bytes_total counter\n";
  if (flight_log != nullptr)
    text += fmt::format("mavswitch_log_written_bytes_total{{log=\"flight\"}} {}\n", flight_log->stats().bytes_written);
  if (tlog != nullptr)
    text += fmt::format("mavswitch_log_written_bytes_total{{log=\"telemetry\"}} {}\n", tlog->stats().bytes_written);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  int exit_code = 0;
  auto command_line = daemon::parse_command_line(argc, argv, &exit_code);
  if (!command_line) return exit_code;
  if (command_line->show_version) {
    fmt::print("mavswitchd {}\n", MAVSWITCH_VERSION);
    return 0;
  }
  config::Config& config = command_line->config;
  const config::GeneralConfig& general = config.general;
  if (general.syslog) log::use_syslog();
  log::set_level(general.log_level);
  for (const auto& w : config.warnings) log::warning("{}", w);

  raise_descriptor_limit();

  std::unique_ptr<dialect::Dialect> custom_dialect;
  protocol::MessageTable custom_table;
  RouterOptions options;
  options.route_timeout = general.route_timeout_ms;
  options.dedup_period = general.dedup_period_ms;
  options.failover = general.failover;
  options.sniffer_sysid = general.sniffer_sysid;
  options.workers = general.workers;
  if (!general.dialect_xml.empty()) {
    try {
      custom_dialect = std::make_unique<dialect::Dialect>(dialect::load_dialect(general.dialect_xml));
    } catch (const dialect::DialectError& e) {
      log::error("Dialect: {}", e.what());
      return 2;
    }
    custom_table = custom_dialect->message_table();
    options.message_table = &custom_table;
    log::info("dialect {}: {} messages", custom_dialect->name, custom_dialect->messages.size());
  }

  Router router(options);
  // The [General] TCP server is one more endpoint, first, as mavlink-routerd lists it.
  std::vector<config::EndpointConfig*> endpoints;
  if (general.tcp_server.spec.port != 0) endpoints.push_back(&config.general.tcp_server);
  for (auto& e : config.endpoints) endpoints.push_back(&e);
  // Where each endpoint the router gets was configured, to name it if it cannot be opened.
  std::vector<std::string> origin;
  bool any_signing = false;
  // The window reads the command line and the files again on SIGHUP.
  window::OperatorWindow window(router, config.http, [argc, argv] {
    int code = 0;
    auto again = daemon::parse_command_line(argc, argv, &code);
    if (!again) throw config::ConfigError("the configuration has an error (said above)");
    return std::move(again->config);
  });
  window.control().serve_websockets(config.http.port != 0);
  for (config::EndpointConfig* e : endpoints) {
    e->policy = config::policy_of(router, *e, true);
    if (!window.control().started_with(router.endpoint_count(), *e)) continue;
    any_signing |= e->signing != nullptr;
    warn_if_open(e->spec, e->policy);
    router.add_endpoint(e->spec, e->policy);
    origin.push_back(e->port_at.empty() ? e->source : e->port_at + ": Port");
  }
  if (router.endpoint_count() == 0) {
    log::error("nothing to route: no endpoints configured and the TCP server is off");
    return 2;
  }

  // A crash may have left logs writable: finished now, before any new one is opened.
  if (!general.log_dir.empty()) log_files::finish_leftovers(general.log_dir);
  std::unique_ptr<logs::FlightLog> flight_log;
  if (!general.log_dir.empty()) {  // as mavlink-router: Log = DIR captures the autopilot's own log
    logs::FlightLogOptions o;
    o.dir = general.log_dir;
    o.mode = general.log_mode;
    o.system_id = general.log_system_id;
    o.format = general.flight_log_format;
    o.writer_system = general.log_writer_system;
    o.writer_component = general.log_writer_component;
    o.max_files = general.max_log_files;
    o.min_free_space = general.min_free_space;
    flight_log = std::make_unique<logs::FlightLog>(router, o);
  }
  std::unique_ptr<logs::TelemetryLog> tlog;
  if (general.log_telemetry && !general.log_dir.empty()) {
    tlog = std::make_unique<logs::TelemetryLog>(logs::TelemetryLogOptions{
        general.log_dir, general.telemetry_log_max_size, general.max_log_files, general.min_free_space,
        general.log_mode, general.log_system_id, general.telemetry_log_flight_log_data});
    // On the router's thread, as its flush timer is: no lock.
    router.add_tap([&](const protocol::FrameView& f) { tlog->write(f); });
    router.event_loop().every(1000, [&] { tlog->tick(); });
  }
  // Replay protection across restarts: our signing clock and the streams' newest timestamps.
  auto save_state = [&] {
    std::string error;
    if (!daemon::save_signing_state(general.signing_state_file, router, &error)) {
      log::warning(
          "signing state not saved ({}): after a restart, frames signed up to a minute before it could "
          "be replayed once",
          error);
    }
  };
  if (any_signing) {
    std::string error;
    if (!daemon::load_signing_state(general.signing_state_file, router, &error)) {
      log::error("SigningStateFile: {}", error);
      return 2;
    }
    router.event_loop().every(10'000, save_state);
  }
  std::string last_stats;
  if (general.report_stats) {
    // The periodic block only when something moved since the last one (SIGUSR1 always prints).
    // (The last block lives here, not in the callback: the loop may run a copy of it.)
    router.event_loop().every(general.stats_interval_s * 1000, [&] {
      std::string text = stats_text(router, tlog.get(), flight_log.get());
      if (text == last_stats) return;
      print(text);
      last_stats = std::move(text);
    });
  }
  daemon::Signals signals(
      router.event_loop(),
      [&] {
        log::info("stopping");
        router.stop();
      },
      [&] { print(stats_text(router, tlog.get(), flight_log.get())); }, [&] { window.request_reload(); });

  // As mavlink-routerd: an endpoint that cannot be opened (a port in use) is an error line and
  // the router routes on without it, unless Strict asks for the exit; none at all is fatal.
  size_t not_opened = 0;
  auto on_start_error = [&](const Router::StartError& e) {
    log::error("{}: {}; routing on without it", origin.at(e.endpoint), e.what());
    ++not_opened;
  };
  try {
    router.start(general.strict ? Router::StartErrorFn{} : Router::StartErrorFn{on_start_error});
  } catch (const Router::StartError& e) {  // a configuration that cannot work here, as a bad line
    log::error("{}: {}", origin.at(e.endpoint), e.what());
    return 2;
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return 1;
  }
  if (router.endpoint_count() > 0 && not_opened == router.endpoint_count()) {
    log::error("no endpoint could be opened: nothing to route");
    return 2;
  }
  log::info("routing with {} I/O worker{}", router.worker_count(), router.worker_count() == 1 ? "" : "s");
  // The router's own component, beside the flight log writer (192): the vehicle watch listens
  // on it, the message rates ask with it (rates/). One component: each broadcast is delivered
  // to it once.
  Component own(router, general.log_writer_system, 192);
  const window::VehicleWatch vehicles(router, own);
  std::unique_ptr<rates::MessageRates> message_rates;
  if (general.message_rates)
    message_rates = std::make_unique<rates::MessageRates>(router, own, general.max_stream_rate_hz);
  window.add_vehicles(&vehicles);
  window.add_rates(message_rates.get());
  // mavlink2rest's API on the window: every frame the component is routed goes to its tree.
  std::unique_ptr<vehicle::VehicleData> vehicle_data;
  if (config.http.port != 0 && config.http.vehicle_data)
    vehicle_data = std::make_unique<vehicle::VehicleData>(router, own,
                                                          custom_dialect ? *custom_dialect : dialect::builtin::model());
  window.add_vehicle_data(vehicle_data.get(), {MAVSWITCH_VERSION, MAVSWITCH_SHA, MAVSWITCH_BUILD_DATE});
  window.add_own_component(own.system_id(), own.component_id(), "mavswitch: the router");
  if (flight_log)
    window.add_own_component(general.log_writer_system, general.log_writer_component, "mavswitch: flight log writer");
  window.add_metrics([&] {  // on the router's thread, where the log writers and the vehicles' state live
    std::string text = fmt::format(
        "# HELP mavswitch_build_info The running mavswitchd's version and the commit it was built from.\n"
        "# TYPE mavswitch_build_info gauge\n"
        "mavswitch_build_info{{version=\"{}\",revision=\"{}\"}} 1\n",
        MAVSWITCH_VERSION, MAVSWITCH_SHA);
    text += log_metrics(tlog.get(), flight_log.get());
    text += vehicles.metrics(router.event_loop().now());
    return text + fabric::fleet_conflict_metrics();
  });
  // The window opens once the router runs: its requests call into the router's thread, which
  // is only safe from another thread while run() is active.
  router.event_loop().post([&window] { window.start(); });
  router.run();
  window.stop();
  if (tlog) tlog->close();
  if (any_signing) save_state();
  return 0;
}
