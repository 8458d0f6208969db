// Opening and configuring a serial port: raw 8N1, any baud rate (termios2), optional RTS/CTS,
// and the kernel's low-latency mode where the driver has one.
#pragma once

#include <cstdint>
#include <string>

namespace mavswitch::transport {

// Returns a non-blocking fd, or -1 with *error set.
int open_serial_port(const std::string& device, uint32_t baud, bool flow_control, std::string* error);
// Changes the baud rate of an open port.
bool set_serial_baud(int fd, uint32_t baud, bool flow_control, std::string* error);

}  // namespace mavswitch::transport
