// Uses the Linux termios2 interface directly (BOTHER: any baud rate, not only the Bxxxx
// constants); this file must not include <termios.h>, whose definitions collide with it.
#include "transport/serial_port.hpp"

#include <asm/termbits.h>
#include <fcntl.h>
#include <linux/serial.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mavswitch::transport {

bool set_serial_baud(int fd, uint32_t baud, bool flow_control, std::string* error) {
  termios2 tio{};
  if (ioctl(fd, TCGETS2, &tio) < 0) {
    *error = std::string("TCGETS2: ") + std::strerror(errno);
    return false;
  }
  // Raw mode: no line discipline, no echo, no translation, 8 data bits, no parity, 1 stop bit.
  tio.c_iflag &=
      ~static_cast<tcflag_t>(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF | IXANY);
  tio.c_oflag &= ~static_cast<tcflag_t>(OPOST);
  tio.c_lflag &= ~static_cast<tcflag_t>(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
  tio.c_cflag &= ~static_cast<tcflag_t>(CSIZE | PARENB | CSTOPB | CBAUD | CRTSCTS);
  tio.c_cflag |= CS8 | CREAD | CLOCAL | BOTHER;
  if (flow_control) tio.c_cflag |= CRTSCTS;
  tio.c_ispeed = baud;
  tio.c_ospeed = baud;
  // VMIN 1: with O_NONBLOCK an empty port reads as EAGAIN; with VMIN 0 it would read as 0 bytes,
  // which is indistinguishable from a hang-up.
  tio.c_cc[VMIN] = 1;
  tio.c_cc[VTIME] = 0;
  if (ioctl(fd, TCSETS2, &tio) < 0) {
    *error = "baud " + std::to_string(baud) + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

int open_serial_port(const std::string& device, uint32_t baud, bool flow_control, std::string* error) {
  const int fd = ::open(device.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *error = device + ": " + std::strerror(errno);
    return -1;
  }
  if (!set_serial_baud(fd, baud, flow_control, error)) {
    *error = device + ": " + *error;
    ::close(fd);
    return -1;
  }
  serial_struct ss{};
  if (ioctl(fd, TIOCGSERIAL, &ss) == 0) {  // UARTs and USB adapters; not ptys
    ss.flags = static_cast<int>(static_cast<unsigned>(ss.flags) | ASYNC_LOW_LATENCY);
    ioctl(fd, TIOCSSERIAL, &ss);
  }
  ioctl(fd, TCFLSH, TCIOFLUSH);  // nothing stale from before we opened it
  return fd;
}

}  // namespace mavswitch::transport
