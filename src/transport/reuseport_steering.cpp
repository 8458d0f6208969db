#include "transport/reuseport_steering.hpp"

#include <linux/filter.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace mavswitch::transport {
namespace {

constexpr uint32_t kMix = 0x9E3779B1u;  // spreads keys that differ in a few bits (nearby ports)

uint32_t word(const uint8_t* p) noexcept {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 | p[3];
}

}  // namespace

uint32_t steering_key(const SocketAddress& source) noexcept {
  if (source.family() == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(source.get());
    return ntohl(a->sin_addr.s_addr) ^ ntohs(a->sin_port);
  }
  const auto* a = reinterpret_cast<const sockaddr_in6*>(source.get());
  const uint8_t* b = a->sin6_addr.s6_addr;
  const uint32_t port = ntohs(a->sin6_port);
  if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) return word(b + 12) ^ port;  // arrives as IPv4
  return word(b) ^ word(b + 4) ^ word(b + 8) ^ word(b + 12) ^ port;
}

uint32_t hashed_socket(uint32_t key, uint32_t sockets) noexcept { return ((key * kMix) >> 16) % sockets; }

bool steer_by_source(int fd, uint32_t sockets, std::span<const PlacedSource> placed) {
  if (sockets == 0 || placed.size() > kMaxPlacedSources) {
    errno = E2BIG;
    return false;
  }
  // Loads are relative to the network header (SKF_NET_OFF): the program is handed the datagram
  // from its payload on. Word and half-word loads come in host order, as steering_key() reads.
  constexpr uint32_t net = static_cast<uint32_t>(SKF_NET_OFF);
  std::vector<sock_filter> code = {
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, net + 0),   // 0: version and header length
      BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 4),        // 1
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 6, 5, 0),  // 2: IPv6 at 8
      BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, net + 0),  // 3: X = IPv4 header length
      BPF_STMT(BPF_LD | BPF_H | BPF_IND, net + 0),   // 4: source port
      BPF_STMT(BPF_MISC | BPF_TAX, 0),               // 5
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, net + 12),  // 6: source address
      BPF_JUMP(BPF_JMP | BPF_JA, 12, 0, 0),          // 7: to 20
      // 8: IPv6 source port, after the fixed header. Behind extension headers this reads other
      // bytes, the same for each of the peer's datagrams: it is not steered, and its datagrams
      // are passed on to its worker by whichever one they reach.
      BPF_STMT(BPF_LD | BPF_H | BPF_ABS, net + 40),
      BPF_STMT(BPF_MISC | BPF_TAX, 0),               // 9
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, net + 8),   // 10: the source address's four words
      BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),        // 11
      BPF_STMT(BPF_MISC | BPF_TAX, 0),               // 12
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, net + 12),  // 13
      BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),        // 14
      BPF_STMT(BPF_MISC | BPF_TAX, 0),               // 15
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, net + 16),  // 16
      BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),        // 17
      BPF_STMT(BPF_MISC | BPF_TAX, 0),               // 18
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, net + 20),  // 19
      BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),        // 20: A = the key
  };
  for (const PlacedSource& p : placed) {
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, p.key, 0, 1));
    code.push_back(BPF_STMT(BPF_RET | BPF_K, p.socket));
  }
  code.push_back(BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, kMix));
  code.push_back(BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 16));
  code.push_back(BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, sockets));
  code.push_back(BPF_STMT(BPF_RET | BPF_A, 0));
  const sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
  return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) == 0;
}

}  // namespace mavswitch::transport
