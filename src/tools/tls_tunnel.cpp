#include "tools/tls_tunnel.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace mavswitch::tools {
namespace {

constexpr int kTimeoutMs = 10'000;

int connect_to(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int e = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); e != 0)
    throw std::runtime_error(host + ": " + ::gai_strerror(e));
  int fd = -1, why = 0;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    base::set_io_timeout(fd, kTimeoutMs);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    why = errno;
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  if (fd < 0) throw std::runtime_error(std::strerror(why));
  return fd;
}

int listen_loopback(uint16_t* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 1) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error(std::string("a loopback socket: ") + std::strerror(errno));
  *port = ntohs(a.sin_port);
  return fd;
}

}  // namespace

TlsTunnel::TlsTunnel(const std::string& host, int port, const std::string& ca_file)
    : context_(SSL_CTX_new(TLS_client_method())) {
  if (!context_) throw std::runtime_error(base::tls_error());
  SSL_CTX_set_min_proto_version(context_.get(), TLS1_2_VERSION);
  SSL_CTX_set_verify(context_.get(), SSL_VERIFY_PEER, nullptr);  // a token must not go to whoever answers
  const bool loaded = ca_file.empty() ? SSL_CTX_set_default_verify_paths(context_.get()) == 1
                                      : SSL_CTX_load_verify_locations(context_.get(), ca_file.c_str(), nullptr) == 1;
  if (!loaded)
    throw std::runtime_error((ca_file.empty() ? "the system's CA bundle" : ca_file) + ": " + base::tls_error());
  tls_.reset(SSL_new(context_.get()));
  // The certificate must name what the URL says: an address as an IP entry, a name as a DNS one.
  unsigned char ip[16];
  const bool literal = ::inet_pton(AF_INET, host.c_str(), ip) == 1 || ::inet_pton(AF_INET6, host.c_str(), ip) == 1;
  X509_VERIFY_PARAM* checks = SSL_get0_param(tls_.get());
  if (literal) {
    X509_VERIFY_PARAM_set1_ip_asc(checks, host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(checks, host.c_str(), 0);
    // SNI; SSL_set_tlsext_host_name is this call behind a C cast.
    SSL_ctrl(tls_.get(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, const_cast<char*>(host.c_str()));
  }
  socket_ = connect_to(host, port);
  SSL_set_fd(tls_.get(), socket_);
  if (SSL_connect(tls_.get()) != 1) {
    const long verify = SSL_get_verify_result(tls_.get());
    const std::string why = verify != X509_V_OK ? std::string("certificate: ") + X509_verify_cert_error_string(verify)
                                                : base::tls_error("the TLS handshake failed");
    ::close(socket_);
    throw std::runtime_error(why);
  }
  try {
    listener_ = listen_loopback(&port_);
  } catch (...) {
    ::close(socket_);
    throw;
  }
  relay_ = std::thread([this] { relay_first(); });
}

TlsTunnel::~TlsTunnel() {
  stop_ = true;
  relay_.join();
  ::close(listener_);
  ::close(socket_);
}

void TlsTunnel::relay_first() {
  pollfd wait{listener_, POLLIN, 0};
  for (int waited = 0; waited < kTimeoutMs && !stop_; waited += 200) {
    if (::poll(&wait, 1, 200) <= 0) continue;
    const int plain = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (plain < 0) return;
    base::set_io_timeout(plain, kTimeoutMs);
    base::tls_relay(tls_.get(), plain, stop_);
    ::close(plain);
    return;
  }
}

}  // namespace mavswitch::tools
