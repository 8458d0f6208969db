// The newest RADIO_STATUS heard on a link. A telemetry radio (SiK and its kin) reports the air it
// carries about once a second, under whatever system id it borrows; what it describes is the link
// it arrived on, so it is kept per link, not per vehicle; only for links that are wires to it
// (transport::Link::Path::kWire): over the fabric it describes a radio behind another router.
#pragma once

#include <cstdint>

#include "mavswitch/msg/radio_status.hpp"

namespace mavswitch {

struct RadioReport {
  msg::RadioStatus status;  // rssi, remrssi, noise, remnoise, rxerrors, fixed, txbuf
  int64_t heard_ms = 0;     // on the worker's clock
  uint64_t reports = 0;     // RADIO_STATUS frames heard on the link
};

}  // namespace mavswitch
