// Requests to the window's API (window/http_api.cpp) that lack the token: any method, a path
// among the API's own (or bent, or past them), any query, headers and body. The rule they test
// is the one the window exists to keep: a change, to the router or to a vehicle, needs the
// bearer token. So whatever such a request is, it is answered with an HTTP status; the router's
// component sends only what reads send (a tap on the router sees every frame it sends); no
// change is handed to the blocking-work thread; and the endpoint list stays as it was.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "dialect/builtin.hpp"
#include "fuzz_world.hpp"
#include "library/component.hpp"
#include "mavswitch/msg/file_transfer_protocol.hpp"
#include "mavswitch/msg/log_request_data.hpp"
#include "mavswitch/msg/log_request_end.hpp"
#include "mavswitch/msg/log_request_list.hpp"
#include "mavswitch/msg/mission_request.hpp"
#include "mavswitch/msg/mission_request_int.hpp"
#include "mavswitch/msg/mission_request_list.hpp"
#include "mavswitch/msg/param_request_list.hpp"
#include "mavswitch/msg/param_request_read.hpp"
#include "services/ftp_exchange.hpp"
#include "vehicle/vehicle_data.hpp"
#include "window/endpoint_control.hpp"
#include "window/http_api.hpp"

using namespace mavswitch;
using fuzz::Input;

namespace {

constexpr const char* kToken = "fuzz-token-0123456789";
constexpr uint8_t kOwnSystem = 255, kOwnComponent = 190;

// What a read may send to a vehicle: requests for its parameters, mission, logs and files.
bool a_read_sends(const protocol::FrameView& f) {
  switch (f.msgid()) {
    case msg::ParamRequestRead::kId:
    case msg::ParamRequestList::kId:
    case msg::MissionRequestList::kId:
    case msg::MissionRequestInt::kId:
    case msg::MissionRequest::kId:
    case msg::LogRequestList::kId:
    case msg::LogRequestData::kId:
    case msg::LogRequestEnd::kId: return true;
    case msg::FileTransferProtocol::kId: {
      namespace ftp = services::ftp;
      const uint8_t op = ftp::Payload::decode(msg::FileTransferProtocol::decode(f.payload()).payload).opcode;
      return op == ftp::kTerminateSession || op == ftp::kResetSessions || op == ftp::kListDirectory ||
             op == ftp::kOpenFileRO || op == ftp::kReadFile || op == ftp::kCalcFileCrc32 || op == ftp::kBurstReadFile;
    }
    default: return false;
  }
}

struct World : fuzz::RunningRouter {
  World()
      : RunningRouter([](Router& r) {
          r.add_tap([](const protocol::FrameView& f) {
            if (f.sysid() == kOwnSystem && f.compid() == kOwnComponent && !a_read_sends(f)) std::abort();
          });
        }) {
    own = std::make_unique<Component>(router, kOwnSystem, kOwnComponent);
    data = std::make_unique<vehicle::VehicleData>(router, *own, dialect::builtin::model());
    control = std::make_unique<window::EndpointControl>(router, [] { return config::Config{}; });
    window::HttpApi::Options options;
    options.token = kToken;
    options.data = data.get();
    // A change handed to the blocking-work thread is a change made: never without the token.
    options.run_later = [](std::function<void()>) { std::abort(); };
    api = std::make_unique<window::HttpApi>(router, *control, std::move(options));
  }
  std::unique_ptr<Component> own;
  std::unique_ptr<vehicle::VehicleData> data;
  std::unique_ptr<window::EndpointControl> control;
  std::unique_ptr<window::HttpApi> api;
};

// The API's own paths, so that the fuzzer starts where the handlers are.
const char* const kPaths[] = {
    "/",
    "/metrics",
    "/info",
    "/mavlink",
    "/v1/mavlink",
    "/v1/helper/mavlink",
    "/v1/vehicles/1/1/command",
    "/v1/vehicles/1/1/parameters",
    "/v1/vehicles/1/1/parameters/RTL_ALT",
    "/v1/vehicles/1/1/parameters.param",
    "/v1/vehicles/1/1/mission",
    "/v1/vehicles/1/1/mission/current",
    "/v1/vehicles/1/1/files/APM/a.txt",
    "/v1/vehicles/1/1/logs",
    "/v1/vehicles/1/1/logs/1",
    "/api/v1/endpoints",
    "/api/v1/endpoints/udp",
    "/api/v1/links",
    "/api/v1/rates",
    "/api/v1/reload",
    "/api/v1/events",
};
const char* const kMethods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", ""};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  static World world;
  Input in(bytes, size);
  window::HttpRequest r;
  r.method = kMethods[in.byte() % std::size(kMethods)];
  r.path = std::string(kPaths[in.byte() % std::size(kPaths)]) + in.text(24);
  r.query = in.text(48);
  // No token, another, one cut short, or ours but not as a bearer: never the right one.
  switch (in.byte() % 4) {
    case 0: break;
    case 1: r.authorization = "Bearer " + in.text(32); break;
    case 2: r.authorization = std::string("Bearer ") + std::string(kToken).substr(0, in.byte() % 20); break;
    case 3: r.authorization = kToken; break;
  }
  if (r.authorization == std::string("Bearer ") + kToken) r.authorization.clear();
  if (in.byte() & 1) r.origin = in.text(32);
  if (in.byte() & 1) r.host = in.text(32);
  r.content_type = in.byte() & 1 ? "application/json" : "text/plain";
  r.range = in.text(16);
  r.body = std::string(in.rest());

  const auto endpoint_count = [&] {
    size_t n = 0;
    world.router.run_on_loop([&] { n = world.router.endpoint_count(); });
    return n;
  };
  const size_t endpoints = endpoint_count();
  window::HttpResponse answer = world.api->handle(r);
  if (answer.status < 100 || answer.status > 599) std::abort();
  // What it awaits is started, as the window would: the vehicle's answer, if any, comes later.
  if (answer.awaits)
    answer.awaits([](window::HttpResponse later) {
      if (later.status < 100 || later.status > 599) std::abort();
    });
  world.router.run_on_loop([] {});  // what it posted to the router's thread has run (and the tap seen)
  if (endpoint_count() != endpoints) std::abort();
  return 0;
}
