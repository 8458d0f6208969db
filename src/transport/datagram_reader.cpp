#include "transport/datagram_reader.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <memory>

#include "transport/kernel_calls.hpp"
#include "transport/link.hpp"

namespace mavswitch::transport {
namespace {

constexpr unsigned kDatagramsPerRead = 32;
constexpr size_t kDatagramMax = 2048;  // MAVLink frames are at most 280 bytes; room for several
constexpr int kMaxBatchesPerWakeup = 8;

struct Buffers {
  uint8_t data[kDatagramsPerRead][kDatagramMax];
  sockaddr_storage from[kDatagramsPerRead];
  iovec iov[kDatagramsPerRead];
  mmsghdr msgs[kDatagramsPerRead];
};
// On the heap, made by each thread on its first read: as static thread-local storage, its
// 66 KiB would be part of every thread of the process, and threads with small stacks (the
// HTTP server's) could not be created at all.
Buffers& thread_buffers() {
  thread_local std::unique_ptr<Buffers> buffers;
  if (!buffers) buffers = std::make_unique<Buffers>();
  return *buffers;
}

}  // namespace

bool read_datagrams(int fd, LinkHost& host, DatagramFn on_datagram) {
  Buffers& b = thread_buffers();
  for (int round = 0; round < kMaxBatchesPerWakeup; ++round) {
    if (host.input_paused(fd)) return true;  // the rest waits; the loop reports it once released
    for (unsigned i = 0; i < kDatagramsPerRead; ++i) {
      b.iov[i] = {b.data[i], kDatagramMax};
      b.msgs[i] = {};
      b.msgs[i].msg_hdr.msg_iov = &b.iov[i];
      b.msgs[i].msg_hdr.msg_iovlen = 1;
      b.msgs[i].msg_hdr.msg_name = &b.from[i];
      b.msgs[i].msg_hdr.msg_namelen = sizeof b.from[i];
    }
    const int n = kernel::recvmmsg(fd, b.msgs, kDatagramsPerRead, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      // ECONNREFUSED: an ICMP "port unreachable" from an earlier send; the socket is fine.
      return errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNREFUSED;
    }
    for (int i = 0; i < n; ++i) {
      const SocketAddress from(reinterpret_cast<sockaddr*>(&b.from[i]), b.msgs[i].msg_hdr.msg_namelen);
      on_datagram({b.data[i], b.msgs[i].msg_len}, from);
    }
    if (static_cast<unsigned>(n) < kDatagramsPerRead) return true;
  }
  return true;
}

}  // namespace mavswitch::transport
