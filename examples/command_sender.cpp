// command_sender: sends one COMMAND_LONG to a vehicle and waits for its COMMAND_ACK.
//   command_sender --udp-client 127.0.0.1:14550 --target 1 --command 400 --param1 1
// (MAV_CMD_COMPONENT_ARM_DISARM = 400, param1 1 = arm.) Exit status 0 when accepted.
#include <cstdio>
#include <string>
#include <thread>

#include "endpoint_args.hpp"
#include "library/component.hpp"
#include "mavswitch/msg/heartbeat.hpp"

using namespace mavswitch;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  transport::EndpointSpec link;
  uint8_t target = 1;
  uint16_t command = 0;
  std::array<float, 7> params{};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--target")
      target = static_cast<uint8_t>(std::stoi(argv[i + 1]));
    else if (flag == "--command")
      command = static_cast<uint16_t>(std::stoi(argv[i + 1]));
    else if (flag.rfind("--param", 0) == 0 && flag.size() == 8 && flag[7] >= '1' && flag[7] <= '7')
      params[flag[7] - '1'] = std::stof(argv[i + 1]);
    else if (!parse_endpoint(flag, argv[i + 1], link))
      return std::fprintf(stderr, "unknown option %s\n", argv[i]), 2;
  }
  if (link.port == 0 || command == 0) {
    return std::fprintf(stderr, "usage: %s --udp-client HOST:PORT --target SYS --command ID [--param1..7 V]\n",
                        argv[0]),
           2;
  }

  Router router;
  router.add_endpoint(link);
  router.start();
  std::thread routing([&] { router.run(); });  // the router on its own thread; we wait on ours
  router.wait_until_running();
  int status = 1;
  {
    Component gcs(router, 255, 190);
    gcs.start_heartbeat(6 /* MAV_TYPE_GCS */, 8 /* MAV_AUTOPILOT_INVALID */);
    // Be heard first, and hear the vehicle: its routes must exist before a targeted command.
    if (!gcs.wait_for<msg::Heartbeat>({.source_system = target}, nullptr, 5s)) {
      std::fprintf(stderr, "no heartbeat from system %u\n", target);
    } else if (auto ack = gcs.command(target, 0, command, params)) {
      std::printf("COMMAND_ACK command %u result %u\n", ack->command, ack->result);
      status = ack->result == 0 ? 0 : 1;
    } else {
      std::fprintf(stderr, "no COMMAND_ACK for command %u\n", command);
    }
  }
  router.stop();
  routing.join();
  return status;
}
