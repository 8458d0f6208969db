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

namespace {

// Raw mode: no line discipline, no echo, no translation, 8 data bits, no parity, 1 stop bit.
// VMIN 1: with O_NONBLOCK an empty port reads as EAGAIN; with VMIN 0 it would read as 0 bytes,
// which is indistinguishable from a hang-up.
template <class Termios>
void make_raw(Termios& tio, bool flow_control) {
  tio.c_iflag &=
      ~static_cast<tcflag_t>(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF | IXANY);
  tio.c_oflag &= ~static_cast<tcflag_t>(OPOST);
  tio.c_lflag &= ~static_cast<tcflag_t>(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
  tio.c_cflag &= ~static_cast<tcflag_t>(CSIZE | PARENB | CSTOPB | CBAUD | CRTSCTS);
  tio.c_cflag |= CS8 | CREAD | CLOCAL;
  if (flow_control) tio.c_cflag |= CRTSCTS;
  tio.c_cc[VMIN] = 1;
  tio.c_cc[VTIME] = 0;
}

// The classic interface's code for a standard rate, or 0.
tcflag_t standard_rate(uint32_t baud) {
  static constexpr struct {
    uint32_t baud;
    tcflag_t code;
  } kRates[] = {{9600, B9600},       {19200, B19200},     {38400, B38400},     {57600, B57600},
                {115200, B115200},   {230400, B230400},   {460800, B460800},   {500000, B500000},
                {576000, B576000},   {921600, B921600},   {1000000, B1000000}, {1500000, B1500000},
                {2000000, B2000000}, {3000000, B3000000}, {4000000, B4000000}};
  for (const auto& r : kRates) {
    if (r.baud == baud) return r.code;
  }
  return 0;
}

// Where termios2 is missing (qemu-user before 8.1 answers ENOSYS): the classic ioctls, which
// take the standard rates only.
bool set_classic(int fd, uint32_t baud, bool flow_control, std::string* error) {
  const tcflag_t code = standard_rate(baud);
  termios tio{};
  if (code == 0 || ioctl(fd, TCGETS, &tio) < 0) {
    *error = code == 0 ? "baud " + std::to_string(baud) + " needs termios2, which this system lacks"
                       : std::string("TCGETS: ") + std::strerror(errno);
    return false;
  }
  make_raw(tio, flow_control);
  tio.c_cflag |= code;
  if (ioctl(fd, TCSETS, &tio) < 0) {
    *error = "baud " + std::to_string(baud) + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

bool set_serial_baud(int fd, uint32_t baud, bool flow_control, std::string* error) {
  termios2 tio{};
  if (ioctl(fd, TCGETS2, &tio) < 0) {
    if (errno == ENOSYS) return set_classic(fd, baud, flow_control, error);
    *error = std::string("TCGETS2: ") + std::strerror(errno);
    return false;
  }
  make_raw(tio, flow_control);
  tio.c_cflag |= BOTHER;
  tio.c_ispeed = baud;
  tio.c_ospeed = baud;
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
