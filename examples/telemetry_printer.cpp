// telemetry_printer: prints the attitude and position of system 1, as a ground-side program
// would, from inside the routing fabric (no router process next door).
//   telemetry_printer --udp-server 14550 [--count N]
//   telemetry_printer --udp-client 192.168.1.10:14550 [--count N]
#include <cstdio>
#include <string>

#include "endpoint_args.hpp"
#include "library/component.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/global_position_int.hpp"

using namespace mavswitch;

int main(int argc, char** argv) {
  transport::EndpointSpec link;
  int count = 0;  // 0: forever
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--count")
      count = std::stoi(argv[i + 1]);
    else if (!parse_endpoint(argv[i], argv[i + 1], link))
      return std::fprintf(stderr, "unknown option %s\n", argv[i]), 2;
  }
  if (link.port == 0)
    return std::fprintf(stderr, "usage: %s --udp-server PORT | --udp-client HOST:PORT [--count N]\n", argv[0]), 2;

  Router router;
  router.add_endpoint(link);
  router.start();
  Component gcs(router, 255, 190);  // a ground station: system 255, component 190
  gcs.start_heartbeat(6 /* MAV_TYPE_GCS */, 8 /* MAV_AUTOPILOT_INVALID */);

  int printed = 0;
  auto done = [&] {
    if (count > 0 && ++printed >= count) router.stop();
  };
  auto attitude = gcs.subscribe<msg::Attitude>(
      [&](const msg::Attitude& a, const protocol::FrameView&) {
        std::printf("ATTITUDE t=%u ms roll=%.3f pitch=%.3f yaw=%.3f rad\n", a.time_boot_ms, a.roll, a.pitch, a.yaw);
        done();
      },
      {.source_system = 1});
  auto position = gcs.subscribe<msg::GlobalPositionInt>(
      [&](const msg::GlobalPositionInt& p, const protocol::FrameView&) {
        std::printf("GLOBAL_POSITION_INT lat=%.7f lon=%.7f alt=%.2f m\n", p.lat / 1e7, p.lon / 1e7, p.alt / 1e3);
        done();
      },
      {.source_system = 1});
  router.run();  // handlers run here, on this thread
  return 0;
}
